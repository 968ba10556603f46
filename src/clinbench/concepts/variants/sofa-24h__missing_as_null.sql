-- Concept: sofa-24h__missing_as_null
-- Definition: the first-day SOFA of task mimic-sofa-24h with every organ that had no
--   measurement in the window left empty instead of scored 0, and the total empty whenever
--   any organ is empty.
-- Source: score/first_day_sofa; Vincent et al. 1996. Clinical reason: the public convention
--   reads an unmeasured organ as normal, but labs are not drawn at random - a patient without
--   bilirubin or a blood gas is usually less sick, yet a patient transferred in on pressors
--   before any labs is not; a total over unmeasured organs hides that. Studies that handle
--   missingness explicitly (imputation, complete-case) need the gaps to stay visible.
-- Grain: stay_id
-- Deviations: unmeasured organ = NULL (default target: 0); sofa = NULL unless all six organs
--   were measured (default: sum with missing = 0).
SELECT subject_id, hadm_id, stay_id,
    respiration + coagulation + liver + cardiovascular + cns + renal AS sofa,
    respiration, coagulation, liver, cardiovascular, cns, renal
FROM mimiciv_derived.first_day_sofa
