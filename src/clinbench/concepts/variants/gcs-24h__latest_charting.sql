-- Concept: gcs-24h__latest_charting
-- Definition: the first-day lowest GCS of task mimic-gcs-24h-raw, except that of several
--   chartings with the same lowest total the latest one gives the components (default: the
--   earliest). A stay without GCS is 15/6/5/4 as in the default.
-- Source: firstday/first_day_gcs (mimic-code orders ties by charttime DESC); Teasdale &
--   Jennett 1974. Clinical reason: the same total can hide different components (E1V4M6 and
--   E4V1M6 are both 11); when the lowest total recurs, the latest assessment describes the
--   patient's current neurological state, which is what a first-day severity picture reports.
-- Grain: stay_id
-- Deviations: ties on the lowest total go to the latest charting (default target: earliest);
--   everything else is the default's SQL.
WITH ranked AS (
    SELECT g.stay_id, g.gcs, g.gcs_motor, g.gcs_verbal, g.gcs_eyes,
        ROW_NUMBER() OVER (
            PARTITION BY g.stay_id
            ORDER BY g.gcs NULLS FIRST, g.charttime DESC NULLS LAST, g.gcs_motor NULLS LAST,
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
