-- Concept: charlson__age_below_bands
-- Definition: the Charlson index of task mimic-charlson-raw with the age bands of mimic-code's
--   charlson: 0 below 50 years, 1 from 50 to below 60, 2 from 60 to below 70, 3 from 70 to
--   below 80, 4 from 80 (default: 0 up to 50 inclusive, ... 4 above 80).
-- Source: comorbidity/charlson (mimic-code DuckDB build: `age < 50, < 60, < 70, < 80`);
--   Charlson et al., J Clin Epidemiol 1994 (combined age-comorbidity score: one point per decade
--   from age 50). Clinical reason: the combined score adds a point for each decade from 50,
--   so a 50-year-old scores 1; the anchor's `<= 50` bands give a patient aged exactly 50, 60, 70
--   or 80 one point less than the published scheme.
-- Grain: hadm_id
-- Deviations: age bands `< 50, < 60, < 70, < 80` (default target: `<= 50, <= 60, <= 70, <= 80`);
--   the flags are the default's.
SELECT subject_id, hadm_id, age_score, myocardial_infarct, congestive_heart_failure,
    peripheral_vascular_disease, cerebrovascular_disease, dementia, chronic_pulmonary_disease,
    rheumatic_disease, peptic_ulcer_disease, mild_liver_disease, diabetes_without_cc,
    diabetes_with_cc, paraplegia, renal_disease, malignant_cancer, severe_liver_disease,
    metastatic_solid_tumor, aids, charlson_comorbidity_index
FROM mimiciv_derived.charlson
