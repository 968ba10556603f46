-- Concept: eicu-oasis
-- Definition: reference output of task eicu-oasis: OASIS and its 10 components over 6 h before
--   to 24 h after unit admission, unmeasured components scored 0, one row per eICU unit stay.
-- Source: eicu/oasis_first_day.
-- Grain: patientunitstayid
-- Deviations: those of oasis_first_day.
SELECT patientunitstayid, uniquepid, patienthealthsystemstayid, oasis, preiculos_score,
    age_score, gcs_score, heart_rate_score, mbp_score, resp_rate_score, temp_score,
    urineoutput_score, mechvent_score, electivesurgery_score
FROM eicu_derived.oasis_first_day
