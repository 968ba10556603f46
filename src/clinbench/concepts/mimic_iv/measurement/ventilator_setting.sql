-- Concept: ventilator_setting
-- Definition: Ventilator settings per patient and charting time: set/total/spontaneous
--   respiratory rate, minute volume, set/observed/spontaneous tidal volume, plateau
--   pressure, PEEP (220339, 224700; kept in [0, 100]), FiO2 (223835; 0.2-1 -> x100, 20-100
--   kept, values in (1, 20) are O2 flows in the wrong field -> NULL), flow rate, and the
--   ventilator mode (223849), Hamilton mode (229314) and ventilator type (223848) as text.
-- Source: mimic-code measurement/ventilator_setting (MIT-LCP).
-- Grain: subject_id, charttime
-- Deviations: none.
-- Rewritten for speed with identical rows (the 15 items as ranges the scan filters on, not an IN join; 0.0142 -> 0.0112 s CPU at 2,000 patients;
--   itemid is INTEGER, so each BETWEEN holds exactly the listed items, and NULL fails both forms).
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
        -- PEEP set 220339, FiO2 223835, ventilator type 223848, ventilator mode 223849;
        -- tidal volume set, observed, spontaneous 224684-224686, minute volume 224687,
        -- respiratory rate set, spontaneous, total 224688-224690, flow rate (L) 224691;
        -- plateau pressure 224696, total PEEP level 224700, ventilator mode (Hamilton) 229314
        AND (
            itemid = 220339 OR itemid = 223835 OR itemid BETWEEN 223848 AND 223849
            OR itemid BETWEEN 224684 AND 224691 OR itemid = 224696 OR itemid = 224700
            OR itemid = 229314
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
