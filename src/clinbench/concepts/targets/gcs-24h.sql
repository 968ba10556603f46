-- Concept: gcs-24h
-- Definition: reference output of task mimic-gcs-24h-raw: the lowest Glasgow Coma Scale total
--   charted from 6 hours before to 24 hours after ICU admission (both ends included), with the
--   motor, verbal and eye components of that charting, one row per ICU stay. Of several
--   chartings with the same lowest total, the earliest wins (then the lowest motor, verbal, eye
--   and unable values). A stay without GCS is 15 with components 6/5/4 (normal).
-- Source: measurement/gcs (Teasdale & Jennett 1974; mimic-code carry-forward rules); the anchor
--   is M4Bench 0.5.3 benchmark/ground_truth/gcs-24h.sql.
-- Grain: stay_id
-- Deviations: from first_day_gcs (mimic-code), ties on the lowest total go to the earliest
--   charting (first_day_gcs: the latest), and a stay without GCS is 15/6/5/4 instead of empty.
--   Variants: gcs-24h__latest_charting (mimic-code's tie-break), gcs-24h__missing_as_null
--   (empty when no GCS was charted).
WITH ranked AS (
    SELECT g.stay_id, g.gcs, g.gcs_motor, g.gcs_verbal, g.gcs_eyes,
        ROW_NUMBER() OVER (
            PARTITION BY g.stay_id
            ORDER BY g.gcs NULLS FIRST, g.charttime NULLS LAST, g.gcs_motor NULLS LAST,
                g.gcs_verbal NULLS LAST, g.gcs_eyes NULLS LAST, g.gcs_unable NULLS LAST
        ) AS rn
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.gcs AS g
        ON g.stay_id = ie.stay_id
        AND g.charttime >= ie.intime - INTERVAL 6 HOUR
        AND g.charttime <= ie.intime + INTERVAL 1 DAY
)
SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
    COALESCE(r.gcs, 15) AS gcs_min,
    COALESCE(r.gcs_motor, 6) AS gcs_motor,
    COALESCE(r.gcs_verbal, 5) AS gcs_verbal,
    COALESCE(r.gcs_eyes, 4) AS gcs_eyes
FROM mimiciv_icu.icustays AS ie
LEFT JOIN ranked AS r ON r.stay_id = ie.stay_id AND r.rn = 1
