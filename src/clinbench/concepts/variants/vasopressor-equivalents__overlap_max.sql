-- Concept: vasopressor-equivalents__overlap_max
-- Definition: the norepinephrine-equivalent dose of task mimic-vasopressor-equivalents with
--   one row per interval: when two charted rows of one agent cover the same interval (an
--   overlapping restart or rate change), the larger rate is used instead of repeating the
--   interval once per combination of rows.
-- Source: medication/vasoactive_agent and norepinephrine_equivalent_dose (same cuts, formula
--   and DECIMAL(38, 9) rounding), collapsed here. Clinical reason: a patient receives one
--   norepinephrine rate at a time; overlapping inputevents rows are charting artefacts, and
--   repeating the interval makes the same hour count twice with two different doses, so the
--   answer has no unique row per interval.
-- Grain: stay_id, starttime
-- Deviations: overlapping rows of one agent collapse to their maximum rate (default target:
--   one row per combination of overlapping rows, as mimic-code).
WITH agents AS (
    SELECT 'dobutamine' AS agent, stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.dobutamine
    UNION ALL SELECT 'dopamine', stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.dopamine
    UNION ALL SELECT 'epinephrine', stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.epinephrine
    UNION ALL SELECT 'norepinephrine', stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.norepinephrine
    UNION ALL SELECT 'phenylephrine', stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.phenylephrine
    UNION ALL SELECT 'vasopressin', stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.vasopressin
    UNION ALL SELECT 'milrinone', stay_id, starttime, endtime, vaso_rate FROM mimiciv_derived.milrinone
)

, cut_times AS (
    SELECT stay_id, starttime AS vasotime FROM agents WHERE starttime IS NOT NULL
    UNION
    SELECT stay_id, endtime AS vasotime FROM agents WHERE endtime IS NOT NULL
)

, intervals AS (
    SELECT
        stay_id
        , vasotime AS starttime
        , LEAD(vasotime) OVER (PARTITION BY stay_id ORDER BY vasotime) AS endtime
    FROM cut_times
)

, collapsed AS (
    SELECT
        t.stay_id
        , t.starttime
        , t.endtime
        , MAX(CASE WHEN a.agent = 'dopamine' THEN a.vaso_rate END) AS dopamine
        , MAX(CASE WHEN a.agent = 'epinephrine' THEN a.vaso_rate END) AS epinephrine
        , MAX(CASE WHEN a.agent = 'norepinephrine' THEN a.vaso_rate END) AS norepinephrine
        , MAX(CASE WHEN a.agent = 'phenylephrine' THEN a.vaso_rate END) AS phenylephrine
        , MAX(CASE WHEN a.agent = 'vasopressin' THEN a.vaso_rate END) AS vasopressin
    FROM intervals AS t
    LEFT JOIN agents AS a
        ON t.stay_id = a.stay_id
            AND t.starttime >= a.starttime
            AND t.endtime <= a.endtime
    -- the last cut of a stay ends nothing
    WHERE t.endtime IS NOT NULL
    GROUP BY t.stay_id, t.starttime, t.endtime
)
SELECT stay_id, starttime, endtime,
    CAST(ROUND(CAST(
        COALESCE(norepinephrine, 0)
        + COALESCE(epinephrine, 0)
        + COALESCE(phenylephrine / 10, 0)
        + COALESCE(dopamine / 100, 0)
        + COALESCE(vasopressin * 2.5 / 60, 0)
    AS DECIMAL(38, 9)), 4) AS DOUBLE) AS norepinephrine_equivalent_dose
FROM collapsed
WHERE norepinephrine IS NOT NULL
    OR epinephrine IS NOT NULL
    OR phenylephrine IS NOT NULL
    OR dopamine IS NOT NULL
    OR vasopressin IS NOT NULL
