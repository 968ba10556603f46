-- Concept: sepsis3
-- Definition: reference output of task mimic-sepsis3-raw: the first Sepsis-3 event per ICU
--   stay (suspected infection with a 24 h SOFA >= 2 whose window ends 48 h before to 24 h after
--   it), with its times and SOFA components; sepsis3 is 1.
-- Source: sepsis/sepsis3 (Singer et al. 2016); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/sepsis3.sql (mimic-code sepsis3 over mimic-code's
--   suspicion_of_infection, not over the suspicion-infection task reference).
-- Grain: stay_id
-- Deviations: none from the sepsis3 concept; the flag is written 1 instead of true.
SELECT subject_id, stay_id, antibiotic_time, culture_time, suspected_infection_time, sofa_time,
    sofa_score, respiration, coagulation, liver, cardiovascular, cns, renal,
    CAST(sepsis3 AS INTEGER) AS sepsis3
FROM mimiciv_derived.sepsis3
