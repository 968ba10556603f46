-- Concept: first_day_height
-- Definition: Mean charted height (cm, 2 dp) from 6 h before to 24 h after ICU admission
--   (both ends included), per ICU stay; NULL when none was charted.
-- Source: mimic-code firstday/first_day_height (MIT-LCP).
-- Grain: stay_id
-- Deviations: none.
SELECT
    ie.subject_id
    , ie.stay_id
    , ROUND(AVG(ht.height), 2) AS height
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.height AS ht
    ON ie.stay_id = ht.stay_id
        AND ht.charttime >= ie.intime - INTERVAL 6 HOUR
        AND ht.charttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
