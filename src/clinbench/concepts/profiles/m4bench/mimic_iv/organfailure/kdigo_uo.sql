-- Concept: kdigo_uo
-- Definition: at each urine-output charting time, the urine volume of the preceding 6, 12 and
--   24 hours, the hours those charts cover, and the weight-normalised rates (mL/kg/h) used by
--   the KDIGO urine-output criteria.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   organfailure/kdigo_uo, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, charttime
-- Deviations: differs from the mimic-code profile in three ways: the covered hours are not rounded
--   to 6 places before the >= 6 / 12 / 24 h tests (gaps that add up to 5.99999999 h in binary
--   floating point do not make a 6 h window); the rates pass through DECIMAL(18, 3) (M4's copy
--   casts to DECIMAL without a width), so they keep 3 places (1.740, not 1.7401); and the weight is
--   weight_durations' as charted (REAL), not rounded to 3 places.
WITH uo AS (
    SELECT ie.stay_id, uo.charttime, uo.urineoutput,
        date_diff('second', ie.intime, uo.charttime) AS seconds_since_admit,
        COALESCE(
            date_diff('second', LAG(uo.charttime) OVER (PARTITION BY ie.stay_id ORDER BY uo.charttime), uo.charttime) / 3600.0,
            1
        ) AS hours_since_previous_row
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.urine_output AS uo ON uo.stay_id = ie.stay_id
),
sums AS (
    SELECT stay_id, charttime,
        SUM(urineoutput) OVER w6 AS urineoutput_6hr,
        SUM(urineoutput) OVER w12 AS urineoutput_12hr,
        SUM(urineoutput) OVER w24 AS urineoutput_24hr,
        SUM(hours_since_previous_row) OVER w6 AS uo_tm_6hr,
        SUM(hours_since_previous_row) OVER w12 AS uo_tm_12hr,
        SUM(hours_since_previous_row) OVER w24 AS uo_tm_24hr
    FROM uo
    WINDOW
        w6 AS (PARTITION BY stay_id ORDER BY seconds_since_admit RANGE BETWEEN 21600 PRECEDING AND CURRENT ROW),
        w12 AS (PARTITION BY stay_id ORDER BY seconds_since_admit RANGE BETWEEN 43200 PRECEDING AND CURRENT ROW),
        w24 AS (PARTITION BY stay_id ORDER BY seconds_since_admit RANGE BETWEEN 86400 PRECEDING AND CURRENT ROW)
)
SELECT s.stay_id, s.charttime, wd.weight,
    s.urineoutput_6hr, s.urineoutput_12hr, s.urineoutput_24hr,
    -- a 6 h rate only while the covered time is 6-12 h: longer gaps are not a 6 h observation
    CASE WHEN s.uo_tm_6hr >= 6 AND s.uo_tm_6hr < 12
        THEN ROUND(TRY_CAST(s.urineoutput_6hr / wd.weight / s.uo_tm_6hr AS DECIMAL), 4) END AS uo_rt_6hr,
    CASE WHEN s.uo_tm_12hr >= 12
        THEN ROUND(TRY_CAST(s.urineoutput_12hr / wd.weight / s.uo_tm_12hr AS DECIMAL), 4) END AS uo_rt_12hr,
    CASE WHEN s.uo_tm_24hr >= 24
        THEN ROUND(TRY_CAST(s.urineoutput_24hr / wd.weight / s.uo_tm_24hr AS DECIMAL), 4) END AS uo_rt_24hr,
    s.uo_tm_6hr, s.uo_tm_12hr, s.uo_tm_24hr
FROM sums AS s
LEFT JOIN mimiciv_derived.weight_durations AS wd
    ON wd.stay_id = s.stay_id
    AND s.charttime >= wd.starttime
    AND s.charttime < wd.endtime
