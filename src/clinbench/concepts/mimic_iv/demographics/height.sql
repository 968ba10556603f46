-- Concept: height
-- Definition: Charted height in cm: Height (cm) 226730, else Height (inches) 226707 x 2.54, each
--   rounded to 2 decimals through DECIMAL(38, 9); a cm and an inches charting of one subject at
--   one time pair up (the cm value wins), one row per pair; implausible heights (<= 120 or
--   >= 230 cm) are dropped.
-- Source: mimic-code measurement/height (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: subject_id, charttime; not unique: several chartings of one item at one time each
--   keep a row (times the other item's chartings at that time, as mimic-code's full join)
-- Deviations: none. (clinbench used to average same-instant heights into one row; no task reads
--   height, so that convention has no task-level variant.)
WITH ht_in AS (
    SELECT subject_id, stay_id, charttime,
        CAST(ROUND(CAST(valuenum * 2.54 AS DECIMAL(38, 9)), 2) AS DOUBLE) AS height
    FROM mimiciv_icu.chartevents
    WHERE valuenum IS NOT NULL AND itemid = 226707 -- Height (inches)
),
ht_cm AS (
    SELECT subject_id, stay_id, charttime,
        CAST(ROUND(CAST(valuenum AS DECIMAL(38, 9)), 2) AS DOUBLE) AS height
    FROM mimiciv_icu.chartevents
    WHERE valuenum IS NOT NULL AND itemid = 226730 -- Height (cm)
),
paired AS (
    SELECT
        COALESCE(h1.subject_id, h2.subject_id) AS subject_id,
        COALESCE(h1.stay_id, h2.stay_id) AS stay_id,
        COALESCE(h1.charttime, h2.charttime) AS charttime,
        COALESCE(h1.height, h2.height) AS height
    FROM ht_cm AS h1
    FULL OUTER JOIN ht_in AS h2
        ON h1.subject_id = h2.subject_id AND h1.charttime = h2.charttime
)
SELECT subject_id, stay_id, charttime, height
FROM paired
WHERE height IS NOT NULL AND height > 120 AND height < 230
