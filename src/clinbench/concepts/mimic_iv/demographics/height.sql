-- Concept: height
-- Definition: Charted height in cm: Height (cm) 226730, else Height (inches) 226707 x 2.54,
--   rounded to 2 decimals; implausible heights (<= 120 or >= 230 cm) are dropped.
-- Source: mimic-code measurement/height (MIT-LCP).
-- Grain: stay_id, charttime
-- Deviations: an inches-only charting keeps its subject/stay/time (the public FULL OUTER
--   JOIN takes the identifiers from the cm side only, so those rows lose their stay); several
--   values at one instant are averaged, so the grain is unique.
WITH charted AS (
    SELECT
        subject_id
        , stay_id
        , charttime
        , AVG(CAST(CASE WHEN itemid = 226730 THEN ROUND(valuenum, 2) END AS DECIMAL(38, 9))) AS height_cm
        , AVG(CAST(CASE WHEN itemid = 226707 THEN ROUND(valuenum * 2.54, 2) END AS DECIMAL(38, 9))) AS height_from_in
    FROM mimiciv_icu.chartevents
    WHERE itemid IN (226730, 226707) -- Height (cm), Height (inches)
        AND valuenum IS NOT NULL
    GROUP BY subject_id, stay_id, charttime
)

SELECT
    subject_id
    , stay_id
    , charttime
    , ROUND(COALESCE(height_cm, height_from_in), 2) AS height
FROM charted
WHERE COALESCE(height_cm, height_from_in) > 120
    AND COALESCE(height_cm, height_from_in) < 230
