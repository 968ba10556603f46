-- Concept: sofa-24h__running_infusions
-- Definition: the first-day SOFA of task mimic-sofa-24h with the cardiovascular component taken
--   from every vasopressor infusion that runs at any time in the window (starts before its end
--   and ends after its start: intime - 6 h to intime + 24 h); a charted rate of 0 (a paused
--   infusion) does not score 3, as in the default; dopamine > 15 or norepinephrine/epinephrine > 0.1
--   mcg/kg/min -> 4, dopamine > 5 or norepinephrine/epinephrine above 0 and <= 0.1 -> 3, any
--   dopamine or dobutamine -> 2, MAP < 70 -> 1; sofa changes by the difference.
-- Source: target sofa-24h (same rates as 32-bit REAL, same MAP from first_day_vitalsign);
--   Vincent et al., Intensive Care Med 1996. Clinical reason: a patient on norepinephrine
--   since the emergency department (started 7 h before ICU admission and still running) is
--   on vasopressors throughout the first day, yet mimic-code counts only infusions that start
--   in the window.
-- Grain: stay_id
-- Deviations: infusions running into the window count (default target: only infusions
--   starting in the window, as M4Bench and mimic-code).
WITH win AS (
    SELECT stay_id, intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 1 DAY AS endtime
    FROM mimiciv_icu.icustays
),
vaso_stg AS (
    SELECT w.stay_id, 'norepinephrine' AS treatment, v.vaso_rate AS rate
    FROM win AS w INNER JOIN mimiciv_derived.norepinephrine AS v
        ON v.stay_id = w.stay_id AND v.starttime <= w.endtime AND v.endtime > w.starttime
    UNION ALL
    SELECT w.stay_id, 'epinephrine', v.vaso_rate
    FROM win AS w INNER JOIN mimiciv_derived.epinephrine AS v
        ON v.stay_id = w.stay_id AND v.starttime <= w.endtime AND v.endtime > w.starttime
    UNION ALL
    SELECT w.stay_id, 'dopamine', v.vaso_rate
    FROM win AS w INNER JOIN mimiciv_derived.dopamine AS v
        ON v.stay_id = w.stay_id AND v.starttime <= w.endtime AND v.endtime > w.starttime
    UNION ALL
    SELECT w.stay_id, 'dobutamine', v.vaso_rate
    FROM win AS w INNER JOIN mimiciv_derived.dobutamine AS v
        ON v.stay_id = w.stay_id AND v.starttime <= w.endtime AND v.endtime > w.starttime
),
vaso AS (
    SELECT stay_id,
        MAX(CASE WHEN treatment = 'norepinephrine' THEN CAST(rate AS REAL) END) AS rate_norepinephrine,
        MAX(CASE WHEN treatment = 'epinephrine' THEN CAST(rate AS REAL) END) AS rate_epinephrine,
        MAX(CASE WHEN treatment = 'dopamine' THEN CAST(rate AS REAL) END) AS rate_dopamine,
        MAX(CASE WHEN treatment = 'dobutamine' THEN CAST(rate AS REAL) END) AS rate_dobutamine
    FROM vaso_stg
    GROUP BY stay_id
),
cv AS (
    SELECT w.stay_id,
        CASE
            WHEN vaso.rate_dopamine > 15 OR vaso.rate_epinephrine > 0.1 OR vaso.rate_norepinephrine > 0.1 THEN 4
            WHEN vaso.rate_dopamine > 5 OR (vaso.rate_epinephrine > 0 AND vaso.rate_epinephrine <= 0.1)
                OR (vaso.rate_norepinephrine > 0 AND vaso.rate_norepinephrine <= 0.1) THEN 3
            WHEN vaso.rate_dopamine > 0 OR vaso.rate_dobutamine > 0 THEN 2
            WHEN fw.mbp_min < 70 THEN 1
            WHEN COALESCE(fw.mbp_min, vaso.rate_dopamine, vaso.rate_dobutamine, vaso.rate_epinephrine,
                vaso.rate_norepinephrine) IS NULL THEN NULL
            ELSE 0
        END AS cardiovascular
    FROM win AS w
    LEFT JOIN vaso ON vaso.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS fw ON fw.stay_id = w.stay_id
)
SELECT s.subject_id, s.hadm_id, s.stay_id,
    s.sofa - s.cardiovascular + COALESCE(c.cardiovascular, 0) AS sofa,
    s.respiration, s.coagulation, s.liver,
    COALESCE(c.cardiovascular, 0) AS cardiovascular,
    s.cns, s.renal
FROM mimiciv_derived.target_sofa_24h AS s
LEFT JOIN cv AS c ON c.stay_id = s.stay_id
