-- Concept: meld-24h
-- Definition: reference output of task mimic-meld-24h: MELD-Na from the first-day labs
--   (creatinine, bilirubin, INR, sodium; RRT sets creatinine to 4.0), one row per ICU stay.
-- Source: organfailure/meld (OPTN MELD-Na 2016).
-- Grain: stay_id
-- Deviations: none.
SELECT subject_id, hadm_id, stay_id, meld
FROM mimiciv_derived.meld
