-- Concept: oasis-24h__missing_as_null
-- Definition: OASIS of task mimic-oasis-24h with every component that had no measurement in
--   the window left empty instead of scored 0; the total is the default's (it counts an empty
--   component 0).
-- Source: score/oasis (which leaves unmeasured components empty); Johnson et al. 2013.
--   Clinical reason: a 0 reads as "measured and normal"; a stay without charted GCS or urine
--   output is not evidence of a normal value, and studies that handle missingness explicitly
--   need the gaps visible.
-- Grain: stay_id
-- Deviations: unmeasured component = empty (default target: 0); the total is unchanged.
SELECT t.subject_id, t.hadm_id, t.stay_id, t.oasis,
    CASE WHEN o.preiculos_score IS NOT NULL THEN t.preiculos_score END AS preiculos_score,
    o.age_score, o.gcs_score, o.heart_rate_score, o.mbp_score, o.resp_rate_score,
    o.temp_score, o.urineoutput_score, o.mechvent_score, o.electivesurgery_score
FROM mimiciv_derived.target_oasis_24h AS t
LEFT JOIN mimiciv_derived.oasis AS o ON o.stay_id = t.stay_id
