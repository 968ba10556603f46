-- Concept: sapsii-24h
-- Definition: reference output of task mimic-sapsii-24h: SAPS II and its 15 components over
--   the first 24 hours of the ICU stay, one row per ICU stay; an unmeasured component is
--   scored 0 (normal) and counts 0 in the total.
-- Source: score/sapsii (Le Gall et al. 1993); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/sapsii-24h.sql (mimic-code sapsii with components filled with 0).
-- Grain: stay_id
-- Deviations: from the sapsii concept, unmeasured components are 0 instead of empty (the total
--   is unchanged: it already counted them 0). Variant sapsii-24h__missing_as_null keeps them empty.
SELECT subject_id, hadm_id, stay_id, sapsii,
    COALESCE(age_score, 0) AS age_score,
    COALESCE(hr_score, 0) AS hr_score,
    COALESCE(sysbp_score, 0) AS sysbp_score,
    COALESCE(temp_score, 0) AS temp_score,
    COALESCE(pao2fio2_score, 0) AS pao2fio2_score,
    COALESCE(uo_score, 0) AS uo_score,
    COALESCE(bun_score, 0) AS bun_score,
    COALESCE(wbc_score, 0) AS wbc_score,
    COALESCE(potassium_score, 0) AS potassium_score,
    COALESCE(sodium_score, 0) AS sodium_score,
    COALESCE(bicarbonate_score, 0) AS bicarbonate_score,
    COALESCE(bilirubin_score, 0) AS bilirubin_score,
    COALESCE(gcs_score, 0) AS gcs_score,
    COALESCE(comorbidity_score, 0) AS comorbidity_score,
    COALESCE(admissiontype_score, 0) AS admissiontype_score
FROM mimiciv_derived.sapsii
