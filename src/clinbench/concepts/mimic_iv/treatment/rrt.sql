-- Concept: rrt
-- Definition: Renal replacement therapy (dialysis) documentation per ICU stay and time, with
--   dialysis_present (any dialysis documentation: catheter, settings, fluids), dialysis_active
--   (documentation that implies therapy is running: flows, rates, fluid removal, an 'In use'
--   peritoneal catheter) and dialysis_type (CRRT mode text, Peritoneal, IHD, CRRT, CVVHD,
--   CVVHDF, SCUF). Sources: dialysis chartevents items; CRRT KCl/calcium inputevents
--   (227536, 227525) with amount > 0 (active CRRT); dialysis procedureevents (hemodialysis
--   225441, CRRT 225802, CVVHD 225803, peritoneal 225805, CVVHDF 225809, SCUF 225955 are
--   active; dialysis catheter 224270 and CRRT filter change 225436 are present only). A
--   charting (or range start) inside a procedure/input range gives one row per covering
--   range, with that range's flags and type (so a charted CRRT mode inside a CRRT input range
--   reads 'CRRT'); a charting covered by no range keeps its own flags and charted type.
-- Source: mimic-code treatment/rrt (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, charttime; not unique: one row per distinct charted documentation and
--   covering range at a time
-- Deviations: none. (clinbench used to collapse a time to one row, maximum flags and the
--   covering range's type; no task reads rrt rows or dialysis_type, and the first-day flags
--   are maxima, so that convention has no task-level variant.)
WITH ce AS (
    SELECT
        stay_id
        , charttime
        , 1 AS dialysis_present
        , CASE
            WHEN itemid = 225965 AND value = 'In use' THEN 1
            WHEN itemid IN (
                226499, 224154, 225183, 227438, 224191, 225806, 225807, 228004, 228005, 228006
                , 224144, 224145, 224153, 226457
            ) THEN 1
            ELSE 0
        END AS dialysis_active
        , CASE
            WHEN itemid = 227290 THEN value -- CRRT mode
            WHEN itemid IN (
                225810, 225806, 225807, 227639, 225959, 225951, 225952, 225961, 225953, 225963
                , 225965, 227638, 227640
            ) THEN 'Peritoneal'
            WHEN itemid = 226499 THEN 'IHD' -- hemodialysis output
        END AS dialysis_type
    FROM mimiciv_icu.chartevents
    WHERE itemid IN (
            -- checkboxes
            226118, 227357, 225725
            -- numeric
            , 226499, 224154, 225810, 227639, 225183, 227438, 224191, 225806, 225807, 228004
            , 228005, 228006, 224144, 224145, 224149, 224150, 224151, 224152, 224153, 224404
            , 224406, 226457, 225959
            -- text
            , 224135, 224139, 224146, 225323, 225740, 225776, 225951, 225952, 225953, 225954
            , 225956, 225958, 225961, 225963, 225965, 225976, 225977, 227124, 227290, 227638
            , 227640, 227753
        )
        AND value IS NOT NULL
)

, mv_ranges AS (
    SELECT stay_id, starttime, endtime, 1 AS dialysis_present, 1 AS dialysis_active, 'CRRT' AS dialysis_type
    FROM mimiciv_icu.inputevents
    WHERE itemid IN (227536, 227525) -- KCl (CRRT), calcium gluconate (CRRT)
        AND amount > 0
    UNION
    SELECT
        stay_id
        , starttime
        , endtime
        , 1 AS dialysis_present
        , CASE WHEN itemid NOT IN (224270, 225436) THEN 1 ELSE 0 END AS dialysis_active
        , CASE
            WHEN itemid = 225441 THEN 'IHD'
            WHEN itemid = 225802 THEN 'CRRT'
            WHEN itemid = 225803 THEN 'CVVHD'
            WHEN itemid = 225805 THEN 'Peritoneal'
            WHEN itemid = 225809 THEN 'CVVHDF'
            WHEN itemid = 225955 THEN 'SCUF'
        END AS dialysis_type
    FROM mimiciv_icu.procedureevents
    WHERE itemid IN (225441, 225802, 225803, 225805, 224270, 225809, 225955, 225436)
        AND value IS NOT NULL
)

, stg0 AS (
    SELECT stay_id, charttime, dialysis_present, dialysis_active, dialysis_type FROM ce
    UNION
    SELECT stay_id, starttime AS charttime, dialysis_present, dialysis_active, dialysis_type FROM mv_ranges
)

-- one row per charting and covering range: a range's flags and type replace the charted ones
SELECT
    stg0.stay_id
    , stg0.charttime
    , COALESCE(mv.dialysis_present, stg0.dialysis_present) AS dialysis_present
    , COALESCE(mv.dialysis_active, stg0.dialysis_active) AS dialysis_active
    , COALESCE(mv.dialysis_type, stg0.dialysis_type) AS dialysis_type
FROM stg0
LEFT JOIN mv_ranges AS mv
    ON stg0.stay_id = mv.stay_id
        AND stg0.charttime >= mv.starttime
        AND stg0.charttime <= mv.endtime
