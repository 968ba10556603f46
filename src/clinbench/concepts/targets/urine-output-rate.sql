-- Concept: urine-output-rate
-- Definition: reference output of task mimic-urine-output-rate: at each urine-output charting
--   time of a stay, the weight, the charted volume, the 6/12/24 h volumes, the hours they cover
--   and the mL/kg/h rates. A charting belongs to the window ending at time t when it was charted
--   at most 5 h (6 h window), 11 h (12 h) or 23 h (24 h) before t, in exact elapsed time; the
--   hours covered are the sum of each charting's minutes since the previous charting (the first
--   one: since the first heart-rate charting of the stay). A rate is given only once the window
--   covers 6, 12 or 24 hours; weight from weight_durations (> 0) at t. Rates are held at 3
--   decimals and hours at 2 (DuckDB's default DECIMAL, as the anchor writes it).
-- Source: measurement/urine_output_rate (mimic-code conventions); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/urine-output-rate.sql.
-- Grain: stay_id, charttime
-- Deviations: from urine_output_rate (mimic-code), the 6 and 12 h windows take chartings at
--   most 5 or 11 exact hours earlier instead of at most 5 or 11 clock-hour boundaries earlier
--   (DATE_DIFF('hour')): a charting at 10:05 is in mimic-code's 6 h window ending 15:55 (5
--   boundaries) but not here (5 h 50 min); minutes since the previous charting are exact, and
--   rates have 3 decimals instead of 4. Variant urine-output-rate__hour_boundaries uses
--   mimic-code's windows.
WITH hr AS (
    SELECT ie.stay_id, MIN(ce.charttime) AS intime_hr
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_icu.chartevents AS ce
        ON ce.stay_id = ie.stay_id AND ce.itemid = 220045
        AND ce.charttime > ie.intime - INTERVAL 1 MONTH
        AND ce.charttime < ie.outtime + INTERVAL 1 MONTH
    GROUP BY ie.stay_id
),
uo AS (
    SELECT hr.stay_id, uo.charttime, uo.urineoutput,
        DATE_DIFF('microseconds', COALESCE(LAG(uo.charttime) OVER w, hr.intime_hr), uo.charttime) / 60000000.0 AS minutes
    FROM hr
    INNER JOIN mimiciv_derived.urine_output AS uo ON uo.stay_id = hr.stay_id
    WINDOW w AS (PARTITION BY hr.stay_id ORDER BY uo.charttime NULLS FIRST)
),
windows AS (
    -- each charting sums the chartings of its stay at most 5, 11 and 23 exact hours before it
    -- (inclusive): a window over the stay's chartings in time order, not a self-join.
    SELECT stay_id, charttime, urineoutput AS uo,
        SUM(urineoutput) OVER w6 AS urineoutput_6hr,
        SUM(minutes) OVER w6 / 60.0 AS uo_tm_6hr,
        SUM(urineoutput) OVER w12 AS urineoutput_12hr,
        SUM(minutes) OVER w12 / 60.0 AS uo_tm_12hr,
        SUM(urineoutput) OVER w24 AS urineoutput_24hr,
        SUM(minutes) OVER w24 / 60.0 AS uo_tm_24hr
    FROM uo
    WINDOW
        w6 AS (PARTITION BY stay_id ORDER BY charttime
            RANGE BETWEEN INTERVAL 5 HOUR PRECEDING AND CURRENT ROW),
        w12 AS (PARTITION BY stay_id ORDER BY charttime
            RANGE BETWEEN INTERVAL 11 HOUR PRECEDING AND CURRENT ROW),
        w24 AS (PARTITION BY stay_id ORDER BY charttime RANGE BETWEEN INTERVAL 23 HOUR PRECEDING AND CURRENT ROW)
)
SELECT w.stay_id, w.charttime, wd.weight, w.uo,
    w.urineoutput_6hr, w.urineoutput_12hr, w.urineoutput_24hr,
    CASE WHEN w.uo_tm_6hr >= 6 THEN CAST(ROUND(TRY_CAST(w.urineoutput_6hr / wd.weight / w.uo_tm_6hr AS DECIMAL(18, 3)), 4) AS DOUBLE) END AS uo_mlkghr_6hr,
    CASE WHEN w.uo_tm_12hr >= 12 THEN CAST(ROUND(TRY_CAST(w.urineoutput_12hr / wd.weight / w.uo_tm_12hr AS DECIMAL(18, 3)), 4) AS DOUBLE) END AS uo_mlkghr_12hr,
    CASE WHEN w.uo_tm_24hr >= 24 THEN CAST(ROUND(TRY_CAST(w.urineoutput_24hr / wd.weight / w.uo_tm_24hr AS DECIMAL(18, 3)), 4) AS DOUBLE) END AS uo_mlkghr_24hr,
    CAST(ROUND(TRY_CAST(w.uo_tm_6hr AS DECIMAL(18, 3)), 2) AS DOUBLE) AS uo_tm_6hr,
    CAST(ROUND(TRY_CAST(w.uo_tm_12hr AS DECIMAL(18, 3)), 2) AS DOUBLE) AS uo_tm_12hr,
    CAST(ROUND(TRY_CAST(w.uo_tm_24hr AS DECIMAL(18, 3)), 2) AS DOUBLE) AS uo_tm_24hr
FROM windows AS w
LEFT JOIN mimiciv_derived.weight_durations AS wd
    ON wd.stay_id = w.stay_id
    AND w.charttime > wd.starttime
    AND w.charttime <= wd.endtime
    AND wd.weight > 0
