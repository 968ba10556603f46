-- Concept: gcs_first_day
-- Definition: the lowest Glasgow Coma Scale of an eICU unit stay from 6 hours before to
--   24 hours after unit admission (offsets -360 to 1440 minutes, both included). A charted
--   total within 3-15 is used as is; otherwise the total is motor + verbal + eyes with an
--   uncharted component counted as normal (6/5/4). Ties go to the earliest offset; the
--   components are those of that chart. A stay without any GCS gets 15 (motor 6, verbal 5,
--   eyes 4).
-- Source: Teasdale & Jennett 1974; eicu-code pivoted-gcs; task convention for eicu-gcs in
--   docs/tasks.md.
-- Grain: patientunitstayid
-- Deviations: when the minimum comes from a charted total, its components are reported as
--   charted (empty when not charted) rather than filled as normal, so that they never
--   contradict the total.
WITH scored AS (
    SELECT patientunitstayid, chartoffset,
        CASE WHEN gcs IS NOT NULL THEN gcs
            ELSE COALESCE(gcsmotor, 6) + COALESCE(gcsverbal, 5) + COALESCE(gcseyes, 4) END AS gcs_total,
        CASE WHEN gcs IS NOT NULL THEN gcsmotor ELSE COALESCE(gcsmotor, 6) END AS gcs_motor,
        CASE WHEN gcs IS NOT NULL THEN gcsverbal ELSE COALESCE(gcsverbal, 5) END AS gcs_verbal,
        CASE WHEN gcs IS NOT NULL THEN gcseyes ELSE COALESCE(gcseyes, 4) END AS gcs_eyes
    FROM eicu_derived.pivoted_gcs
    WHERE chartoffset >= -360 AND chartoffset <= 1440
),
ranked AS (
    SELECT *, ROW_NUMBER() OVER (
        PARTITION BY patientunitstayid ORDER BY gcs_total, chartoffset, gcs_motor, gcs_verbal, gcs_eyes
    ) AS rn
    FROM scored
)
SELECT pt.patientunitstayid, pt.uniquepid, pt.patienthealthsystemstayid,
    CAST(COALESCE(r.gcs_total, 15) AS INTEGER) AS gcs_min,
    CAST(CASE WHEN r.patientunitstayid IS NULL THEN 6 ELSE r.gcs_motor END AS INTEGER) AS gcs_motor,
    CAST(CASE WHEN r.patientunitstayid IS NULL THEN 5 ELSE r.gcs_verbal END AS INTEGER) AS gcs_verbal,
    CAST(CASE WHEN r.patientunitstayid IS NULL THEN 4 ELSE r.gcs_eyes END AS INTEGER) AS gcs_eyes,
    r.chartoffset AS gcs_offset
FROM eicu_crd.patient AS pt
LEFT JOIN ranked AS r ON r.patientunitstayid = pt.patientunitstayid AND r.rn = 1
