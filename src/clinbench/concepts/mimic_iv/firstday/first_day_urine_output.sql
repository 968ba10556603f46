-- Concept: first_day_urine_output
-- Definition: Total urine output (mL, irrigant-corrected, see urine_output) from ICU
--   admission to 24 h after it (both ends included), per ICU stay; NULL when none charted.
-- Source: mimic-code firstday/first_day_urine_output (MIT-LCP).
-- Grain: stay_id
-- Deviations: none. Unlike the other first-day concepts the window starts at intime, not 6 h
--   before it (public convention).
SELECT
    ie.subject_id
    , ie.stay_id
    , CAST(SUM(CAST(uo.urineoutput AS DECIMAL(38, 9))) AS DOUBLE) AS urineoutput
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.urine_output AS uo
    ON ie.stay_id = uo.stay_id
        AND uo.charttime >= ie.intime
        AND uo.charttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
