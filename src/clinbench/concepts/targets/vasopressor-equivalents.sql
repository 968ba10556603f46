-- Concept: vasopressor-equivalents
-- Definition: reference output of task mimic-vasopressor-equivalents: one row per interval in
--   which at least one vasopressor runs, with the norepinephrine-equivalent dose
--   (norepinephrine + epinephrine + phenylephrine/10 + dopamine/100 + vasopressin x 2.5/60,
--   vasopressin in units/h; mcg/kg/min) rounded to 4 places; inotrope-only intervals excluded.
-- Source: medication/norepinephrine_equivalent_dose (Goradia et al., J Crit Care 2021).
-- Grain: stay_id, starttime
-- Deviations: none.
SELECT stay_id, starttime, endtime,
    ROUND(norepinephrine_equivalent_dose, 4) AS norepinephrine_equivalent_dose
FROM mimiciv_derived.norepinephrine_equivalent_dose
WHERE norepinephrine_equivalent_dose IS NOT NULL
