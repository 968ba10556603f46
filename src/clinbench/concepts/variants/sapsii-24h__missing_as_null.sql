-- Concept: sapsii-24h__missing_as_null
-- Definition: SAPS II of task mimic-sapsii-24h with every component that had no measurement in
--   the window left empty instead of scored 0; the total is the default's (it counts an empty
--   component 0). This is mimic-code's sapsii as it stands.
-- Source: score/sapsii; Le Gall et al. 1993. Clinical reason: a 0 reads as "measured and
--   normal"; an unmeasured bilirubin or blood gas is not evidence of normal physiology, and
--   studies that handle missingness explicitly need the gaps visible.
-- Grain: stay_id
-- Deviations: unmeasured component = empty (default target: 0); the total is unchanged.
SELECT subject_id, hadm_id, stay_id, sapsii, age_score, hr_score, sysbp_score, temp_score,
    pao2fio2_score, uo_score, bun_score, wbc_score, potassium_score, sodium_score,
    bicarbonate_score, bilirubin_score, gcs_score, comorbidity_score, admissiontype_score
FROM mimiciv_derived.sapsii
