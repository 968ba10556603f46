-- Concept: oasis-24h
-- Definition: reference output of task mimic-oasis-24h: OASIS and its 10 components over the
--   first 24 hours of the ICU stay, one row per ICU stay, unmeasured components scored 0
--   (normal). The pre-ICU length of stay is measured in exact minutes (seconds count) from
--   hospital admission to ICU admission: < 10.2 min 5, < 297 min 3, < 1440 min 0, < 18708 min 2,
--   longer 1.
-- Source: score/oasis (Johnson et al. 2013); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/oasis-24h.sql.
-- Grain: stay_id
-- Deviations: from the oasis concept (mimic-code), the pre-ICU stay is exact elapsed minutes
--   instead of minute boundaries crossed (DATE_DIFF('minute')), which moves a stay sitting just
--   below a cut-off (296.5 min counts 296 boundaries or 297); unmeasured components are 0
--   instead of empty. Variant oasis-24h__missing_as_null keeps them empty.
WITH preicu AS (
    SELECT ie.stay_id,
        DATE_DIFF('microseconds', adm.admittime, ie.intime) / 60000000.0 AS preiculos
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_hosp.admissions AS adm ON adm.hadm_id = ie.hadm_id
),
scored AS (
    SELECT o.*,
        CASE WHEN p.preiculos IS NULL THEN NULL
            WHEN p.preiculos < 10.2 THEN 5
            WHEN p.preiculos < 297 THEN 3
            WHEN p.preiculos < 1440 THEN 0
            WHEN p.preiculos < 18708 THEN 2
            ELSE 1 END AS anchor_preiculos_score
    FROM mimiciv_derived.oasis AS o
    LEFT JOIN preicu AS p ON p.stay_id = o.stay_id
)
SELECT subject_id, hadm_id, stay_id,
    COALESCE(anchor_preiculos_score, 0) + COALESCE(age_score, 0) + COALESCE(gcs_score, 0)
        + COALESCE(heart_rate_score, 0) + COALESCE(mbp_score, 0) + COALESCE(resp_rate_score, 0)
        + COALESCE(temp_score, 0) + COALESCE(urineoutput_score, 0) + COALESCE(mechvent_score, 0)
        + COALESCE(electivesurgery_score, 0) AS oasis,
    COALESCE(anchor_preiculos_score, 0) AS preiculos_score,
    COALESCE(age_score, 0) AS age_score,
    COALESCE(gcs_score, 0) AS gcs_score,
    COALESCE(heart_rate_score, 0) AS heart_rate_score,
    COALESCE(mbp_score, 0) AS mbp_score,
    COALESCE(resp_rate_score, 0) AS resp_rate_score,
    COALESCE(temp_score, 0) AS temp_score,
    COALESCE(urineoutput_score, 0) AS urineoutput_score,
    COALESCE(mechvent_score, 0) AS mechvent_score,
    COALESCE(electivesurgery_score, 0) AS electivesurgery_score
FROM scored
