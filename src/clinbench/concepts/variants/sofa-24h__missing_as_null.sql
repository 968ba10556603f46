-- Concept: sofa-24h__missing_as_null
-- Definition: the first-day SOFA of task mimic-sofa-24h with every organ that had no
--   measurement in the window left empty instead of scored 0, and the total empty whenever
--   any organ is empty.
-- Source: score/first_day_sofa (which leaves unmeasured organs empty); Vincent et al. 1996.
--   Clinical reason: the public convention reads an unmeasured organ as normal, but labs are
--   not drawn at random - a patient without bilirubin or a blood gas is usually less sick, yet
--   a patient transferred in on pressors before any labs is not; a total over unmeasured organs
--   hides that. Studies that handle missingness explicitly (imputation, complete-case) need the
--   gaps to stay visible.
-- Grain: stay_id
-- Deviations: unmeasured organ = NULL (default target: 0); sofa = NULL unless all six organs
--   were measured (default: sum with missing = 0). Measured organs keep the default's score.
WITH organs AS (
    SELECT t.subject_id, t.hadm_id, t.stay_id,
        CASE WHEN s.respiration IS NOT NULL THEN t.respiration END AS respiration,
        CASE WHEN s.coagulation IS NOT NULL THEN t.coagulation END AS coagulation,
        CASE WHEN s.liver IS NOT NULL THEN t.liver END AS liver,
        CASE WHEN s.cardiovascular IS NOT NULL THEN t.cardiovascular END AS cardiovascular,
        CASE WHEN s.cns IS NOT NULL THEN t.cns END AS cns,
        CASE WHEN s.renal IS NOT NULL THEN t.renal END AS renal
    FROM mimiciv_derived.target_sofa_24h AS t
    LEFT JOIN mimiciv_derived.first_day_sofa AS s ON s.stay_id = t.stay_id
)
SELECT subject_id, hadm_id, stay_id,
    respiration + coagulation + liver + cardiovascular + cns + renal AS sofa,
    respiration, coagulation, liver, cardiovascular, cns, renal
FROM organs
