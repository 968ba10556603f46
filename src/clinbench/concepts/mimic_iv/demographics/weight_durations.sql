-- Concept: weight_durations
-- Definition: Body weight (kg) with the interval it applies to. Admission weight (226512)
--   and daily weights (224639) in (0, 1500) kg; the first admission weight applies from
--   ICU intime - 2 h; each weight lasts until the next one, the last until outtime + 2 h;
--   when the first weight comes after intime, it is back-filled from intime - 2 h.
-- Source: mimic-code demographics/weight_durations (MIT-LCP).
-- Grain: stay_id, starttime
-- Deviations: weights charted at the same instant for a stay are averaged into one row
--   (admit type wins); the public code keeps each, which gives zero-length intervals, a
--   non-unique grain and an arbitrary choice of weight downstream.
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

SELECT stay_id, starttime, endtime, weight, weight_type FROM wt1
UNION ALL
SELECT stay_id, starttime, endtime, weight, weight_type FROM backfill
