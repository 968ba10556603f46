-- Concept: kdigo_uo
-- Definition: at each urine-output charting time, the urine volume of the preceding 6, 12 and
--   24 hours, the hours those charts cover, and the weight-normalised rates (mL/kg/h) used by
--   the KDIGO urine-output criteria.
-- Source: KDIGO AKI guideline (2012); MIT-LCP mimic-code organfailure/kdigo_uo (windows include
--   both ends, covered time = sum of gaps since the previous chart, first gap counted as 1 h,
--   weight from weight_durations with starttime <= t < endtime; covered hours rounded to 6
--   places before the ">= 6 / 12 / 24 h" tests, so short gaps that add up to 6 h in binary
--   floating point as 5.99999999 h still make a 6 h window, as in the current public code).
--   Covered hours and rates go through DECIMAL(38, 9) before rounding to 6 and 4 places, and
--   the weight through DECIMAL(38, 3), as the public DuckDB build's types do.
--   Pinned to mimic-code commit 8bcbd190 (concepts_duckdb).
-- Grain: stay_id, charttime
-- Deviations: none. Rewritten for speed with identical rows: covered hours are rounded in
--   DECIMAL(18, 9) (64-bit; hours < 10^9) and widened to the DECIMAL(38, 6) column, rates in
--   DECIMAL(18, 9) when below 10^8 (else DECIMAL(38, 9) as before) and widened to DECIMAL(38, 4):
--   the same digits as the 128-bit DECIMAL(38, 9) path (34 M doubles rounded both ways to 2, 4
--   and 6 places agree), 0.29 -> 0.22 s CPU at 2,000 patients. Checked: row hashes and types of
--   every table before and after on 2,000 synthetic patients (all three profiles), and the demo
--   anchor tests.
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
        CAST(ROUND(CAST(SUM(hours_since_previous_row) OVER w6 AS DECIMAL(18, 9)), 6) AS DECIMAL(38, 6)) AS uo_tm_6hr,
        CAST(ROUND(CAST(SUM(hours_since_previous_row) OVER w12 AS DECIMAL(18, 9)), 6) AS DECIMAL(38, 6)) AS uo_tm_12hr,
        CAST(ROUND(CAST(SUM(hours_since_previous_row) OVER w24 AS DECIMAL(18, 9)), 6) AS DECIMAL(38, 6)) AS uo_tm_24hr
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
        THEN CASE WHEN abs(s.urineoutput_6hr / wd.weight / s.uo_tm_6hr) < 1e8
            THEN CAST(ROUND(CAST(s.urineoutput_6hr / wd.weight / s.uo_tm_6hr AS DECIMAL(18, 9)), 4) AS DECIMAL(38, 4))
            ELSE ROUND(CAST(s.urineoutput_6hr / wd.weight / s.uo_tm_6hr AS DECIMAL(38, 9)), 4) END END AS uo_rt_6hr,
    CASE WHEN s.uo_tm_12hr >= 12
        THEN CASE WHEN abs(s.urineoutput_12hr / wd.weight / s.uo_tm_12hr) < 1e8
            THEN CAST(ROUND(CAST(s.urineoutput_12hr / wd.weight / s.uo_tm_12hr AS DECIMAL(18, 9)), 4) AS DECIMAL(38, 4))
            ELSE ROUND(CAST(s.urineoutput_12hr / wd.weight / s.uo_tm_12hr AS DECIMAL(38, 9)), 4) END END AS uo_rt_12hr,
    CASE WHEN s.uo_tm_24hr >= 24
        THEN CASE WHEN abs(s.urineoutput_24hr / wd.weight / s.uo_tm_24hr) < 1e8
            THEN CAST(ROUND(CAST(s.urineoutput_24hr / wd.weight / s.uo_tm_24hr AS DECIMAL(18, 9)), 4) AS DECIMAL(38, 4))
            ELSE ROUND(CAST(s.urineoutput_24hr / wd.weight / s.uo_tm_24hr AS DECIMAL(38, 9)), 4) END END AS uo_rt_24hr,
    s.uo_tm_6hr, s.uo_tm_12hr, s.uo_tm_24hr
FROM sums AS s
LEFT JOIN (
    SELECT stay_id, starttime, endtime, CAST(weight AS DECIMAL(38, 3)) AS weight
    FROM mimiciv_derived.weight_durations
) AS wd
    ON wd.stay_id = s.stay_id
    AND s.charttime >= wd.starttime
    AND s.charttime < wd.endtime
