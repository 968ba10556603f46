-- Concept: oasis-24h
-- Definition: reference output of task mimic-oasis-24h: OASIS and its 10 components over
--   6 hours before to 24 hours after ICU admission, one row per ICU stay, unmeasured
--   components scored 0 (normal).
-- Source: score/oasis (Johnson et al. 2013).
-- Grain: stay_id
-- Deviations: those of oasis.
SELECT subject_id, hadm_id, stay_id, oasis,
    COALESCE(preiculos_score, 0) AS preiculos_score,
    COALESCE(age_score, 0) AS age_score,
    COALESCE(gcs_score, 0) AS gcs_score,
    COALESCE(heart_rate_score, 0) AS heart_rate_score,
    COALESCE(mbp_score, 0) AS mbp_score,
    COALESCE(resp_rate_score, 0) AS resp_rate_score,
    COALESCE(temp_score, 0) AS temp_score,
    COALESCE(urineoutput_score, 0) AS urineoutput_score,
    COALESCE(mechvent_score, 0) AS mechvent_score,
    COALESCE(electivesurgery_score, 0) AS electivesurgery_score
FROM mimiciv_derived.oasis
