-- Concept: sofa-24h
-- Definition: reference output of task mimic-sofa-24h (and its raw twin): the SOFA score and
--   its six organ components over 6 hours before to 24 hours after ICU admission, one row per
--   ICU stay, unmeasured components scored 0.
-- Source: score/first_day_sofa (Vincent et al. 1996; task convention in TASKS.md).
-- Grain: stay_id
-- Deviations: those of first_day_sofa (ventilated P/F 200-399 scores 1-2; infusions running
--   into the window count; 0.1 mcg/kg/min scores 3).
SELECT subject_id, hadm_id, stay_id,
    sofa,
    COALESCE(respiration, 0) AS respiration,
    COALESCE(coagulation, 0) AS coagulation,
    COALESCE(liver, 0) AS liver,
    COALESCE(cardiovascular, 0) AS cardiovascular,
    COALESCE(cns, 0) AS cns,
    COALESCE(renal, 0) AS renal
FROM mimiciv_derived.first_day_sofa
