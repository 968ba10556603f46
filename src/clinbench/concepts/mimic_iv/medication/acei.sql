-- Concept: acei
-- Definition: Prescriptions of angiotensin-converting-enzyme inhibitors: every prescriptions row
--   whose drug name contains one of benazepril, captopril, enalapril, fosinopril, lisinopril,
--   moexipril, perindopril, quinapril, ramipril, trandolapril (case-insensitive), with its
--   admission, drug name and start/stop times.
-- Source: mimic-code medication/acei (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: one row per matching prescriptions row (subject_id, hadm_id, acei, starttime); not unique
-- Deviations: none.
WITH acei_drug AS (
    SELECT DISTINCT
        drug
        , CASE
            WHEN UPPER(drug) LIKE '%BENAZEPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%CAPTOPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%ENALAPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%FOSINOPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%LISINOPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%MOEXIPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%PERINDOPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%QUINAPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%RAMIPRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%TRANDOLAPRIL%' THEN 1
            ELSE 0
        END AS is_acei
    FROM mimiciv_hosp.prescriptions
)

SELECT
    pr.subject_id
    , pr.hadm_id
    , pr.drug AS acei
    , pr.starttime
    , pr.stoptime
FROM mimiciv_hosp.prescriptions AS pr
INNER JOIN acei_drug AS d
    ON pr.drug = d.drug
WHERE d.is_acei = 1
