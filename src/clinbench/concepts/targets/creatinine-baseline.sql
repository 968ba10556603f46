-- Concept: creatinine-baseline
-- Definition: reference output of task mimic-creatinine-baseline: for each adult (age >= 18)
--   hospital admission, the lowest creatinine, the CKD flag (ICD-9 585 / ICD-10 N18), the MDRD
--   estimate without the race coefficient (creatinine giving eGFR 75 mL/min/1.73 m2) and the
--   baseline creatinine chosen from them.
-- Source: measurement/creatinine_baseline (KDIGO 2012; MDRD, Levey et al. 1999).
-- Grain: hadm_id
-- Deviations: none. (The adult filter and the MDRD back-calculation live in
--   creatinine_baseline, the one place for those rules.)
SELECT hadm_id, gender, age, scr_min, ckd, mdrd_est, scr_baseline
FROM mimiciv_derived.creatinine_baseline
