-- Concept: first_day_weight
-- Definition: Weight (kg) on the first ICU day: the mean, minimum and maximum of every
--   weight_durations interval that starts no later than 24 h after ICU admission, and the
--   mean admission weight. Later weights are ignored because daily weights track fluid
--   balance rather than body size.
-- Source: mimic-code firstday/first_day_weight (MIT-LCP).
-- Grain: stay_id
-- Deviations: none.
SELECT
    ie.subject_id
    , ie.stay_id
    , AVG(CAST(CASE WHEN wd.weight_type = 'admit' THEN wd.weight END AS DECIMAL(38, 9))) AS weight_admit
    , AVG(CAST(wd.weight AS DECIMAL(38, 9))) AS weight
    , MIN(wd.weight) AS weight_min
    , MAX(wd.weight) AS weight_max
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.weight_durations AS wd
    ON ie.stay_id = wd.stay_id
        AND wd.starttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
