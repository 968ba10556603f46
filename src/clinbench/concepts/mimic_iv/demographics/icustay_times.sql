-- Concept: icustay_times
-- Definition: For each ICU stay, the first and last heart-rate charting time
--   (chartevents itemid 220045): the "fuzzy" ICU boundaries the hourly grid is anchored on.
-- Source: mimic-code demographics/icustay_times (MIT-LCP).
-- Grain: stay_id
-- Deviations: none. A stay without heart-rate rows keeps NULL intime_hr/outtime_hr.
WITH heart_rate_span AS (
    SELECT
        stay_id
        , MIN(charttime) AS intime_hr
        , MAX(charttime) AS outtime_hr
    FROM mimiciv_icu.chartevents
    WHERE itemid = 220045 -- Heart Rate
    GROUP BY stay_id
)

SELECT
    ie.subject_id
    , ie.hadm_id
    , ie.stay_id
    , hr.intime_hr
    , hr.outtime_hr
FROM mimiciv_icu.icustays AS ie
LEFT JOIN heart_rate_span AS hr
    ON ie.stay_id = hr.stay_id
