-- Concept: vasoactive_agent
-- Definition: The ICU stay cut into intervals at every start and end time of any vasoactive
--   infusion; each interval carries the rate of every agent row running through all of it:
--   dopamine, epinephrine, norepinephrine, phenylephrine, dobutamine, milrinone (mcg/kg/min)
--   and vasopressin (units/hour). Intervals where nothing runs are kept (all NULL). When two
--   rows of one agent cover the same interval (overlapping charted rows), the interval is
--   repeated once per combination of covering rows, as mimic-code's joins produce it.
-- Source: mimic-code medication/vasoactive_agent (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, starttime; not unique: an interval repeats once per combination of
--   overlapping rows of one agent
-- Deviations: none. Task reference vasopressor-equivalents keeps one row per interval with
--   the larger dose of repeated rows, as M4Bench.
WITH cut_times AS (
    SELECT stay_id, starttime AS vasotime FROM mimiciv_derived.dobutamine
    UNION SELECT stay_id, starttime FROM mimiciv_derived.dopamine
    UNION SELECT stay_id, starttime FROM mimiciv_derived.epinephrine
    UNION SELECT stay_id, starttime FROM mimiciv_derived.norepinephrine
    UNION SELECT stay_id, starttime FROM mimiciv_derived.phenylephrine
    UNION SELECT stay_id, starttime FROM mimiciv_derived.vasopressin
    UNION SELECT stay_id, starttime FROM mimiciv_derived.milrinone
    UNION SELECT stay_id, endtime FROM mimiciv_derived.dobutamine
    UNION SELECT stay_id, endtime FROM mimiciv_derived.dopamine
    UNION SELECT stay_id, endtime FROM mimiciv_derived.epinephrine
    UNION SELECT stay_id, endtime FROM mimiciv_derived.norepinephrine
    UNION SELECT stay_id, endtime FROM mimiciv_derived.phenylephrine
    UNION SELECT stay_id, endtime FROM mimiciv_derived.vasopressin
    UNION SELECT stay_id, endtime FROM mimiciv_derived.milrinone
)

, intervals AS (
    SELECT
        stay_id
        , vasotime AS starttime
        , LEAD(vasotime, 1) OVER (PARTITION BY stay_id ORDER BY vasotime NULLS FIRST) AS endtime
    FROM cut_times
)

SELECT
    t.stay_id
    , t.starttime
    , t.endtime
    , dop.vaso_rate AS dopamine
    , epi.vaso_rate AS epinephrine
    , nor.vaso_rate AS norepinephrine
    , phe.vaso_rate AS phenylephrine
    , vas.vaso_rate AS vasopressin
    , dob.vaso_rate AS dobutamine
    , mil.vaso_rate AS milrinone
FROM intervals AS t
LEFT JOIN mimiciv_derived.dobutamine AS dob
    ON t.stay_id = dob.stay_id AND t.starttime >= dob.starttime AND t.endtime <= dob.endtime
LEFT JOIN mimiciv_derived.dopamine AS dop
    ON t.stay_id = dop.stay_id AND t.starttime >= dop.starttime AND t.endtime <= dop.endtime
LEFT JOIN mimiciv_derived.epinephrine AS epi
    ON t.stay_id = epi.stay_id AND t.starttime >= epi.starttime AND t.endtime <= epi.endtime
LEFT JOIN mimiciv_derived.norepinephrine AS nor
    ON t.stay_id = nor.stay_id AND t.starttime >= nor.starttime AND t.endtime <= nor.endtime
LEFT JOIN mimiciv_derived.phenylephrine AS phe
    ON t.stay_id = phe.stay_id AND t.starttime >= phe.starttime AND t.endtime <= phe.endtime
LEFT JOIN mimiciv_derived.vasopressin AS vas
    ON t.stay_id = vas.stay_id AND t.starttime >= vas.starttime AND t.endtime <= vas.endtime
LEFT JOIN mimiciv_derived.milrinone AS mil
    ON t.stay_id = mil.stay_id AND t.starttime >= mil.starttime AND t.endtime <= mil.endtime
-- the last cut of a stay ends nothing
WHERE t.endtime IS NOT NULL
