-- Concept: arb
-- Definition: Prescriptions of angiotensin II receptor blockers (and sacubitril/valsartan): every
--   prescriptions row whose drug name contains one of azilsartan, edarbi, candesartan, atacand,
--   irbesartan, avapro, losartan, cozaar, olmesartan, benicar, telmisartan, micardis, valsartan,
--   diovan, sacubitril, entresto (case-insensitive), with its admission, drug name and start/stop
--   times.
-- Source: mimic-code medication/arb (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: one row per matching prescriptions row (subject_id, hadm_id, arb, starttime); not unique
-- Deviations: none.
WITH arb_drug AS (
    SELECT DISTINCT
        drug
        , CASE
            WHEN UPPER(drug) LIKE '%AZILSARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%EDARBI%' THEN 1
            WHEN UPPER(drug) LIKE '%CANDESARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%ATACAND%' THEN 1
            WHEN UPPER(drug) LIKE '%IRBESARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%AVAPRO%' THEN 1
            WHEN UPPER(drug) LIKE '%LOSARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%COZAAR%' THEN 1
            WHEN UPPER(drug) LIKE '%OLMESARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%BENICAR%' THEN 1
            WHEN UPPER(drug) LIKE '%TELMISARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%MICARDIS%' THEN 1
            WHEN UPPER(drug) LIKE '%VALSARTAN%' THEN 1
            WHEN UPPER(drug) LIKE '%DIOVAN%' THEN 1
            WHEN UPPER(drug) LIKE '%SACUBITRIL%' THEN 1
            WHEN UPPER(drug) LIKE '%ENTRESTO%' THEN 1
            ELSE 0
        END AS is_arb
    FROM mimiciv_hosp.prescriptions
)

SELECT
    pr.subject_id
    , pr.hadm_id
    , pr.drug AS arb
    , pr.starttime
    , pr.stoptime
FROM mimiciv_hosp.prescriptions AS pr
INNER JOIN arb_drug AS d
    ON pr.drug = d.drug
WHERE d.is_arb = 1
