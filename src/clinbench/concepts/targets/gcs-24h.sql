-- Concept: gcs-24h
-- Definition: reference output of task mimic-gcs-24h-raw: the lowest Glasgow Coma Scale total
--   from 6 hours before to 24 hours after ICU admission, with the motor, verbal and eye
--   components charted at that lowest total, one row per ICU stay (empty when no GCS was
--   charted).
-- Source: firstday/first_day_gcs (Teasdale & Jennett 1974; mimic-code GCS carry-forward rules).
-- Grain: stay_id
-- Deviations: none.
SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
    g.gcs_min, g.gcs_motor, g.gcs_verbal, g.gcs_eyes
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.first_day_gcs AS g ON g.stay_id = ie.stay_id
