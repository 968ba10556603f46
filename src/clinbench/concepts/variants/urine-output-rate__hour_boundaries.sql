-- Concept: urine-output-rate__hour_boundaries
-- Definition: urine-output rates as in task mimic-urine-output-rate, except that a charting
--   belongs to the 6 h (12 h) window ending at t when at most 5 (11) clock-hour boundaries lie
--   between it and t (DuckDB DATE_DIFF('hour'), mimic-code's rule), instead of at most 5 (11)
--   exact hours: a charting at 10:05 is in the 6 h window ending 15:55 here, not in the default.
-- Source: measurement/urine_output_rate of mimic-code (`DATE_DIFF('HOUR', ...) <= 5`); KDIGO
--   2012. Clinical reason: none beyond reproducing mimic-code: KDIGO's oliguria criterion is
--   < 0.5 mL/kg/h for 6 hours, and counting by clock boundaries lets a "6 h" window reach
--   chartings up to 5 h 59 min earlier, which dilutes short oliguric spells. This variant measures how much
--   the boundary rule moves rates, for studies that compare with mimic-code's urine_output_rate.
-- Grain: stay_id, charttime
-- Deviations: 6 and 12 h windows by clock-hour boundaries (default target: exact hours); the
--   24 h window, exact minutes, weights and rounding are the default's.
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
    SELECT io.stay_id, io.charttime,
        SUM(DISTINCT io.urineoutput) AS uo,
        SUM(s.urineoutput) FILTER (WHERE DATE_DIFF('hour', s.charttime, io.charttime) <= 5) AS urineoutput_6hr,
        SUM(s.minutes) FILTER (WHERE DATE_DIFF('hour', s.charttime, io.charttime) <= 5) / 60.0 AS uo_tm_6hr,
        SUM(s.urineoutput) FILTER (WHERE DATE_DIFF('hour', s.charttime, io.charttime) <= 11) AS urineoutput_12hr,
        SUM(s.minutes) FILTER (WHERE DATE_DIFF('hour', s.charttime, io.charttime) <= 11) / 60.0 AS uo_tm_12hr,
        SUM(s.urineoutput) AS urineoutput_24hr,
        SUM(s.minutes) / 60.0 AS uo_tm_24hr
    FROM uo AS io
    LEFT JOIN uo AS s
        ON s.stay_id = io.stay_id
        AND io.charttime >= s.charttime
        AND io.charttime <= s.charttime + INTERVAL 23 HOUR
    GROUP BY io.stay_id, io.charttime
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
