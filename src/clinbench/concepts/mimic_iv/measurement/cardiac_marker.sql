-- Concept: cardiac_marker
-- Definition: Cardiac markers per lab specimen: troponin T, CK-MB, NT-proBNP.
-- Source: mimic-code measurement/cardiac_marker (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none (troponin_t is the numeric valuenum, as mimic-code).
SELECT
    MAX(subject_id) AS subject_id
    , MAX(hadm_id) AS hadm_id
    , MAX(charttime) AS charttime
    , specimen_id
    , MAX(CASE WHEN itemid = 51003 THEN valuenum END) AS troponin_t
    , MAX(CASE WHEN itemid = 50911 THEN valuenum END) AS ck_mb
    , MAX(CASE WHEN itemid = 50963 THEN valuenum END) AS ntprobnp
FROM mimiciv_hosp.labevents
WHERE itemid IN (
        51003 -- troponin T
        , 50911 -- creatine kinase, MB isoenzyme
        , 50963 -- NT-proBNP
    )
    AND valuenum IS NOT NULL
GROUP BY specimen_id
