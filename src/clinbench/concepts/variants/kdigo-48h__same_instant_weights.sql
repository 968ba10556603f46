-- Concept: kdigo-48h__same_instant_weights
-- Definition: the worst KDIGO stage of task mimic-kdigo-48h with the urine-output criterion
--   computed from weights in which every weight charted at the same instant for a stay is
--   averaged into one (admission type wins), so each time has exactly one weight interval; the
--   creatinine and CRRT stages are the default's.
-- Source: demographics/weight_durations (same admission back-fill and intervals, collapsed
--   here), organfailure/kdigo_uo and kdigo_stages (same windows, rates and stage rules);
--   KDIGO AKI guideline 2012. Clinical reason: two weights charted at one instant (an admission
--   and a daily weight, or a correction) describe one patient; mimic-code keeps both, one of
--   them gets a zero-length interval and the engine's tie order decides which weight
--   normalises the urine output, so the mL/kg/h rate can move across 0.5 or 0.3 by chance.
-- Grain: stay_id
-- Deviations: same-instant weights averaged (default target: each kept, the last in
--   type/weight order applies, as one of mimic-code's possible orders).
WITH charted AS (
    SELECT
        stay_id
        , charttime
        , CASE WHEN itemid = 226512 THEN 'admit' ELSE 'daily' END AS weight_type
        -- rounded to 3 dp through DECIMAL(38,9), as the public DuckDB build
        , AVG(CAST(ROUND(CAST(valuenum AS DECIMAL(38, 9)), 3) AS DOUBLE)) AS weight
    FROM mimiciv_icu.chartevents
    WHERE itemid IN (226512, 224639) -- Admit Wt, Daily Weight
        AND valuenum > 0
        AND valuenum < 1500
    GROUP BY stay_id, charttime, weight_type
)

, numbered AS (
    SELECT
        *
        , ROW_NUMBER() OVER (PARTITION BY stay_id, weight_type ORDER BY charttime) AS rn
    FROM charted
)

, started AS (
    -- the first admission weight is taken to hold from just before ICU admission
    SELECT
        n.stay_id
        , ie.outtime
        , CASE
            WHEN n.weight_type = 'admit' AND n.rn = 1 THEN ie.intime - INTERVAL 2 HOUR
            ELSE n.charttime
        END AS starttime
        , n.weight
        , n.weight_type
    FROM numbered AS n
    INNER JOIN mimiciv_icu.icustays AS ie
        ON n.stay_id = ie.stay_id
)

, one_per_time AS (
    SELECT
        stay_id
        , starttime
        , MAX(outtime) AS outtime
        , AVG(CAST(weight AS DECIMAL(38, 9))) AS weight
        , MIN(weight_type) AS weight_type -- 'admit' < 'daily'
    FROM started
    GROUP BY stay_id, starttime
)

, wt1 AS (
    SELECT
        stay_id
        , starttime
        , COALESCE(
            LEAD(starttime) OVER (PARTITION BY stay_id ORDER BY starttime)
            , outtime + INTERVAL 2 HOUR
        ) AS endtime
        , weight
        , weight_type
    FROM one_per_time
)

, first_weight AS (
    SELECT
        stay_id
        , starttime
        , weight
        , weight_type
        , ROW_NUMBER() OVER (PARTITION BY stay_id ORDER BY starttime) AS rn
    FROM wt1
)

, backfill AS (
    -- a stay whose first weight comes after ICU admission gets it from intime - 2 h
    SELECT
        ie.stay_id
        , ie.intime - INTERVAL 2 HOUR AS starttime
        , fw.starttime AS endtime
        , fw.weight
        , fw.weight_type
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN first_weight AS fw
        ON ie.stay_id = fw.stay_id
            AND fw.rn = 1
            AND ie.intime < fw.starttime
)

, collapsed_weights AS (
    SELECT stay_id, starttime, endtime, weight, weight_type FROM wt1
    UNION ALL
    SELECT stay_id, starttime, endtime, weight, weight_type FROM backfill
)

, sums AS (
    -- the 6/12/24 h volumes and covered hours do not depend on weight: kdigo_uo's, once per charting
    SELECT DISTINCT stay_id, charttime,
        urineoutput_6hr, urineoutput_12hr, urineoutput_24hr, uo_tm_6hr, uo_tm_12hr, uo_tm_24hr
    FROM mimiciv_derived.kdigo_uo
)

, kdigo_uo_collapsed AS (
    SELECT s.stay_id, s.charttime, wd.weight,
        s.urineoutput_6hr, s.urineoutput_12hr, s.urineoutput_24hr,
        -- a 6 h rate only while the covered time is 6-12 h: longer gaps are not a 6 h observation
        CASE WHEN s.uo_tm_6hr >= 6 AND s.uo_tm_6hr < 12
            THEN ROUND(CAST(s.urineoutput_6hr / wd.weight / s.uo_tm_6hr AS DECIMAL(38, 9)), 4) END AS uo_rt_6hr,
        CASE WHEN s.uo_tm_12hr >= 12
            THEN ROUND(CAST(s.urineoutput_12hr / wd.weight / s.uo_tm_12hr AS DECIMAL(38, 9)), 4) END AS uo_rt_12hr,
        CASE WHEN s.uo_tm_24hr >= 24
            THEN ROUND(CAST(s.urineoutput_24hr / wd.weight / s.uo_tm_24hr AS DECIMAL(38, 9)), 4) END AS uo_rt_24hr,
        s.uo_tm_6hr, s.uo_tm_12hr, s.uo_tm_24hr
    FROM sums AS s
    LEFT JOIN (
        SELECT stay_id, starttime, endtime, CAST(weight AS DECIMAL(38, 3)) AS weight
        FROM collapsed_weights
    ) AS wd
        ON wd.stay_id = s.stay_id
        AND s.charttime >= wd.starttime
        AND s.charttime < wd.endtime
)

, uo_stage AS (
    SELECT uo.stay_id, uo.charttime,
        CASE
            WHEN uo.uo_rt_6hr IS NULL THEN NULL
            WHEN uo.charttime <= ie.intime + INTERVAL 6 HOUR THEN 0
            WHEN uo.uo_tm_24hr >= 24 AND uo.uo_rt_24hr < 0.3 THEN 3
            WHEN uo.uo_tm_12hr >= 12 AND uo.uo_rt_12hr = 0 THEN 3
            WHEN uo.uo_tm_12hr >= 12 AND uo.uo_rt_12hr < 0.5 THEN 2
            WHEN uo.uo_tm_6hr >= 6 AND uo.uo_rt_6hr < 0.5 THEN 1
            ELSE 0
        END AS aki_stage_uo
    FROM kdigo_uo_collapsed AS uo
    INNER JOIN mimiciv_icu.icustays AS ie ON uo.stay_id = ie.stay_id
)

, staged AS (
    SELECT k.stay_id, k.charttime, k.aki_stage_creat, u.aki_stage_uo, k.aki_stage_crrt,
        GREATEST(COALESCE(k.aki_stage_creat, 0), COALESCE(u.aki_stage_uo, 0), COALESCE(k.aki_stage_crrt, 0)) AS aki_stage
    FROM mimiciv_derived.kdigo_stages AS k
    LEFT JOIN uo_stage AS u ON u.stay_id = k.stay_id AND u.charttime = k.charttime
)

SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
    COALESCE(MAX(k.aki_stage), 0) AS aki_stage,
    COALESCE(MAX(k.aki_stage_creat), 0) AS aki_stage_creat,
    COALESCE(MAX(k.aki_stage_uo), 0) AS aki_stage_uo,
    COALESCE(MAX(CASE WHEN k.aki_stage_crrt > 0 THEN 3 ELSE 0 END), 0) AS aki_stage_crrt
FROM mimiciv_icu.icustays AS ie
LEFT JOIN staged AS k
    ON k.stay_id = ie.stay_id
    AND k.charttime >= ie.intime
    AND k.charttime <= ie.intime + INTERVAL 48 HOUR
GROUP BY ie.subject_id, ie.hadm_id, ie.stay_id
