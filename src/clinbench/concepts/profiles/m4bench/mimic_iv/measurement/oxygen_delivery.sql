-- Concept: oxygen_delivery
-- Definition: Supplemental oxygen per patient and charting time: O2 flow (223834, with BiPAP
--   O2 flow 227582 merged into it), additional O2 flow (227287) and up to four O2 delivery
--   devices (226732) charted at that time. One flow row per item and time is kept: the
--   latest stored, then the highest.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   measurement/oxygen_delivery, as `m4 init-derived mimic-iv` builds it.
-- Grain: subject_id, charttime
-- Deviations: differs from the mimic-code profile in the order of the devices charted at one time:
--   M4's copy numbers them alphabetically (ORDER BY value), mimic-code by the latest stored, so
--   o2_delivery_device_1 can name another device. Of two flows stored at the same instant M4's copy
--   leaves the pick to the engine; clinbench keeps the higher. A device charting is kept only when
--   an O2 flow is charted in the same minute (device-only rows disappear), as in both anchors.
WITH flow_rows AS (
    SELECT
        subject_id
        , stay_id
        , charttime
        , CASE WHEN itemid IN (223834, 227582) THEN 223834 ELSE itemid END AS itemid
        , valuenum
        , ROW_NUMBER() OVER (
            PARTITION BY subject_id, charttime, CASE WHEN itemid IN (223834, 227582) THEN 223834 ELSE itemid END
            ORDER BY storetime DESC NULLS LAST, valuenum DESC NULLS LAST
        ) AS rn
    FROM mimiciv_icu.chartevents
    WHERE value IS NOT NULL
        AND itemid IN (
            223834 -- O2 flow
            , 227582 -- BiPAP O2 flow
            , 227287 -- additional O2 flow
        )
)

, devices AS (
    SELECT
        subject_id
        , stay_id
        , charttime
        , value AS o2_device
        , ROW_NUMBER() OVER (
            PARTITION BY subject_id, charttime
            ORDER BY value NULLS FIRST
        ) AS rn
    FROM mimiciv_icu.chartevents
    WHERE itemid = 226732 -- O2 delivery device(s)
)

, joined AS (
    SELECT
        f.subject_id
        , f.stay_id
        , f.charttime
        , f.itemid
        , f.valuenum
        , d.o2_device
        , d.rn AS device_rank
    FROM flow_rows AS f
    LEFT JOIN devices AS d
        ON f.subject_id = d.subject_id
            AND f.charttime = d.charttime
    WHERE f.rn = 1
)

SELECT
    subject_id
    , MAX(stay_id) AS stay_id
    , charttime
    , MAX(CASE WHEN itemid = 223834 THEN valuenum END) AS o2_flow
    , MAX(CASE WHEN itemid = 227287 THEN valuenum END) AS o2_flow_additional
    , MAX(CASE WHEN device_rank = 1 THEN o2_device END) AS o2_delivery_device_1
    , MAX(CASE WHEN device_rank = 2 THEN o2_device END) AS o2_delivery_device_2
    , MAX(CASE WHEN device_rank = 3 THEN o2_device END) AS o2_delivery_device_3
    , MAX(CASE WHEN device_rank = 4 THEN o2_device END) AS o2_delivery_device_4
FROM joined
GROUP BY subject_id, charttime
