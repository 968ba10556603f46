-- Concept: height
-- Definition: Charted height in cm: Height (cm) 226730, else Height (inches) 226707 x 2.54, each
--   rounded to 2 decimals; a cm and an inches charting of one subject at
--   one time pair up (the cm value wins), one row per pair; implausible heights (<= 120 or
--   >= 230 cm) are dropped.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   measurement/height, as `m4 init-derived mimic-iv` builds it.
-- Grain: subject_id, charttime; not unique: several chartings of one item at one time each
--   keep a row (times the other item's chartings at that time, as mimic-code's full join)
-- Deviations: differs from the mimic-code profile in two ways: each value passes through
--   DECIMAL(18, 3) before rounding to 2 places, and a height charted only in inches keeps its value
--   but loses its subject_id, stay_id and charttime (M4's copy takes all three from the cm side of
--   the full join, COALESCE(h1.x, h1.x)), so such rows attach to no stay.
WITH ht_in AS (
    SELECT subject_id, stay_id, charttime,
        ROUND(TRY_CAST(valuenum * 2.54 AS DECIMAL), 2) AS height
    FROM mimiciv_icu.chartevents
    WHERE valuenum IS NOT NULL AND itemid = 226707 -- Height (inches)
),
ht_cm AS (
    SELECT subject_id, stay_id, charttime,
        ROUND(TRY_CAST(valuenum AS DECIMAL), 2) AS height
    FROM mimiciv_icu.chartevents
    WHERE valuenum IS NOT NULL AND itemid = 226730 -- Height (cm)
),
paired AS (
    SELECT
        h1.subject_id,
        h1.stay_id,
        h1.charttime,
        COALESCE(h1.height, h2.height) AS height
    FROM ht_cm AS h1
    FULL OUTER JOIN ht_in AS h2
        ON h1.subject_id = h2.subject_id AND h1.charttime = h2.charttime
)
SELECT subject_id, stay_id, charttime, height
FROM paired
WHERE height IS NOT NULL AND height > 120 AND height < 230
