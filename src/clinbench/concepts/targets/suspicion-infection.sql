-- Concept: suspicion-infection
-- Definition: reference output of task mimic-suspicion-infection: one row per systemic
--   antibiotic prescription (ab_id = row number per subject by start time, stop time - a
--   missing one first - and name) with whether a culture was drawn within 72 h before or
--   24 h after it (calendar days when only a date is known), the suspected-infection and
--   culture times, the specimen and whether it was positive.
-- Source: sepsis/suspicion_of_infection (Seymour et al. 2016).
-- Grain: subject_id, ab_id
-- Deviations: those of suspicion_of_infection (a same-minute culture counts as before; a
--   cancelled culture is not positive; same-minute specimens report a positive one first).
SELECT subject_id, stay_id, hadm_id, ab_id, antibiotic, antibiotic_time, suspected_infection,
    suspected_infection_time, culture_time, specimen, positive_culture
FROM mimiciv_derived.suspicion_of_infection
