-- Concept: code_status
-- Definition: Code status documentation: each charting of item 223758 (Code Status) and each
--   'General Care' / 'Code status' provider order (poe + poe_detail), with flags fullcode, cmo
--   (comfort measures only; charted only), dni and dnr. 'DNR / DNI' (charted) and 'Do not
--   resuscitate (DNR/DNI)' (ordered) set both dni and dnr. An order is attached to the ICU stay
--   of its admission whose intime <= ordertime <= outtime, if any.
-- Source: mimic-code treatment/code_status (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: one row per charting or order (subject_id, charttime); not unique
-- Deviations: none.
WITH charted AS (
    SELECT
        subject_id
        , hadm_id
        , stay_id
        , charttime
        , CASE WHEN value IN ('Full code') THEN 1 ELSE 0 END AS fullcode
        , CASE WHEN value IN ('Comfort measures only') THEN 1 ELSE 0 END AS cmo
        , CASE WHEN value IN ('DNI (do not intubate)', 'DNR / DNI') THEN 1 ELSE 0 END AS dni
        , CASE WHEN value IN ('DNR (do not resuscitate)', 'DNR / DNI') THEN 1 ELSE 0 END AS dnr
    FROM mimiciv_icu.chartevents
    WHERE itemid = 223758
)

, ordered AS (
    SELECT
        p.subject_id
        , p.hadm_id
        , ie.stay_id
        , p.ordertime
        , CASE WHEN pd.field_value IN ('Resuscitate (Full code)', 'Full code  (attempt resuscitation)')
            THEN 1 ELSE 0 END AS fullcode
        , CASE WHEN pd.field_value IN ('DNAR (DO NOT attempt resuscitation for cardiac arrest) ',
                'Do not resuscitate (DNR/DNI)')
            THEN 1 ELSE 0 END AS dnr
        , CASE WHEN pd.field_value = 'Do not resuscitate (DNR/DNI)' THEN 1 ELSE 0 END AS dni
    FROM mimiciv_hosp.poe AS p
    INNER JOIN mimiciv_hosp.poe_detail AS pd
        ON p.poe_id = pd.poe_id
    LEFT JOIN mimiciv_icu.icustays AS ie
        ON p.hadm_id = ie.hadm_id AND p.ordertime >= ie.intime AND p.ordertime <= ie.outtime
    WHERE p.order_type = 'General Care' AND p.order_subtype = 'Code status'
)

SELECT subject_id, hadm_id, stay_id, charttime, fullcode, cmo, dni, dnr
FROM charted
UNION ALL
SELECT subject_id, hadm_id, stay_id, ordertime AS charttime, fullcode, 0 AS cmo, dni, dnr
FROM ordered
