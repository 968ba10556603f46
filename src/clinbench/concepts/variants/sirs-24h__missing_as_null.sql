-- Concept: sirs-24h__missing_as_null
-- Definition: the SIRS criteria of task mimic-sirs-24h-raw with every criterion that had no
--   measurement in the window left empty instead of scored 0; the count is the default's (it
--   counts an empty criterion 0). This is mimic-code's sirs as it stands.
-- Source: score/sirs; ACCP/SCCM 1992. Clinical reason: a 0 reads as "measured and not met"; a
--   stay without a WBC count has not shown a normal count, and studies that handle missingness
--   explicitly need the gaps visible.
-- Grain: stay_id
-- Deviations: unmeasured criterion = empty (default target: 0); the count is unchanged.
SELECT subject_id, hadm_id, stay_id, sirs, temp_score, heart_rate_score, resp_score, wbc_score
FROM mimiciv_derived.sirs
