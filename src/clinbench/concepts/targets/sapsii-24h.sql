-- Concept: sapsii-24h
-- Definition: reference output of task mimic-sapsii-24h: SAPS II and its 15 components over
--   6 hours before to 24 hours after ICU admission, one row per ICU stay (an unmeasured
--   component is left empty and counts 0 in the total).
-- Source: score/sapsii (Le Gall et al. 1993).
-- Grain: stay_id
-- Deviations: those of sapsii.
SELECT subject_id, hadm_id, stay_id, sapsii, age_score, hr_score, sysbp_score, temp_score,
    pao2fio2_score, uo_score, bun_score, wbc_score, potassium_score, sodium_score,
    bicarbonate_score, bilirubin_score, gcs_score, comorbidity_score, admissiontype_score
FROM mimiciv_derived.sapsii
