-- Concept: coagulation
-- Definition: Coagulation tests per lab specimen: D-dimer, fibrinogen, thrombin time, INR,
--   PT, PTT.
-- Source: mimic-code measurement/coagulation (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none.
SELECT
    MAX(subject_id) AS subject_id
    , MAX(hadm_id) AS hadm_id
    , MAX(charttime) AS charttime
    , specimen_id
    , MAX(CASE WHEN itemid = 51196 THEN valuenum END) AS d_dimer
    , MAX(CASE WHEN itemid = 51214 THEN valuenum END) AS fibrinogen
    , MAX(CASE WHEN itemid = 51297 THEN valuenum END) AS thrombin
    , MAX(CASE WHEN itemid = 51237 THEN valuenum END) AS inr
    , MAX(CASE WHEN itemid = 51274 THEN valuenum END) AS pt
    , MAX(CASE WHEN itemid = 51275 THEN valuenum END) AS ptt
FROM mimiciv_hosp.labevents
WHERE itemid IN (51196, 51214, 51297, 51237, 51274, 51275)
    AND valuenum IS NOT NULL
GROUP BY specimen_id
