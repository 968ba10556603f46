-- Concept: blood_differential
-- Definition: White-cell differential per lab specimen. Absolute counts in K/uL (#/uL items
--   divided by 1000); percentages as charted. A missing absolute count is imputed as
--   percentage x WBC / 100 when WBC > 0 and the differential percentages sum above 0
--   (an all-zero differential looks like bad data); imputed counts rounded to 4 dp.
-- Source: mimic-code measurement/blood_differential (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none.
-- Rewritten for speed with identical rows (the 23 items as ranges the scan filters on, not an IN join; 0.0192 -> 0.0163 s CPU at 2,000 patients;
--   itemid is INTEGER, so each BETWEEN holds exactly the listed items, and NULL fails both forms).
WITH diff AS (
    SELECT
        MAX(subject_id) AS subject_id
        , MAX(hadm_id) AS hadm_id
        , MAX(charttime) AS charttime
        , specimen_id
        , MAX(CASE WHEN itemid IN (51300, 51301, 51755) THEN valuenum END) AS wbc
        , MAX(CASE WHEN itemid = 52069 THEN valuenum END) AS basophils_abs
        , MAX(CASE WHEN itemid = 52073 THEN valuenum WHEN itemid = 51199 THEN valuenum / 1000.0 END) AS eosinophils_abs
        , MAX(CASE WHEN itemid = 51133 THEN valuenum WHEN itemid = 52769 THEN valuenum / 1000.0 END) AS lymphocytes_abs
        , MAX(CASE WHEN itemid = 52074 THEN valuenum WHEN itemid = 51253 THEN valuenum / 1000.0 END) AS monocytes_abs
        , MAX(CASE WHEN itemid = 52075 THEN valuenum END) AS neutrophils_abs
        , MAX(CASE WHEN itemid = 51218 THEN valuenum / 1000.0 END) AS granulocytes_abs
        , MAX(CASE WHEN itemid = 51146 THEN valuenum END) AS basophils
        , MAX(CASE WHEN itemid = 51200 THEN valuenum END) AS eosinophils
        , MAX(CASE WHEN itemid IN (51244, 51245) THEN valuenum END) AS lymphocytes
        , MAX(CASE WHEN itemid = 51254 THEN valuenum END) AS monocytes
        , MAX(CASE WHEN itemid = 51256 THEN valuenum END) AS neutrophils
        , MAX(CASE WHEN itemid = 51143 THEN valuenum END) AS atypical_lymphocytes
        , MAX(CASE WHEN itemid = 51144 THEN valuenum END) AS bands
        , MAX(CASE WHEN itemid = 52135 THEN valuenum END) AS immature_granulocytes
        , MAX(CASE WHEN itemid = 51251 THEN valuenum END) AS metamyelocytes
        , MAX(CASE WHEN itemid = 51257 THEN valuenum END) AS nrbc
        , CASE
            WHEN MAX(CASE WHEN itemid IN (51300, 51301, 51755) THEN valuenum END) > 0
                AND SUM(CASE WHEN itemid IN (51146, 51200, 51244, 51245, 51254, 51256) THEN valuenum END) > 0
                THEN 1
            ELSE 0
        END AS impute_abs
    FROM mimiciv_hosp.labevents
    -- items 51146, 52069, 51199, 51200, 52073, 51244, 51245, 51133, 52769, 51253, 51254,
    -- 52074, 51256, 52075, 51143, 51144, 51218, 52135, 51251, 51257 and the WBC totals
    -- (K/uL) 51300, 51301, 51755, as ranges the scan filters on
    WHERE (
            itemid = 51133 OR itemid BETWEEN 51143 AND 51144 OR itemid = 51146
            OR itemid BETWEEN 51199 AND 51200 OR itemid = 51218 OR itemid BETWEEN 51244 AND 51245
            OR itemid = 51251 OR itemid BETWEEN 51253 AND 51254 OR itemid BETWEEN 51256 AND 51257
            OR itemid BETWEEN 51300 AND 51301 OR itemid = 51755 OR itemid = 52069
            OR itemid BETWEEN 52073 AND 52075 OR itemid = 52135 OR itemid = 52769
        )
        AND valuenum IS NOT NULL
        AND valuenum >= 0
    GROUP BY specimen_id
)

SELECT
    subject_id
    , hadm_id
    , charttime
    , specimen_id
    , wbc
    , ROUND(CASE WHEN basophils_abs IS NULL AND basophils IS NOT NULL AND impute_abs = 1 THEN basophils * wbc / 100 ELSE basophils_abs END, 4) AS basophils_abs
    , ROUND(CASE WHEN eosinophils_abs IS NULL AND eosinophils IS NOT NULL AND impute_abs = 1 THEN eosinophils * wbc / 100 ELSE eosinophils_abs END, 4) AS eosinophils_abs
    , ROUND(CASE WHEN lymphocytes_abs IS NULL AND lymphocytes IS NOT NULL AND impute_abs = 1 THEN lymphocytes * wbc / 100 ELSE lymphocytes_abs END, 4) AS lymphocytes_abs
    , ROUND(CASE WHEN monocytes_abs IS NULL AND monocytes IS NOT NULL AND impute_abs = 1 THEN monocytes * wbc / 100 ELSE monocytes_abs END, 4) AS monocytes_abs
    , ROUND(CASE WHEN neutrophils_abs IS NULL AND neutrophils IS NOT NULL AND impute_abs = 1 THEN neutrophils * wbc / 100 ELSE neutrophils_abs END, 4) AS neutrophils_abs
    , basophils
    , eosinophils
    , lymphocytes
    , monocytes
    , neutrophils
    , atypical_lymphocytes
    , bands
    , immature_granulocytes
    , metamyelocytes
    , nrbc
FROM diff
