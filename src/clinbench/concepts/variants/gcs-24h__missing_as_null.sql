-- Concept: gcs-24h__missing_as_null
-- Definition: the first-day lowest GCS of task mimic-gcs-24h-raw, except that a stay without
--   any GCS charted in the window is empty instead of 15 with components 6/5/4.
-- Source: firstday/first_day_gcs (which leaves such a stay empty); Teasdale & Jennett 1974.
--   Clinical reason: an uncharted GCS is not a normal GCS; filling 15 makes a stay never
--   assessed look fully conscious, which biases any analysis of neurological status.
-- Grain: stay_id
-- Deviations: no GCS charted = empty (default target: 15/6/5/4).
SELECT t.subject_id, t.hadm_id, t.stay_id,
    CASE WHEN g.has_gcs THEN t.gcs_min END AS gcs_min,
    CASE WHEN g.has_gcs THEN t.gcs_motor END AS gcs_motor,
    CASE WHEN g.has_gcs THEN t.gcs_verbal END AS gcs_verbal,
    CASE WHEN g.has_gcs THEN t.gcs_eyes END AS gcs_eyes
FROM mimiciv_derived.target_gcs_24h AS t
LEFT JOIN (
    SELECT ie.stay_id, TRUE AS has_gcs
    FROM mimiciv_icu.icustays AS ie
    WHERE EXISTS (SELECT 1 FROM mimiciv_derived.gcs AS g WHERE g.stay_id = ie.stay_id
        AND g.charttime >= ie.intime - INTERVAL 6 HOUR AND g.charttime <= ie.intime + INTERVAL 1 DAY)
) AS g ON g.stay_id = t.stay_id
