-- Concept: sofa_first_day_worst
-- Definition: the worst value of each SOFA input over the first ICU day (6 h before to 24 h
--   after ICU admission), the input of first_day_sofa: lowest PaO2/FiO2 of arterial blood gases
--   split by invasive ventilation at the draw, highest rate of each vasopressor running in the
--   window, lowest MAP, lowest GCS, urine output of the window, highest creatinine and
--   bilirubin, lowest platelets. NULL when unmeasured.
-- Source: Vincent et al., Intensive Care Med 1996; MIT-LCP mimic-code firstday/first_day_sofa.
-- Grain: stay_id
-- Deviations: (1) A vasopressor infusion counts when it runs at any time in the window (the
--   public code needs it to start inside the window, so an infusion begun before
--   intime - 6 h and still running is missed; one that stopped exactly at intime - 6 h did not
--   run in the window and does not count). (2) Vasopressor rates are rounded to 6 places so a
--   charted 0.1 mcg/kg/min compares as 0.1 regardless of float width.
WITH win AS (
    SELECT subject_id, hadm_id, stay_id,
        intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 1 DAY AS endtime
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
        ROUND(MAX(CASE WHEN treatment = 'norepinephrine' THEN rate END), 6) AS rate_norepinephrine,
        ROUND(MAX(CASE WHEN treatment = 'epinephrine' THEN rate END), 6) AS rate_epinephrine,
        ROUND(MAX(CASE WHEN treatment = 'dopamine' THEN rate END), 6) AS rate_dopamine,
        ROUND(MAX(CASE WHEN treatment = 'dobutamine' THEN rate END), 6) AS rate_dobutamine
    FROM vaso_stg
    GROUP BY stay_id
),
pafi AS (
    SELECT w.stay_id,
        MIN(CASE WHEN vd.stay_id IS NULL THEN bg.pao2fio2ratio END) AS pao2fio2_novent_min,
        MIN(CASE WHEN vd.stay_id IS NOT NULL THEN bg.pao2fio2ratio END) AS pao2fio2_vent_min
    FROM win AS w
    INNER JOIN mimiciv_derived.bg AS bg
        ON bg.subject_id = w.subject_id
        AND bg.charttime >= w.starttime AND bg.charttime <= w.endtime
        AND bg.specimen = 'ART.'
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = w.stay_id
        AND bg.charttime >= vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
    GROUP BY w.stay_id
)
SELECT w.subject_id, w.hadm_id, w.stay_id,
    v.mbp_min, vaso.rate_norepinephrine, vaso.rate_epinephrine, vaso.rate_dopamine, vaso.rate_dobutamine,
    l.creatinine_max, l.bilirubin_total_max AS bilirubin_max, l.platelets_min AS platelet_min,
    pf.pao2fio2_novent_min, pf.pao2fio2_vent_min,
    uo.urineoutput, g.gcs_min
FROM win AS w
LEFT JOIN vaso ON vaso.stay_id = w.stay_id
LEFT JOIN pafi AS pf ON pf.stay_id = w.stay_id
LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = w.stay_id
LEFT JOIN mimiciv_derived.first_day_lab AS l ON l.stay_id = w.stay_id
LEFT JOIN mimiciv_derived.first_day_urine_output AS uo ON uo.stay_id = w.stay_id
LEFT JOIN mimiciv_derived.first_day_gcs AS g ON g.stay_id = w.stay_id
