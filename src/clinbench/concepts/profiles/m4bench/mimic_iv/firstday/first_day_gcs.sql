-- Concept: first_day_gcs
-- Definition: The lowest Glasgow Coma Scale charted from 6 h before to 24 h after ICU
--   admission (both ends included), with the motor, verbal and eye components and the
--   intubation flag of that same charting. Intubated chartings count as 15 (see gcs). A stay
--   without GCS charting in the window has NULLs.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   firstday/first_day_gcs, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id
-- Deviations: differs from the mimic-code profile where a stay has a charting without a total (gcs
--   NULL sorts first here, so the stay reports that charting) or a tie on the lowest GCS: M4's copy
--   orders by gcs alone; clinbench breaks its ties by the earliest charting.
WITH ranked AS (
    SELECT
        ie.stay_id
        , g.gcs
        , g.gcs_motor
        , g.gcs_verbal
        , g.gcs_eyes
        , g.gcs_unable
        , ROW_NUMBER() OVER (PARTITION BY ie.stay_id ORDER BY g.gcs NULLS FIRST, g.charttime) AS gcs_seq
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
