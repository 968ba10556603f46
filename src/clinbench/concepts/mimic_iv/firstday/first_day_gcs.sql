-- Concept: first_day_gcs
-- Definition: The lowest Glasgow Coma Scale charted from 6 h before to 24 h after ICU
--   admission (both ends included), with the motor, verbal and eye components and the
--   intubation flag of that same charting. Intubated chartings count as 15 (see gcs). A stay
--   without GCS charting in the window has NULLs.
-- Source: mimic-code firstday/first_day_gcs (MIT-LCP).
-- Grain: stay_id
-- Deviations: none. Ties on the lowest GCS go to the latest charting, as in the public DuckDB
--   build (ORDER BY gcs, charttime DESC), so the reported components are deterministic.
WITH ranked AS (
    SELECT
        ie.stay_id
        , g.gcs
        , g.gcs_motor
        , g.gcs_verbal
        , g.gcs_eyes
        , g.gcs_unable
        , ROW_NUMBER() OVER (PARTITION BY ie.stay_id ORDER BY g.gcs, g.charttime DESC) AS gcs_seq
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.gcs AS g
        ON ie.stay_id = g.stay_id
            AND g.charttime >= ie.intime - INTERVAL 6 HOUR
            AND g.charttime <= ie.intime + INTERVAL 1 DAY
)

SELECT
    ie.subject_id
    , ie.stay_id
    , r.gcs AS gcs_min
    , r.gcs_motor
    , r.gcs_verbal
    , r.gcs_eyes
    , r.gcs_unable
FROM mimiciv_icu.icustays AS ie
LEFT JOIN ranked AS r
    ON ie.stay_id = r.stay_id
        AND r.gcs_seq = 1
