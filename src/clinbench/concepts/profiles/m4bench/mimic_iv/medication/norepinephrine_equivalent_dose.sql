-- Concept: norepinephrine_equivalent_dose
-- Definition: Norepinephrine-equivalent dose (mcg/kg/min) for each vasoactive_agent interval
--   in which at least one vasopressor runs: norepinephrine + epinephrine + phenylephrine/10
--   + dopamine/100 + vasopressin (units/hour) x 2.5/60, rounded to 4 dp. Intervals with only
--   inotropes (dobutamine, milrinone) are excluded.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   medication/norepinephrine_equivalent_dose, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, starttime; not unique: vasoactive_agent repeats an interval when rows of
--   one agent overlap
-- Deviations: differs from the mimic-code profile in the rounding: the dose passes through
--   DECIMAL(18, 3) (M4's copy casts to DECIMAL without a width), so it keeps 3 places (0.130, not
--   0.1299).
SELECT
    stay_id
    , starttime
    , endtime
    , ROUND(TRY_CAST(
        COALESCE(norepinephrine, 0)
        + COALESCE(epinephrine, 0)
        + COALESCE(phenylephrine / 10, 0)
        + COALESCE(dopamine / 100, 0)
        + COALESCE(vasopressin * 2.5 / 60, 0)
    AS DECIMAL), 4) AS norepinephrine_equivalent_dose
FROM mimiciv_derived.vasoactive_agent
WHERE norepinephrine IS NOT NULL
    OR epinephrine IS NOT NULL
    OR phenylephrine IS NOT NULL
    OR dopamine IS NOT NULL
    OR vasopressin IS NOT NULL
