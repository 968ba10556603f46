-- Concept: inflammation
-- Definition: C-reactive protein (50889) per lab specimen; values <= 0 dropped.
-- Source: mimic-code measurement/inflammation (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none.
SELECT
    MAX(subject_id) AS subject_id
    , MAX(hadm_id) AS hadm_id
    , MAX(charttime) AS charttime
    , specimen_id
    , MAX(CASE WHEN itemid = 50889 THEN valuenum END) AS crp
FROM mimiciv_hosp.labevents
WHERE itemid = 50889 -- C-reactive protein
    AND valuenum IS NOT NULL
    AND valuenum > 0
GROUP BY specimen_id
