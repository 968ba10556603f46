-- Concept: urine_output_rate
-- Definition: At each urine-output charting of an ICU stay: the volume charted (uo), the
--   volume over the last 6, 12 and 24 h, and the rate in mL/kg/h. Each charting is assumed
--   to cover the time since the previous one (the first: since the first heart-rate charting
--   of the stay, within a month of the stay), counted in minute boundaries; the "6 h" sum
--   takes chartings at most 5 hour boundaries before the current one (11 for "12 h"; every
--   charting of the last 23 h inclusive for "24 h") and its covered time uo_tm_6hr is the
--   sum of those gaps in hours. A rate is given only when the covered time reaches 6 / 12 /
--   24 h: volume / weight / covered hours, rounded to 4 dp; covered hours rounded to 2 dp.
--   Weight: the weight_durations interval with starttime < charttime <= endtime.
-- Source: mimic-code measurement/urine_output_rate, DuckDB build (MIT-LCP); KDIGO 2012 urine
--   output criteria.
-- Grain: stay_id, charttime
-- Deviations: none. Kept on purpose: differences count hour and minute boundaries as
--   mimic-code does (DuckDB DATE_DIFF, BigQuery DATETIME_DIFF). The task reference
--   urine-output-rate uses exact elapsed hours and minutes instead, as M4Bench's does, which
--   moves chartings at e.g. 09:10 -> 14:50 out of the 6 h window; variant
--   urine-output-rate__hour_boundaries keeps these windows. Rounding goes through DECIMAL(38,9) as the DuckDB build; volumes are DOUBLE
--   (MIMIC stores 32-bit floats), which only matters below 4 dp.
--   Rewritten for speed with identical rows: the minute sums and covered hours go through
--   DECIMAL(18, 9) (64-bit; minutes and hours < 10^9; the sums themselves are DECIMAL(38, 9)), and
--   the rates too when below 10^8 (else DECIMAL(38, 9) as before), then to DOUBLE: the same digits
--   as the 128-bit DECIMAL(38, 9) path (34 M doubles rounded both ways to 2, 4 and 6 places
--   agree), 0.46 -> 0.28 s CPU at 2,000 patients. Checked: row hashes and types of every table
--   before and after on 2,000 synthetic patients (all three profiles), and the demo anchor tests.
--   The window sums then as differences, identical rows again (0.16 -> 0.13 s CPU): a window's
--   volume is the stay's running volume (exact DECIMAL(38, 9)) less the running volume before the
--   window's first charting, NULL when a running count shows no volume in the window (as SUM);
--   its covered minutes telescope, DATE_DIFF('minute', a, b) being m(b) - m(a) with m the whole
--   minutes since the epoch, to the gap from the charting before the window's first (intime_hr
--   for the stay's first) to the current one. One FIRST_VALUE per window instead of two SUMs.
--   Exact for finite timestamps while a stay's running volume stays below 10^29 mL (beyond, the
--   DECIMAL(38, 9) sum raises an overflow error, as a window's sum did).
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
    -- per charting: the previous charting (the first: intime_hr), and the running volume and count
    -- of volumes of its stay up to it (exact DECIMAL(38, 9)); (stay_id, charttime) is unique
    -- (urine_output groups by it), so the order is total
    SELECT
        tm.stay_id
        , uo.charttime
        , uo.urineoutput
        , COALESCE(LAG(uo.charttime) OVER w, tm.intime_hr) AS prev_charttime
        , SUM(COALESCE(CAST(uo.urineoutput AS DECIMAL(38, 9)), 0)) OVER (w ROWS UNBOUNDED PRECEDING) AS uo_cum
        , COUNT(uo.urineoutput) OVER (w ROWS UNBOUNDED PRECEDING) AS uo_n
    FROM tm
    INNER JOIN mimiciv_derived.urine_output AS uo
        ON tm.stay_id = uo.stay_id
    WINDOW w AS (PARTITION BY tm.stay_id ORDER BY uo.charttime)
)

, ur_frames AS (
    -- each charting sums the chartings of its stay from 23 h before it (inclusive) for "24 h",
    -- and from the clock hour 5 (11) hours before its own hour for "6 h" ("12 h"):
    -- DATE_DIFF('hour', earlier, t) <= 5 holds exactly when earlier >= date_trunc('hour', t) - 5 h.
    -- Of each window only its first charting is read (one FIRST_VALUE per window, no sums): the
    -- charting before it, and the running volume and count before it.
    SELECT
        stay_id
        , charttime
        , urineoutput
        , uo_cum
        , uo_n
        , FIRST_VALUE(f) OVER w6 AS f6
        , FIRST_VALUE(f) OVER w12 AS f12
        , FIRST_VALUE(f) OVER w24 AS f24
    FROM (
        SELECT *, {
            'prev': prev_charttime
            , 'cum': uo_cum - COALESCE(CAST(urineoutput AS DECIMAL(38, 9)), 0)
            , 'n': uo_n - CAST(urineoutput IS NOT NULL AS BIGINT)
        } AS f
        FROM uo_tm
    )
    WINDOW
        w6 AS (PARTITION BY stay_id ORDER BY charttime
            RANGE BETWEEN (charttime - date_trunc('hour', charttime) + INTERVAL 5 HOUR) PRECEDING AND CURRENT ROW)
        , w12 AS (PARTITION BY stay_id ORDER BY charttime
            RANGE BETWEEN (charttime - date_trunc('hour', charttime) + INTERVAL 11 HOUR) PRECEDING AND CURRENT ROW)
        , w24 AS (PARTITION BY stay_id ORDER BY charttime RANGE BETWEEN INTERVAL 23 HOUR PRECEDING AND CURRENT ROW)
)

, ur_stg AS (
    -- a window's volume: the running volume now less the one before its first charting, exactly
    -- the DECIMAL(38, 9) sum of its volumes (NULL when it holds none, as SUM). Its covered minutes:
    -- DATE_DIFF('minute', a, b) is m(b) - m(a) (m: whole minutes since the epoch), so the gaps of
    -- its chartings add up to the gap from the charting before its first to this one, exactly the
    -- integer the minute sums gave (cast as their DECIMAL(38, 9) sum was).
    SELECT
        stay_id
        , charttime
        , urineoutput AS uo
        , CAST(CASE WHEN uo_n > f6.n THEN uo_cum - f6.cum END AS DOUBLE) AS urineoutput_6hr
        , ROUND(CAST(CAST(CAST(date_diff('minute', f6.prev, charttime) AS DECIMAL(38, 9)) AS DOUBLE) / 60.0 AS DECIMAL(18, 9)), 6) AS uo_tm_6hr
        , CAST(CASE WHEN uo_n > f12.n THEN uo_cum - f12.cum END AS DOUBLE) AS urineoutput_12hr
        , ROUND(CAST(CAST(CAST(date_diff('minute', f12.prev, charttime) AS DECIMAL(38, 9)) AS DOUBLE) / 60.0 AS DECIMAL(18, 9)), 6) AS uo_tm_12hr
        , CAST(CASE WHEN uo_n > f24.n THEN uo_cum - f24.cum END AS DOUBLE) AS urineoutput_24hr
        , ROUND(CAST(CAST(CAST(date_diff('minute', f24.prev, charttime) AS DECIMAL(38, 9)) AS DOUBLE) / 60.0 AS DECIMAL(18, 9)), 6) AS uo_tm_24hr
    FROM ur_frames
)

SELECT
    ur.stay_id
    , ur.charttime
    , wd.weight
    , ur.uo
    , ur.urineoutput_6hr
    , ur.urineoutput_12hr
    , ur.urineoutput_24hr
    , CASE WHEN ur.uo_tm_6hr >= 6 THEN CASE WHEN abs(ur.urineoutput_6hr / wd.weight / CAST(ur.uo_tm_6hr AS DOUBLE)) < 1e8
        THEN CAST(ROUND(CAST(ur.urineoutput_6hr / wd.weight / CAST(ur.uo_tm_6hr AS DOUBLE) AS DECIMAL(18, 9)), 4) AS DOUBLE)
        ELSE CAST(ROUND(CAST(ur.urineoutput_6hr / wd.weight / CAST(ur.uo_tm_6hr AS DOUBLE) AS DECIMAL(38, 9)), 4) AS DOUBLE) END END AS uo_mlkghr_6hr
    , CASE WHEN ur.uo_tm_12hr >= 12 THEN CASE WHEN abs(ur.urineoutput_12hr / wd.weight / CAST(ur.uo_tm_12hr AS DOUBLE)) < 1e8
        THEN CAST(ROUND(CAST(ur.urineoutput_12hr / wd.weight / CAST(ur.uo_tm_12hr AS DOUBLE) AS DECIMAL(18, 9)), 4) AS DOUBLE)
        ELSE CAST(ROUND(CAST(ur.urineoutput_12hr / wd.weight / CAST(ur.uo_tm_12hr AS DOUBLE) AS DECIMAL(38, 9)), 4) AS DOUBLE) END END AS uo_mlkghr_12hr
    , CASE WHEN ur.uo_tm_24hr >= 24 THEN CASE WHEN abs(ur.urineoutput_24hr / wd.weight / CAST(ur.uo_tm_24hr AS DOUBLE)) < 1e8
        THEN CAST(ROUND(CAST(ur.urineoutput_24hr / wd.weight / CAST(ur.uo_tm_24hr AS DOUBLE) AS DECIMAL(18, 9)), 4) AS DOUBLE)
        ELSE CAST(ROUND(CAST(ur.urineoutput_24hr / wd.weight / CAST(ur.uo_tm_24hr AS DOUBLE) AS DECIMAL(38, 9)), 4) AS DOUBLE) END END AS uo_mlkghr_24hr
    , CAST(ROUND(ur.uo_tm_6hr, 2) AS DOUBLE) AS uo_tm_6hr
    , CAST(ROUND(ur.uo_tm_12hr, 2) AS DOUBLE) AS uo_tm_12hr
    , CAST(ROUND(ur.uo_tm_24hr, 2) AS DOUBLE) AS uo_tm_24hr
FROM ur_stg AS ur
LEFT JOIN mimiciv_derived.weight_durations AS wd
    ON ur.stay_id = wd.stay_id
        AND ur.charttime > wd.starttime
        AND ur.charttime <= wd.endtime
        AND wd.weight > 0
