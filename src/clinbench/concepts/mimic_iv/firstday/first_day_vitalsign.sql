-- Concept: first_day_vitalsign
-- Definition: Minimum, maximum and mean of each vital sign (heart rate, systolic/diastolic/
--   mean blood pressure, respiratory rate, temperature in deg C, SpO2, glucose) charted from
--   6 h before to 24 h after ICU admission (both ends included), per ICU stay. The mean is
--   over charting times (each already an average of items charted together).
-- Source: mimic-code firstday/first_day_vitalsign (MIT-LCP).
-- Grain: stay_id
-- Deviations: none.
SELECT
    ie.subject_id
    , ie.stay_id
    , MIN(vs.heart_rate) AS heart_rate_min, MAX(vs.heart_rate) AS heart_rate_max, AVG(CAST(vs.heart_rate AS DECIMAL(38, 9))) AS heart_rate_mean
    , MIN(vs.sbp) AS sbp_min, MAX(vs.sbp) AS sbp_max, AVG(CAST(vs.sbp AS DECIMAL(38, 9))) AS sbp_mean
    , MIN(vs.dbp) AS dbp_min, MAX(vs.dbp) AS dbp_max, AVG(CAST(vs.dbp AS DECIMAL(38, 9))) AS dbp_mean
    , MIN(vs.mbp) AS mbp_min, MAX(vs.mbp) AS mbp_max, AVG(CAST(vs.mbp AS DECIMAL(38, 9))) AS mbp_mean
    , MIN(vs.resp_rate) AS resp_rate_min, MAX(vs.resp_rate) AS resp_rate_max, AVG(CAST(vs.resp_rate AS DECIMAL(38, 9))) AS resp_rate_mean
    , MIN(vs.temperature) AS temperature_min, MAX(vs.temperature) AS temperature_max, AVG(CAST(vs.temperature AS DECIMAL(38, 9))) AS temperature_mean
    , MIN(vs.spo2) AS spo2_min, MAX(vs.spo2) AS spo2_max, AVG(CAST(vs.spo2 AS DECIMAL(38, 9))) AS spo2_mean
    , MIN(vs.glucose) AS glucose_min, MAX(vs.glucose) AS glucose_max, AVG(CAST(vs.glucose AS DECIMAL(38, 9))) AS glucose_mean
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.vitalsign AS vs
    ON ie.stay_id = vs.stay_id
        AND vs.charttime >= ie.intime - INTERVAL 6 HOUR
        AND vs.charttime <= ie.intime + INTERVAL 1 DAY
GROUP BY ie.subject_id, ie.stay_id
