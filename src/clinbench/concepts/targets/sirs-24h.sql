-- Concept: sirs-24h
-- Definition: reference output of task mimic-sirs-24h-raw: the four SIRS criteria and their
--   count over 6 hours before to 24 hours after ICU admission, one row per ICU stay,
--   unmeasured criteria scored 0 (normal).
-- Source: score/sirs (ACCP/SCCM 1992).
-- Grain: stay_id
-- Deviations: none.
SELECT subject_id, hadm_id, stay_id, sirs,
    COALESCE(temp_score, 0) AS temp_score,
    COALESCE(heart_rate_score, 0) AS heart_rate_score,
    COALESCE(resp_score, 0) AS resp_score,
    COALESCE(wbc_score, 0) AS wbc_score
FROM mimiciv_derived.sirs
