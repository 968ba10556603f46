-- Concept: sepsis3
-- Definition: reference output of task mimic-sepsis3-raw: the first Sepsis-3 event per ICU
--   stay (suspected infection with a 24 h SOFA >= 2 whose window ends 48 h before to 24 h after
--   it), with its times and SOFA components.
-- Source: sepsis/sepsis3 (Singer et al. 2016).
-- Grain: stay_id
-- Deviations: none.
SELECT subject_id, stay_id, antibiotic_time, culture_time, suspected_infection_time, sofa_time,
    sofa_score, respiration, coagulation, liver, cardiovascular, cns, renal, sepsis3
FROM mimiciv_derived.sepsis3
