-- Concept: charlson
-- Definition: reference output of task mimic-charlson-raw: the 17 Charlson comorbidity flags,
--   the age score and the Charlson Comorbidity Index, one row per hospital admission. Age
--   score: 0 up to 50 years inclusive, 1 above 50 up to 60, 2 above 60 up to 70, 3 above 70 up
--   to 80, 4 above 80 (age from mimiciv_derived.age; empty, like the flags, for an admission
--   without diagnoses).
-- Source: comorbidity/charlson (Charlson 1987; Quan 2005); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/charlson.sql, whose age bands are `age <= 50, <= 60, <= 70, <= 80`.
-- Grain: hadm_id
-- Deviations: from the charlson concept (mimic-code: `age < 50, < 60, < 70, < 80`), a patient
--   aged exactly 50, 60, 70 or 80 scores one age point less, and the index follows. Variant
--   charlson__age_below_bands keeps the concept's bands.
WITH banded AS (
    SELECT c.*, CASE WHEN c.age_score IS NOT NULL THEN a.age_score END AS anchor_age_score
    FROM mimiciv_derived.charlson AS c
    LEFT JOIN (
        SELECT hadm_id,
            CASE WHEN age <= 50 THEN 0 WHEN age <= 60 THEN 1 WHEN age <= 70 THEN 2 WHEN age <= 80 THEN 3 ELSE 4 END AS age_score
        FROM mimiciv_derived.age
    ) AS a ON a.hadm_id = c.hadm_id
)
SELECT c.subject_id, c.hadm_id,
    c.anchor_age_score AS age_score,
    c.myocardial_infarct, c.congestive_heart_failure, c.peripheral_vascular_disease,
    c.cerebrovascular_disease, c.dementia, c.chronic_pulmonary_disease, c.rheumatic_disease,
    c.peptic_ulcer_disease, c.mild_liver_disease, c.diabetes_without_cc, c.diabetes_with_cc,
    c.paraplegia, c.renal_disease, c.malignant_cancer, c.severe_liver_disease,
    c.metastatic_solid_tumor, c.aids,
    c.charlson_comorbidity_index - c.age_score + c.anchor_age_score AS charlson_comorbidity_index
FROM banded AS c
