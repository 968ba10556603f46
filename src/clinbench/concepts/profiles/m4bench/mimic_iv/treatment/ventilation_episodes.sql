-- Concept: ventilation_episodes
-- Definition: Episodes of respiratory support per ICU stay, once per status rule of
--   ventilation_status: status_rule 'default' uses ventilation_status (the ventilation concept),
--   'cpap_psv_noninvasive' uses ventilation_status_cpap_psv_noninvasive (the variant).
--   Consecutive chartings with the same status form an episode; a charting 14 or more hours
--   after the previous charting of the same status starts a new one. An episode ends
--   at the next charting of any status, or at its own last charting when that next one is 14
--   or more hours away. Single-charting episodes are dropped. ventilation_seq numbers
--   a stay's episodes by start time (then end time, then status).
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   treatment/ventilation, as `m4 init-derived mimic-iv` builds it.
-- Grain: status_rule, stay_id, ventilation_seq
-- Deviations: differs from the mimic-code profile in the 14-hour gaps: M4's copy measures them in
--   exact elapsed hours (mimic-code counts hour boundaries, so 13.5 h crossing 14 boundaries splits
--   there, not here).
-- Helper: clinbench's own intermediate, read by ventilation; no anchor builds it.
WITH vs AS (
    SELECT 'default' AS status_rule, stay_id, charttime, ventilation_status
    FROM mimiciv_derived.ventilation_status
    UNION ALL
    SELECT 'cpap_psv_noninvasive' AS status_rule, stay_id, charttime, ventilation_status_cpap_psv_noninvasive
    FROM mimiciv_derived.ventilation_status
)

, vd0 AS (
    SELECT
        status_rule
        , stay_id
        , charttime
        -- previous charting with the same status (for the 14 h gap)
        , LAG(charttime) OVER (PARTITION BY status_rule, stay_id, ventilation_status ORDER BY charttime) AS charttime_lag
        -- next charting of any status (the end of a status)
        , LEAD(charttime) OVER w AS charttime_lead
        , ventilation_status
        , LAG(ventilation_status) OVER w AS ventilation_status_lag
    FROM vs
    WHERE ventilation_status IS NOT NULL
    WINDOW w AS (PARTITION BY status_rule, stay_id ORDER BY charttime)
)

, vd1 AS (
    SELECT
        *
        , CASE
            WHEN ventilation_status_lag IS NULL THEN 1
            WHEN date_diff('microseconds', charttime_lag, charttime) / 3600000000.0 >= 14 THEN 1
            WHEN ventilation_status_lag <> ventilation_status THEN 1
            ELSE 0
        END AS new_episode
    FROM vd0
)

, vd2 AS (
    SELECT
        *
        , SUM(new_episode) OVER (PARTITION BY status_rule, stay_id ORDER BY charttime) AS episode
    FROM vd1
)

, episodes AS (
    SELECT
        status_rule
        , stay_id
        , MIN(charttime) AS starttime
        , MAX(CASE
            WHEN charttime_lead IS NULL
                OR date_diff('microseconds', charttime, charttime_lead) / 3600000000.0 >= 14 THEN charttime
            ELSE charttime_lead
        END) AS endtime
        , MAX(ventilation_status) AS ventilation_status
    FROM vd2
    GROUP BY status_rule, stay_id, episode
    HAVING MIN(charttime) <> MAX(charttime)
)

SELECT
    status_rule
    , stay_id
    , ROW_NUMBER() OVER (
        PARTITION BY status_rule, stay_id ORDER BY starttime, endtime, ventilation_status
    ) AS ventilation_seq
    , starttime
    , endtime
    , ventilation_status
FROM episodes
