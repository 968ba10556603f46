-- Concept: icp
-- Definition: Intracranial pressure (mmHg) per charting: the highest of items 220765
--   (Intra Cranial Pressure) and 227989 (Intra Cranial Pressure #2) charted at one time, values
--   outside (0, 100) mmHg treated as missing.
-- Source: mimic-code measurement/icp (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: subject_id, stay_id, charttime
-- Deviations: none.
SELECT
    subject_id
    , stay_id
    , charttime
    , MAX(CASE WHEN valuenum > 0 AND valuenum < 100 THEN valuenum END) AS icp
FROM mimiciv_icu.chartevents
WHERE itemid IN (220765, 227989)
GROUP BY subject_id, stay_id, charttime
