-- Concept: urine_output_rate
-- Definition: At each urine-output charting of an ICU stay: the volume charted (uo), the volume
--   over the last 6, 12 and 24 h, and the rate in mL/kg/h. Each charting is assumed to cover the
--   time since the previous one (the first: since the first heart-rate charting of the stay, within
--   a month of the stay), in exact minutes; the "6 h" sum takes chartings at most 5 h before the
--   current one (11 h for "12 h"; 23 h for "24 h") and its covered time uo_tm_6hr is the sum of
--   those gaps in hours. A rate is given only when the covered time reaches 6 / 12 / 24 h: volume /
--   weight / covered hours. Weight: the weight_durations interval with starttime < charttime <=
--   endtime.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   measurement/urine_output_rate, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, charttime
-- Deviations: differs from the mimic-code profile, which counts hour and minute boundaries (DuckDB
--   DATE_DIFF): here gaps are exact elapsed minutes and the 6 h (12 h) sum takes the chartings at
--   most 5 (11) exact hours before the current one, so a charting at 09:10 is out of the 6 h window
--   of one at 14:50 (it is in there); covered hours are not rounded before the >= 6 / 12 / 24 h
--   tests; rates pass through DECIMAL(18, 3) (M4's copy casts to DECIMAL without a width), so they
--   keep 3 places, and covered hours are rounded to 3 places before 2. Sums are in DOUBLE, as M4's
--   copy.
WITH tm AS (
    SELECT
        ie.stay_id
        , MIN(ce.charttime) AS intime_hr
        , MAX(ce.charttime) AS outtime_hr
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_icu.chartevents AS ce
        ON ie.stay_id = ce.stay_id
            AND ce.itemid = 220045 -- heart rate
            AND ce.charttime > ie.intime - INTERVAL 1 MONTH
            AND ce.charttime < ie.outtime + INTERVAL 1 MONTH
    GROUP BY ie.stay_id
)

, uo_tm AS (
    SELECT
        tm.stay_id
        , uo.charttime
        , uo.urineoutput
        -- exact minutes since the previous charting
        , date_diff(
            'microseconds'
            , COALESCE(LAG(uo.charttime) OVER (PARTITION BY tm.stay_id ORDER BY uo.charttime), tm.intime_hr)
            , uo.charttime
        ) / 60000000.0 AS tm_since_last_uo
    FROM tm
    INNER JOIN mimiciv_derived.urine_output AS uo
        ON tm.stay_id = uo.stay_id
)

, ur_stg AS (
    -- each charting sums the chartings of its stay from 23 h before it (inclusive) for "24 h",
    -- and from exactly 5 (11) hours before it for "6 h" ("12 h")
    SELECT
        stay_id
        , charttime
        , urineoutput AS uo
        , SUM(urineoutput) OVER w6 AS urineoutput_6hr
        , SUM(tm_since_last_uo) OVER w6 / 60.0 AS uo_tm_6hr
        , SUM(urineoutput) OVER w12 AS urineoutput_12hr
        , SUM(tm_since_last_uo) OVER w12 / 60.0 AS uo_tm_12hr
        , SUM(urineoutput) OVER w24 AS urineoutput_24hr
        , SUM(tm_since_last_uo) OVER w24 / 60.0 AS uo_tm_24hr
    FROM uo_tm
    WINDOW
        w6 AS (PARTITION BY stay_id ORDER BY charttime RANGE BETWEEN INTERVAL 5 HOUR PRECEDING AND CURRENT ROW)
        , w12 AS (PARTITION BY stay_id ORDER BY charttime RANGE BETWEEN INTERVAL 11 HOUR PRECEDING AND CURRENT ROW)
        , w24 AS (PARTITION BY stay_id ORDER BY charttime RANGE BETWEEN INTERVAL 23 HOUR PRECEDING AND CURRENT ROW)
)

SELECT
    ur.stay_id
    , ur.charttime
    , wd.weight
    , ur.uo
    , ur.urineoutput_6hr
    , ur.urineoutput_12hr
    , ur.urineoutput_24hr
    , CASE WHEN ur.uo_tm_6hr >= 6 THEN ROUND(TRY_CAST(ur.urineoutput_6hr / wd.weight / ur.uo_tm_6hr AS DECIMAL), 4) END AS uo_mlkghr_6hr
    , CASE WHEN ur.uo_tm_12hr >= 12 THEN ROUND(TRY_CAST(ur.urineoutput_12hr / wd.weight / ur.uo_tm_12hr AS DECIMAL), 4) END AS uo_mlkghr_12hr
    , CASE WHEN ur.uo_tm_24hr >= 24 THEN ROUND(TRY_CAST(ur.urineoutput_24hr / wd.weight / ur.uo_tm_24hr AS DECIMAL), 4) END AS uo_mlkghr_24hr
    , ROUND(TRY_CAST(ur.uo_tm_6hr AS DECIMAL), 2) AS uo_tm_6hr
    , ROUND(TRY_CAST(ur.uo_tm_12hr AS DECIMAL), 2) AS uo_tm_12hr
    , ROUND(TRY_CAST(ur.uo_tm_24hr AS DECIMAL), 2) AS uo_tm_24hr
FROM ur_stg AS ur
LEFT JOIN mimiciv_derived.weight_durations AS wd
    ON ur.stay_id = wd.stay_id
        AND ur.charttime > wd.starttime
        AND ur.charttime <= wd.endtime
        AND wd.weight > 0
