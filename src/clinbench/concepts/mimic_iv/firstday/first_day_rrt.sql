-- Concept: first_day_rrt
-- Definition: Whether renal replacement therapy was documented (dialysis_present) or running
--   (dialysis_active) from 6 h before to 24 h after ICU admission (both ends included), and
--   the distinct dialysis types seen, comma-separated in alphabetical order, per ICU stay.
-- Source: mimic-code firstday/first_day_rrt (MIT-LCP).
-- Grain: stay_id
-- Deviations: none.
SELECT
    ie.subject_id
    , ie.stay_id
    , MAX(rrt.dialysis_present) AS dialysis_present
    , MAX(rrt.dialysis_active) AS dialysis_active
    , string_agg(DISTINCT rrt.dialysis_type, ', ' ORDER BY rrt.dialysis_type) AS dialysis_type
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.rrt AS rrt
    ON ie.stay_id = rrt.stay_id
        AND rrt.charttime >= ie.intime - INTERVAL 6 HOUR
        AND rrt.charttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
