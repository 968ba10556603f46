-- Concept: first_day_height
-- Definition: Mean charted height (cm, 2 dp) from 6 h before to 24 h after ICU admission
--   (both ends included), per ICU stay; NULL when none was charted.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   firstday/first_day_height, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id
-- Deviations: differs from the mimic-code profile in the rounding: the mean passes through
--   DECIMAL(18, 3) (M4's copy casts to DECIMAL without a width), so it is rounded to 3 places
--   before it is rounded to 2.
SELECT
    ie.subject_id
    , ie.stay_id
    , ROUND(TRY_CAST(AVG(ht.height) AS DECIMAL), 2) AS height
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.height AS ht
    ON ie.stay_id = ht.stay_id
        AND ht.charttime >= ie.intime - INTERVAL 6 HOUR
        AND ht.charttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
