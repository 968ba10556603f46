-- Concept: vasopressor-equivalents__with_angiotensin
-- Definition: the norepinephrine-equivalent dose of task mimic-vasopressor-equivalents with
--   angiotensin II added at 10 ng/kg/min = 0.1 mcg/kg/min norepinephrine (NED + angiotensin
--   II in ng/kg/min / 100). Intervals are re-cut at every start and stop of any vasopressor,
--   angiotensin II included, so an interval where only angiotensin II runs is a row too.
-- Source: Goradia et al., J Crit Care 2021 (dose-equivalence review, angiotensin II factor);
--   Khanna et al., NEJM 2017 (ATHOS-3). Clinical reason: angiotensin II (Giapreza, items 229709
--   and 229764 - d_items lists both under that label) is a vasopressor given to the sickest
--   patients in refractory shock; leaving it out of the equivalent dose under-states their
--   vasopressor burden exactly where it is highest.
-- Grain: stay_id, starttime
-- Deviations: angiotensin II counted (default target: ignored); interval boundaries include
--   angiotensin II starts and stops. The dose is held at 3 decimals, as the default's.
WITH ang AS (
    SELECT stay_id, starttime, endtime, rate AS angiotensin_ii
    FROM mimiciv_icu.inputevents
    WHERE itemid IN (229709, 229764) AND rate IS NOT NULL AND stay_id IS NOT NULL
        AND rateuom = 'ng/kg/min' AND endtime > starttime
),
bounds AS (
    SELECT stay_id, starttime AS t FROM mimiciv_derived.vasoactive_agent
    UNION SELECT stay_id, endtime FROM mimiciv_derived.vasoactive_agent
    UNION SELECT stay_id, starttime FROM ang
    UNION SELECT stay_id, endtime FROM ang
),
grid AS (
    SELECT stay_id, t AS starttime, LEAD(t) OVER (PARTITION BY stay_id ORDER BY t) AS endtime
    FROM bounds
),
filled AS (
    SELECT g.stay_id, g.starttime, g.endtime,
        MAX(va.norepinephrine) AS norepinephrine, MAX(va.epinephrine) AS epinephrine,
        MAX(va.phenylephrine) AS phenylephrine, MAX(va.dopamine) AS dopamine,
        MAX(va.vasopressin) AS vasopressin, MAX(a.angiotensin_ii) AS angiotensin_ii
    FROM grid AS g
    LEFT JOIN mimiciv_derived.vasoactive_agent AS va
        ON va.stay_id = g.stay_id AND va.starttime <= g.starttime AND va.endtime >= g.endtime
    LEFT JOIN ang AS a
        ON a.stay_id = g.stay_id AND a.starttime <= g.starttime AND a.endtime >= g.endtime
    WHERE g.endtime IS NOT NULL
    GROUP BY g.stay_id, g.starttime, g.endtime
)
SELECT stay_id, starttime, endtime,
    CAST(ROUND(TRY_CAST(COALESCE(norepinephrine, 0) + COALESCE(epinephrine, 0) + COALESCE(phenylephrine / 10, 0)
        + COALESCE(dopamine / 100, 0) + COALESCE(vasopressin * 2.5 / 60, 0)
        + COALESCE(angiotensin_ii / 100, 0) AS DECIMAL(18, 3)), 4) AS DOUBLE) AS norepinephrine_equivalent_dose
FROM filled
WHERE norepinephrine IS NOT NULL OR epinephrine IS NOT NULL OR phenylephrine IS NOT NULL
    OR dopamine IS NOT NULL OR vasopressin IS NOT NULL OR angiotensin_ii IS NOT NULL
