-- Concept: apsiii-24h
-- Definition: reference output of task mimic-apsiii-24h: APS III and its 16 components over
--   6 hours before to 24 hours after ICU admission, one row per ICU stay (an unmeasured
--   component is left empty and counts 0 in the total).
-- Source: score/apsiii (Knaus et al. 1991).
-- Grain: stay_id
-- Deviations: those of apsiii.
SELECT subject_id, hadm_id, stay_id, apsiii, hr_score, mbp_score, temp_score, resp_rate_score,
    pao2_aado2_score, hematocrit_score, wbc_score, creatinine_score, uo_score, bun_score,
    sodium_score, albumin_score, bilirubin_score, glucose_score, acidbase_score, gcs_score
FROM mimiciv_derived.apsiii
