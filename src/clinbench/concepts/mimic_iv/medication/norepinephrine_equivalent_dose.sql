-- Concept: norepinephrine_equivalent_dose
-- Definition: Norepinephrine-equivalent dose (mcg/kg/min) for each vasoactive_agent interval
--   in which at least one vasopressor runs: norepinephrine + epinephrine + phenylephrine/10
--   + dopamine/100 + vasopressin (units/hour) x 2.5/60, rounded to 4 dp. Intervals with only
--   inotropes (dobutamine, milrinone) are excluded.
-- Source: Goradia et al., "Vasopressor dose equivalence: a scoping review and suggested
--   formula", J Crit Care 2021; mimic-code medication/norepinephrine_equivalent_dose
--   (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, starttime; not unique: vasoactive_agent repeats an interval when rows of
--   one agent overlap
-- Deviations: none (rounding goes through DECIMAL(38,9), as the public DuckDB build).
--   Task reference vasopressor-equivalents keeps one row per interval (the larger dose).
SELECT
    stay_id
    , starttime
    , endtime
    , CAST(ROUND(CAST(
        COALESCE(norepinephrine, 0)
        + COALESCE(epinephrine, 0)
        + COALESCE(phenylephrine / 10, 0)
        + COALESCE(dopamine / 100, 0)
        + COALESCE(vasopressin * 2.5 / 60, 0)
    AS DECIMAL(38, 9)), 4) AS DOUBLE) AS norepinephrine_equivalent_dose
FROM mimiciv_derived.vasoactive_agent
WHERE norepinephrine IS NOT NULL
    OR epinephrine IS NOT NULL
    OR phenylephrine IS NOT NULL
    OR dopamine IS NOT NULL
    OR vasopressin IS NOT NULL
