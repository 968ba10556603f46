-- Concept: vasoactive_agent
-- Definition: The ICU stay cut into intervals at every start and end time of any vasoactive
--   infusion; for each interval the rate of each agent running through all of it:
--   dopamine, epinephrine, norepinephrine, phenylephrine, dobutamine, milrinone (mcg/kg/min)
--   and vasopressin (units/hour). Intervals where nothing runs are kept (all NULL).
-- Source: mimic-code medication/vasoactive_agent (MIT-LCP).
-- Grain: stay_id, starttime
-- Deviations: when two rows of one agent cover the same interval, the larger rate is kept
--   (the public code emits one row per combination, so its grain is not unique).
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

SELECT
    t.stay_id
    , t.starttime
    , t.endtime
    , MAX(CASE WHEN a.agent = 'dopamine' THEN a.vaso_rate END) AS dopamine
    , MAX(CASE WHEN a.agent = 'epinephrine' THEN a.vaso_rate END) AS epinephrine
    , MAX(CASE WHEN a.agent = 'norepinephrine' THEN a.vaso_rate END) AS norepinephrine
    , MAX(CASE WHEN a.agent = 'phenylephrine' THEN a.vaso_rate END) AS phenylephrine
    , MAX(CASE WHEN a.agent = 'vasopressin' THEN a.vaso_rate END) AS vasopressin
    , MAX(CASE WHEN a.agent = 'dobutamine' THEN a.vaso_rate END) AS dobutamine
    , MAX(CASE WHEN a.agent = 'milrinone' THEN a.vaso_rate END) AS milrinone
FROM intervals AS t
LEFT JOIN agents AS a
    ON t.stay_id = a.stay_id
        AND t.starttime >= a.starttime
        AND t.endtime <= a.endtime
-- the last cut of a stay ends nothing
WHERE t.endtime IS NOT NULL
GROUP BY t.stay_id, t.starttime, t.endtime
