-- Concept: weight_durations
-- Definition: Body weight (kg, as charted) with the interval it
--   applies to. Admission weight (226512) and daily weights (224639) above 0 kg, one row
--   per charting; the first admission weight applies from ICU intime - 2 h; each weight lasts
--   until the next one starts, the last until outtime + 2 h; when the first weight comes after
--   intime, it is back-filled from intime - 2 h. Weights charted at the same instant each keep
--   a row: all but the last of them (in the order type, weight) get a zero-length interval,
--   so the last one applies, as one of the orders mimic-code's unordered ties can give.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   demographics/weight_durations, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, starttime, weight_type, weight; not unique: a weight charted twice at one
--   instant repeats
-- Deviations: differs from the mimic-code profile, which rounds weights to 3 places and drops those
--   of 1500 kg and above; here weights are as charted. The tie order is clinbench's (M4's copy
--   leaves it to the engine). Weights are REAL (32-bit) whatever the load's type:
--   32-bit on purpose: MIMIC's FLOAT columns are REAL in mimic-code's buildmimic load, the load M4's demo
--   outputs (the anchors) were made on. M4's own `m4 init` guesses types and reads them as DOUBLE, where
--   M4's SQL, which casts nothing, gives 64-bit values: on the demo so loaded, M4's `init-derived` and this
--   profile differ in one row each of bg (aado2_calc), kdigo_uo and kdigo_stages (uo_rt_6hr rounds the
--   other way); docs/conventions.md, SOFA.
WITH charted AS (
    SELECT
        stay_id
        , charttime
        , CASE WHEN itemid = 226512 THEN 'admit' ELSE 'daily' END AS weight_type
        , CAST(valuenum AS REAL) AS weight -- REAL: see the header's Deviations
    FROM mimiciv_icu.chartevents
    WHERE valuenum IS NOT NULL
        AND itemid IN (226512, 224639) -- Admit Wt, Daily Weight
        AND valuenum > 0
)

, numbered AS (
    SELECT
        *
        , ROW_NUMBER() OVER (PARTITION BY stay_id, weight_type ORDER BY charttime NULLS FIRST, weight) AS rn
    FROM charted
)

, started AS (
    -- the first admission weight is taken to hold from just before ICU admission
    SELECT
        n.stay_id
        , ie.outtime
        , CASE
            WHEN n.weight_type = 'admit' AND n.rn = 1 THEN ie.intime - INTERVAL 2 HOUR
            ELSE n.charttime
        END AS starttime
        , n.weight
        , n.weight_type
    FROM numbered AS n
    INNER JOIN mimiciv_icu.icustays AS ie
        ON n.stay_id = ie.stay_id
)

, wt1 AS (
    SELECT
        stay_id
        , starttime
        , COALESCE(
            LEAD(starttime) OVER (PARTITION BY stay_id ORDER BY starttime NULLS FIRST, weight_type, weight)
            , outtime + INTERVAL 2 HOUR
        ) AS endtime
        , weight
        , weight_type
    FROM started
)

, first_weight AS (
    SELECT
        stay_id
        , starttime
        , weight
        , weight_type
        , ROW_NUMBER() OVER (PARTITION BY stay_id ORDER BY starttime NULLS FIRST, weight_type, weight) AS rn
    FROM wt1
)

, backfill AS (
    -- a stay whose first weight comes after ICU admission gets it from intime - 2 h
    SELECT
        ie.stay_id
        , ie.intime - INTERVAL 2 HOUR AS starttime
        , fw.starttime AS endtime
        , fw.weight
        , fw.weight_type
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN first_weight AS fw
        ON ie.stay_id = fw.stay_id
            AND fw.rn = 1
            AND ie.intime < fw.starttime
)

SELECT stay_id, starttime, endtime, weight, weight_type FROM wt1
UNION ALL
SELECT stay_id, starttime, endtime, weight, weight_type FROM backfill
