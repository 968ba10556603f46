-- Concept: vasopressor-equivalents
-- Definition: reference output of task mimic-vasopressor-equivalents: one row per interval of
--   vasoactive_agent in which at least one vasopressor runs, with the norepinephrine-equivalent
--   dose (norepinephrine + epinephrine + phenylephrine/10 + dopamine/100 + vasopressin x 2.5/60,
--   vasopressin in units/h; mcg/kg/min) held at 3 decimals (DuckDB's default DECIMAL, as the
--   anchor writes it); inotrope-only intervals excluded; intervals listed twice with the same
--   start and end keep the larger dose.
-- Source: medication/norepinephrine_equivalent_dose (Goradia et al., J Crit Care 2021); the
--   anchor is M4Bench 0.5.3 benchmark/ground_truth/vasopressor-equivalents.sql.
-- Grain: stay_id, starttime
-- Deviations: from norepinephrine_equivalent_dose (mimic-code: 4 decimals, one row per
--   vasoactive_agent row), the dose has 3 decimals and rows with the same stay, start and end
--   are collapsed to the larger dose.
SELECT stay_id, starttime, endtime,
    CAST(MAX(ROUND(TRY_CAST(COALESCE(norepinephrine, 0) + COALESCE(epinephrine, 0)
        + COALESCE(phenylephrine / 10, 0) + COALESCE(dopamine / 100, 0)
        + COALESCE(vasopressin * 2.5 / 60, 0) AS DECIMAL(18, 3)), 4)) AS DOUBLE) AS norepinephrine_equivalent_dose
FROM mimiciv_derived.vasoactive_agent
WHERE norepinephrine IS NOT NULL OR epinephrine IS NOT NULL OR phenylephrine IS NOT NULL
    OR dopamine IS NOT NULL OR vasopressin IS NOT NULL
GROUP BY stay_id, starttime, endtime
