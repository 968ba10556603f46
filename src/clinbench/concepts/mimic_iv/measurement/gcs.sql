-- Concept: gcs
-- Definition: Glasgow Coma Scale per charting time (motor 223901, verbal 223900, eyes
--   220739). A verbal response charted 'No Response-ETT' (intubated) is stored as verbal 0,
--   flags gcs_unable = 1 and sets the total to 15 (the pre-sedation convention of SAPS II).
--   A component missing at a charting time is carried from the previous charting of the
--   stay when that one is less than 6 h earlier; otherwise it defaults to normal (motor 6,
--   verbal 5, eyes 4). A missing verbal after an intubated charting (< 6 h) also gives 15;
--   after an intubated charting, an extubated one does not reuse the earlier components.
-- Source: Teasdale & Jennett, Lancet 1974; mimic-code measurement/gcs (MIT-LCP).
-- Grain: stay_id, charttime
-- Deviations: none.
WITH base AS (
    SELECT
        subject_id
        , stay_id
        , charttime
        , MAX(CASE WHEN itemid = 223901 THEN valuenum END) AS gcs_motor
        , MAX(CASE
            WHEN itemid = 223900 AND value = 'No Response-ETT' THEN 0
            WHEN itemid = 223900 THEN valuenum
        END) AS gcs_verbal
        , MAX(CASE WHEN itemid = 220739 THEN valuenum END) AS gcs_eyes
        , MAX(CASE WHEN itemid = 223900 AND value = 'No Response-ETT' THEN 1 ELSE 0 END) AS endotrach_flag
        , ROW_NUMBER() OVER (PARTITION BY stay_id ORDER BY charttime) AS rn
    FROM mimiciv_icu.chartevents
    WHERE itemid IN (223900, 223901, 220739)
    GROUP BY subject_id, stay_id, charttime
)

, with_previous AS (
    SELECT
        b.*
        , prev.gcs_verbal AS verbal_prev
        , prev.gcs_motor AS motor_prev
        , prev.gcs_eyes AS eyes_prev
        , CASE
            WHEN b.gcs_verbal = 0 THEN 15
            WHEN b.gcs_verbal IS NULL AND prev.gcs_verbal = 0 THEN 15
            -- just extubated: do not carry the intubated charting's components
            WHEN prev.gcs_verbal = 0 THEN
                COALESCE(b.gcs_motor, 6) + COALESCE(b.gcs_verbal, 5) + COALESCE(b.gcs_eyes, 4)
            ELSE
                COALESCE(b.gcs_motor, prev.gcs_motor, 6)
                + COALESCE(b.gcs_verbal, prev.gcs_verbal, 5)
                + COALESCE(b.gcs_eyes, prev.gcs_eyes, 4)
        END AS gcs
    FROM base AS b
    LEFT JOIN base AS prev
        ON b.stay_id = prev.stay_id
            AND b.rn = prev.rn + 1
            AND prev.charttime > b.charttime - INTERVAL 6 HOUR
)

SELECT
    subject_id
    , stay_id
    , charttime
    , gcs
    , COALESCE(gcs_motor, motor_prev) AS gcs_motor
    , COALESCE(gcs_verbal, verbal_prev) AS gcs_verbal
    , COALESCE(gcs_eyes, eyes_prev) AS gcs_eyes
    , endotrach_flag AS gcs_unable
FROM with_previous
