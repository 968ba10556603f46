-- Concept: complete_blood_count
-- Definition: Complete blood count per lab specimen: hematocrit, hemoglobin, MCH, MCHC, MCV,
--   platelets, RBC, RDW, RDW-SD, WBC; values <= 0 are errors and dropped.
-- Source: mimic-code measurement/complete_blood_count (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none.
SELECT
    MAX(subject_id) AS subject_id
    , MAX(hadm_id) AS hadm_id
    , MAX(charttime) AS charttime
    , specimen_id
    , MAX(CASE WHEN itemid = 51221 THEN valuenum END) AS hematocrit
    , MAX(CASE WHEN itemid = 51222 THEN valuenum END) AS hemoglobin
    , MAX(CASE WHEN itemid = 51248 THEN valuenum END) AS mch
    , MAX(CASE WHEN itemid = 51249 THEN valuenum END) AS mchc
    , MAX(CASE WHEN itemid = 51250 THEN valuenum END) AS mcv
    , MAX(CASE WHEN itemid = 51265 THEN valuenum END) AS platelet
    , MAX(CASE WHEN itemid = 51279 THEN valuenum END) AS rbc
    , MAX(CASE WHEN itemid = 51277 THEN valuenum END) AS rdw
    , MAX(CASE WHEN itemid = 52159 THEN valuenum END) AS rdwsd
    , MAX(CASE WHEN itemid = 51301 THEN valuenum END) AS wbc
FROM mimiciv_hosp.labevents
WHERE itemid IN (51221, 51222, 51248, 51249, 51250, 51265, 51279, 51277, 52159, 51301)
    AND valuenum IS NOT NULL
    AND valuenum > 0
GROUP BY specimen_id
