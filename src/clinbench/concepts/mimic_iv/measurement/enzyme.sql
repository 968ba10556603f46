-- Concept: enzyme
-- Definition: Liver and muscle enzymes and bilirubin per lab specimen: ALT, ALP, AST,
--   amylase, total/direct/indirect bilirubin, CK (CPK), CK-MB, GGT, LDH; values <= 0 dropped.
-- Source: mimic-code measurement/enzyme (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none.
-- Rewritten for speed with identical rows (the 11 items as ranges the scan filters on, not an IN join; 0.0113 -> 0.0069 s CPU at 2,000 patients;
--   itemid is INTEGER, so each BETWEEN holds exactly the listed items, and NULL fails both forms).
SELECT
    MAX(subject_id) AS subject_id
    , MAX(hadm_id) AS hadm_id
    , MAX(charttime) AS charttime
    , specimen_id
    , MAX(CASE WHEN itemid = 50861 THEN valuenum END) AS alt
    , MAX(CASE WHEN itemid = 50863 THEN valuenum END) AS alp
    , MAX(CASE WHEN itemid = 50878 THEN valuenum END) AS ast
    , MAX(CASE WHEN itemid = 50867 THEN valuenum END) AS amylase
    , MAX(CASE WHEN itemid = 50885 THEN valuenum END) AS bilirubin_total
    , MAX(CASE WHEN itemid = 50883 THEN valuenum END) AS bilirubin_direct
    , MAX(CASE WHEN itemid = 50884 THEN valuenum END) AS bilirubin_indirect
    , MAX(CASE WHEN itemid = 50910 THEN valuenum END) AS ck_cpk
    , MAX(CASE WHEN itemid = 50911 THEN valuenum END) AS ck_mb
    , MAX(CASE WHEN itemid = 50927 THEN valuenum END) AS ggt
    , MAX(CASE WHEN itemid = 50954 THEN valuenum END) AS ld_ldh
FROM mimiciv_hosp.labevents
WHERE (
        itemid = 50861 OR itemid = 50863 OR itemid = 50867 OR itemid = 50878
        OR itemid BETWEEN 50883 AND 50885 OR itemid BETWEEN 50910 AND 50911
        OR itemid = 50927 OR itemid = 50954
    )
    AND valuenum IS NOT NULL
    AND valuenum > 0
GROUP BY specimen_id
