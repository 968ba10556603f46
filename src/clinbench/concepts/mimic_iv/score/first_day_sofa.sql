-- Concept: first_day_sofa
-- Definition: SOFA over the first ICU day (6 h before to 24 h after ICU admission): each organ
--   component from the worst value of the window - respiration from PaO2/FiO2 (< 400 -> 1,
--   < 300 -> 2, < 200 with invasive ventilation -> 3, < 100 with invasive ventilation -> 4),
--   coagulation from platelets (< 150/100/50/20), liver from bilirubin (>= 1.2/2/6/12 mg/dL),
--   cardiovascular from MAP < 70 -> 1, dopamine <= 5 or any dobutamine -> 2, dopamine > 5 or
--   norepinephrine/epinephrine <= 0.1 mcg/kg/min -> 3, dopamine > 15 or
--   norepinephrine/epinephrine > 0.1 -> 4, cns from GCS (13-14/10-12/6-9/< 6), renal from
--   creatinine (>= 1.2/2/3.5/5 mg/dL) or urine output (< 500 -> 3, < 200 mL/day -> 4).
--   Components are NULL when unmeasured; sofa sums them with missing = 0.
-- Source: Vincent et al., Intensive Care Med 1996; MIT-LCP mimic-code firstday/first_day_sofa.
-- Grain: stay_id
-- Deviations: (1) a ventilated P/F of 200-399 scores 1-2 (the public first-day code has no
--   ventilated < 400 / < 300 branch, so such patients score 0; the hourly sofa and the SOFA
--   paper score them). (2) A vasopressor infusion counts when it runs at any time in the window
--   (the public code needs it to start inside the window, so an infusion begun before
--   intime - 6 h and still running is missed; one that stopped exactly at intime - 6 h did not
--   run in the window and does not count). (3) Vasopressor rates are compared after
--   rounding to 6 places so a charted 0.1 mcg/kg/min scores 3 regardless of float width.
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
),
scorecomp AS (
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
),
scorecalc AS (
    SELECT subject_id, hadm_id, stay_id,
        CASE
            WHEN pao2fio2_vent_min < 100 THEN 4
            WHEN pao2fio2_vent_min < 200 THEN 3
            WHEN LEAST(pao2fio2_novent_min, pao2fio2_vent_min) < 300 THEN 2
            WHEN LEAST(pao2fio2_novent_min, pao2fio2_vent_min) < 400 THEN 1
            WHEN COALESCE(pao2fio2_vent_min, pao2fio2_novent_min) IS NULL THEN NULL
            ELSE 0
        END AS respiration,
        CASE
            WHEN platelet_min < 20 THEN 4
            WHEN platelet_min < 50 THEN 3
            WHEN platelet_min < 100 THEN 2
            WHEN platelet_min < 150 THEN 1
            WHEN platelet_min IS NULL THEN NULL
            ELSE 0
        END AS coagulation,
        CASE
            WHEN bilirubin_max >= 12.0 THEN 4
            WHEN bilirubin_max >= 6.0 THEN 3
            WHEN bilirubin_max >= 2.0 THEN 2
            WHEN bilirubin_max >= 1.2 THEN 1
            WHEN bilirubin_max IS NULL THEN NULL
            ELSE 0
        END AS liver,
        CASE
            WHEN rate_dopamine > 15 OR rate_epinephrine > 0.1 OR rate_norepinephrine > 0.1 THEN 4
            -- a zero rate is a paused infusion, not a dose <= 0.1
            WHEN rate_dopamine > 5 OR (rate_epinephrine > 0 AND rate_epinephrine <= 0.1)
                OR (rate_norepinephrine > 0 AND rate_norepinephrine <= 0.1) THEN 3
            WHEN rate_dopamine > 0 OR rate_dobutamine > 0 THEN 2
            WHEN mbp_min < 70 THEN 1
            WHEN COALESCE(mbp_min, rate_dopamine, rate_dobutamine, rate_epinephrine, rate_norepinephrine) IS NULL THEN NULL
            ELSE 0
        END AS cardiovascular,
        CASE
            WHEN gcs_min >= 13 AND gcs_min <= 14 THEN 1
            WHEN gcs_min >= 10 AND gcs_min <= 12 THEN 2
            WHEN gcs_min >= 6 AND gcs_min <= 9 THEN 3
            WHEN gcs_min < 6 THEN 4
            WHEN gcs_min IS NULL THEN NULL
            ELSE 0
        END AS cns,
        CASE
            WHEN creatinine_max >= 5.0 THEN 4
            WHEN urineoutput < 200 THEN 4
            WHEN creatinine_max >= 3.5 THEN 3
            WHEN urineoutput < 500 THEN 3
            WHEN creatinine_max >= 2.0 THEN 2
            WHEN creatinine_max >= 1.2 THEN 1
            WHEN COALESCE(urineoutput, creatinine_max) IS NULL THEN NULL
            ELSE 0
        END AS renal
    FROM scorecomp
)
SELECT subject_id, hadm_id, stay_id,
    COALESCE(respiration, 0) + COALESCE(coagulation, 0) + COALESCE(liver, 0)
        + COALESCE(cardiovascular, 0) + COALESCE(cns, 0) + COALESCE(renal, 0) AS sofa,
    respiration, coagulation, liver, cardiovascular, cns, renal
FROM scorecalc
