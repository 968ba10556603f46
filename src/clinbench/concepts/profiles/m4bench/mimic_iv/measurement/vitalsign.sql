-- Concept: vitalsign
-- Definition: Vital signs per charting time of an ICU stay, averaged over items charted at
--   the same time: heart rate (0-300), systolic/diastolic/mean blood pressure (arterial or
--   non-invasive; 0-400 systolic, 0-300 others) and their non-invasive parts, respiratory
--   rate (0-70), temperature in deg C, SpO2 (0-100], glucose (> 0). Temperature: deg F
--   (223761) kept only in (70, 120) and converted (F - 32) / 1.8; deg C (223762) kept only in
--   (10, 50); values outside are errors or typed into the wrong unit's item and become NULL;
--   both charted at one time are averaged; rounded to 2 dp.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   measurement/vitalsign, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, charttime
-- Deviations: differs from the mimic-code profile in temperature: the mean passes through
--   DECIMAL(18, 3) (M4's copy casts to DECIMAL without a width) before rounding to 2 places.
SELECT
    subject_id
    , stay_id
    , charttime
    , AVG(CAST(CASE WHEN itemid = 220045 AND valuenum > 0 AND valuenum < 300 THEN valuenum END AS DECIMAL(38, 9))) AS heart_rate
    , AVG(CAST(CASE WHEN itemid IN (220179, 220050, 225309) AND valuenum > 0 AND valuenum < 400 THEN valuenum END AS DECIMAL(38, 9))) AS sbp
    , AVG(CAST(CASE WHEN itemid IN (220180, 220051, 225310) AND valuenum > 0 AND valuenum < 300 THEN valuenum END AS DECIMAL(38, 9))) AS dbp
    , AVG(CAST(CASE WHEN itemid IN (220052, 220181, 225312) AND valuenum > 0 AND valuenum < 300 THEN valuenum END AS DECIMAL(38, 9))) AS mbp
    , AVG(CAST(CASE WHEN itemid = 220179 AND valuenum > 0 AND valuenum < 400 THEN valuenum END AS DECIMAL(38, 9))) AS sbp_ni
    , AVG(CAST(CASE WHEN itemid = 220180 AND valuenum > 0 AND valuenum < 300 THEN valuenum END AS DECIMAL(38, 9))) AS dbp_ni
    , AVG(CAST(CASE WHEN itemid = 220181 AND valuenum > 0 AND valuenum < 300 THEN valuenum END AS DECIMAL(38, 9))) AS mbp_ni
    , AVG(CAST(CASE WHEN itemid IN (220210, 224690) AND valuenum > 0 AND valuenum < 70 THEN valuenum END AS DECIMAL(38, 9))) AS resp_rate
    , ROUND(TRY_CAST(AVG(CAST(CASE
        WHEN itemid = 223761 AND valuenum > 70 AND valuenum < 120 THEN (valuenum - 32) / 1.8
        WHEN itemid = 223762 AND valuenum > 10 AND valuenum < 50 THEN valuenum
    END AS DECIMAL(38, 9))) AS DECIMAL), 2) AS temperature
    , MAX(CASE WHEN itemid = 224642 THEN value END) AS temperature_site
    , AVG(CAST(CASE WHEN itemid = 220277 AND valuenum > 0 AND valuenum <= 100 THEN valuenum END AS DECIMAL(38, 9))) AS spo2
    , AVG(CAST(CASE WHEN itemid IN (225664, 220621, 226537) AND valuenum > 0 THEN valuenum END AS DECIMAL(38, 9))) AS glucose
FROM mimiciv_icu.chartevents
WHERE stay_id IS NOT NULL
    AND itemid IN (
        220045 -- heart rate
        , 225309, 225310, 225312 -- ART BP systolic/diastolic/mean
        , 220050, 220051, 220052 -- arterial BP systolic/diastolic/mean
        , 220179, 220180, 220181 -- non-invasive BP systolic/diastolic/mean
        , 220210, 224690 -- respiratory rate, respiratory rate (total)
        , 220277 -- SpO2
        , 225664, 220621, 226537 -- glucose: finger stick, serum, whole blood
        , 223762, 223761 -- temperature Celsius, Fahrenheit
        , 224642 -- temperature site
    )
GROUP BY subject_id, stay_id, charttime
