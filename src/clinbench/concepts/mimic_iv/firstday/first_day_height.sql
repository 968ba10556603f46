-- Concept: first_day_height
-- Definition: Mean charted height (cm, 2 dp) from 6 h before to 24 h after ICU admission
--   (both ends included), per ICU stay; NULL when none was charted.
-- Source: mimic-code firstday/first_day_height (MIT-LCP).
-- Grain: stay_id
-- Deviations: none.
SELECT
    ie.subject_id
    , ie.stay_id
    -- round through DECIMAL as the public build does: a DOUBLE mean of 150.00 and 150.01
    -- is 150.004999... and would round down to 150.00 instead of 150.01
    , CAST(ROUND(CAST(AVG(CAST(ht.height AS DECIMAL(38, 9))) AS DECIMAL(38, 9)), 2) AS DOUBLE) AS height
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.height AS ht
    ON ie.stay_id = ht.stay_id
        AND ht.charttime >= ie.intime - INTERVAL 6 HOUR
        AND ht.charttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
