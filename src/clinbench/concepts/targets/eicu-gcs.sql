-- Concept: eicu-gcs
-- Definition: reference output of task eicu-gcs: the lowest GCS in the 6 h before to 24 h
--   after unit admission with its components (stays without GCS: 15 = 6/5/4), one row per
--   eICU unit stay.
-- Source: eicu/gcs_first_day.
-- Grain: patientunitstayid
-- Deviations: those of gcs_first_day.
SELECT patientunitstayid, uniquepid, patienthealthsystemstayid, gcs_min, gcs_motor, gcs_verbal, gcs_eyes
FROM eicu_derived.gcs_first_day
