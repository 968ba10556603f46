-- Concept: ventilator_setting
-- Definition: Ventilator settings per patient and charting time: set/total/spontaneous
--   respiratory rate, minute volume, set/observed/spontaneous tidal volume, plateau
--   pressure, PEEP (220339, 224700; kept in [0, 100]), FiO2 (223835; 0.2-1 -> x100, 20-100
--   kept, values in (1, 20) are O2 flows in the wrong field -> NULL), flow rate, and the
--   ventilator mode (223849), Hamilton mode (229314) and ventilator type (223848) as text.
-- Source: mimic-code measurement/ventilator_setting (MIT-LCP).
-- Grain: subject_id, charttime
-- Deviations: none.
WITH ce AS (
    SELECT
        subject_id
        , stay_id
        , charttime
        , itemid
        , value
        , CASE
            WHEN itemid = 223835 THEN CASE
                WHEN valuenum >= 0.20 AND valuenum <= 1 THEN valuenum * 100
                WHEN valuenum >= 20 AND valuenum <= 100 THEN valuenum
            END
            WHEN itemid IN (220339, 224700) THEN CASE
                WHEN valuenum > 100 OR valuenum < 0 THEN NULL
                ELSE valuenum
            END
            ELSE valuenum
        END AS valuenum
    FROM mimiciv_icu.chartevents
    WHERE value IS NOT NULL
        AND stay_id IS NOT NULL
        AND itemid IN (
            224688 -- respiratory rate (set)
            , 224689 -- respiratory rate (spontaneous)
            , 224690 -- respiratory rate (total)
            , 224687 -- minute volume
            , 224685, 224684, 224686 -- tidal volume observed, set, spontaneous
            , 224696 -- plateau pressure
            , 220339, 224700 -- PEEP set, total PEEP level
            , 223835 -- FiO2
            , 223849 -- ventilator mode
            , 229314 -- ventilator mode (Hamilton)
            , 223848 -- ventilator type
            , 224691 -- flow rate (L)
        )
)

SELECT
    subject_id
    , MAX(stay_id) AS stay_id
    , charttime
    , MAX(CASE WHEN itemid = 224688 THEN valuenum END) AS respiratory_rate_set
    , MAX(CASE WHEN itemid = 224690 THEN valuenum END) AS respiratory_rate_total
    , MAX(CASE WHEN itemid = 224689 THEN valuenum END) AS respiratory_rate_spontaneous
    , MAX(CASE WHEN itemid = 224687 THEN valuenum END) AS minute_volume
    , MAX(CASE WHEN itemid = 224684 THEN valuenum END) AS tidal_volume_set
    , MAX(CASE WHEN itemid = 224685 THEN valuenum END) AS tidal_volume_observed
    , MAX(CASE WHEN itemid = 224686 THEN valuenum END) AS tidal_volume_spontaneous
    , MAX(CASE WHEN itemid = 224696 THEN valuenum END) AS plateau_pressure
    , MAX(CASE WHEN itemid IN (220339, 224700) THEN valuenum END) AS peep
    , MAX(CASE WHEN itemid = 223835 THEN valuenum END) AS fio2
    , MAX(CASE WHEN itemid = 224691 THEN valuenum END) AS flow_rate
    , MAX(CASE WHEN itemid = 223849 THEN value END) AS ventilator_mode
    , MAX(CASE WHEN itemid = 229314 THEN value END) AS ventilator_mode_hamilton
    , MAX(CASE WHEN itemid = 223848 THEN value END) AS ventilator_type
FROM ce
GROUP BY subject_id, charttime
