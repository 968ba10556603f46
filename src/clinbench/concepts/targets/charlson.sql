-- Concept: charlson
-- Definition: reference output of task mimic-charlson-raw: the 17 Charlson comorbidity flags,
--   the age score and the Charlson Comorbidity Index, one row per hospital admission.
-- Source: comorbidity/charlson (Charlson 1987; Quan 2005).
-- Grain: hadm_id
-- Deviations: those of charlson (E10.1 counted).
SELECT subject_id, hadm_id, age_score, myocardial_infarct, congestive_heart_failure,
    peripheral_vascular_disease, cerebrovascular_disease, dementia, chronic_pulmonary_disease,
    rheumatic_disease, peptic_ulcer_disease, mild_liver_disease, diabetes_without_cc,
    diabetes_with_cc, paraplegia, renal_disease, malignant_cancer, severe_liver_disease,
    metastatic_solid_tumor, aids, charlson_comorbidity_index
FROM mimiciv_derived.charlson
