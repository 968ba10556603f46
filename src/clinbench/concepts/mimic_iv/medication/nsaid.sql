-- Concept: nsaid
-- Definition: Prescriptions of non-steroidal anti-inflammatory drugs (aspirin included): every
--   prescriptions row whose drug name contains one of aspirin, bromfenac, celecoxib, diclofenac,
--   diflunisal, etodolac, fenoprofen, flurbiprofen, ibuprofen, indomethacin, ketoprofen, mefenamic
--   acid, meloxicam, nabumetone, naproxen, nepafenac, oxaprozin, piroxicam, sulindac, tolmetin
--   (case-insensitive), with its admission, drug name and start/stop times.
-- Source: mimic-code medication/nsaid (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: one row per matching prescriptions row (subject_id, hadm_id, nsaid, starttime); not unique
-- Deviations: none.
WITH nsaid_drug AS (
    SELECT DISTINCT
        drug
        , CASE
            WHEN UPPER(drug) LIKE '%ASPIRIN%' THEN 1
            WHEN UPPER(drug) LIKE '%BROMFENAC%' THEN 1
            WHEN UPPER(drug) LIKE '%CELECOXIB%' THEN 1
            WHEN UPPER(drug) LIKE '%DICLOFENAC%' THEN 1
            WHEN UPPER(drug) LIKE '%DIFLUNISAL%' THEN 1
            WHEN UPPER(drug) LIKE '%ETODOLAC%' THEN 1
            WHEN UPPER(drug) LIKE '%FENOPROFEN%' THEN 1
            WHEN UPPER(drug) LIKE '%FLURBIPROFEN%' THEN 1
            WHEN UPPER(drug) LIKE '%IBUPROFEN%' THEN 1
            WHEN UPPER(drug) LIKE '%INDOMETHACIN%' THEN 1
            WHEN UPPER(drug) LIKE '%KETOPROFEN%' THEN 1
            WHEN UPPER(drug) LIKE '%MEFENAMIC ACID%' THEN 1
            WHEN UPPER(drug) LIKE '%MELOXICAM%' THEN 1
            WHEN UPPER(drug) LIKE '%NABUMETONE%' THEN 1
            WHEN UPPER(drug) LIKE '%NAPROXEN%' THEN 1
            WHEN UPPER(drug) LIKE '%NEPAFENAC%' THEN 1
            WHEN UPPER(drug) LIKE '%OXAPROZIN%' THEN 1
            WHEN UPPER(drug) LIKE '%PIROXICAM%' THEN 1
            WHEN UPPER(drug) LIKE '%SULINDAC%' THEN 1
            WHEN UPPER(drug) LIKE '%TOLMETIN%' THEN 1
            ELSE 0
        END AS is_nsaid
    FROM mimiciv_hosp.prescriptions
)

SELECT
    pr.subject_id
    , pr.hadm_id
    , pr.drug AS nsaid
    , pr.starttime
    , pr.stoptime
FROM mimiciv_hosp.prescriptions AS pr
INNER JOIN nsaid_drug AS d
    ON pr.drug = d.drug
WHERE d.is_nsaid = 1
