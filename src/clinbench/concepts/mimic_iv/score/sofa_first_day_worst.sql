-- Concept: sofa_first_day_worst
-- Definition: the worst value of each SOFA input over the first ICU day (6 h before to 24 h
--   after ICU admission), the input of first_day_sofa: lowest PaO2/FiO2 of arterial blood gases
--   (by subject) split by invasive ventilation at the draw, highest rate of each vasopressor
--   whose infusion starts in the window, lowest MAP, lowest GCS, urine output of the window, highest creatinine and
--   bilirubin, lowest platelets. NULL when unmeasured.
-- Source: Vincent et al., Intensive Care Med 1996; mimic-code firstday/first_day_sofa (MIT-LCP,
--   commit 8bcbd190, concepts_duckdb). Rates are 32-bit REAL, the type of mimic-code's DuckDB
--   columns, so a charted 0.1 mcg/kg/min compares equal to 0.1 as it does there.
-- Grain: stay_id
-- Deviations: none. Public behaviour kept: an infusion started before intime - 6 h and still
--   running does not count (variant sofa-24h__running_infusions counts it).
-- Helper: clinbench's own intermediate, read by sofa_points, first_day_sofa and variant sofa-24h__ventilated_pf; no anchor builds it.
WITH win AS (
    SELECT subject_id, hadm_id, stay_id,
        intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 1 DAY AS endtime
    FROM mimiciv_icu.icustays
),
vaso_stg AS (
    SELECT w.stay_id, 'norepinephrine' AS treatment, v.vaso_rate AS rate
    FROM win AS w INNER JOIN mimiciv_derived.norepinephrine AS v
        ON v.stay_id = w.stay_id AND v.starttime >= w.starttime AND v.starttime <= w.endtime
    UNION ALL
    SELECT w.stay_id, 'epinephrine', v.vaso_rate
    FROM win AS w INNER JOIN mimiciv_derived.epinephrine AS v
        ON v.stay_id = w.stay_id AND v.starttime >= w.starttime AND v.starttime <= w.endtime
    UNION ALL
    SELECT w.stay_id, 'dopamine', v.vaso_rate
    FROM win AS w INNER JOIN mimiciv_derived.dopamine AS v
        ON v.stay_id = w.stay_id AND v.starttime >= w.starttime AND v.starttime <= w.endtime
    UNION ALL
    SELECT w.stay_id, 'dobutamine', v.vaso_rate
    FROM win AS w INNER JOIN mimiciv_derived.dobutamine AS v
        ON v.stay_id = w.stay_id AND v.starttime >= w.starttime AND v.starttime <= w.endtime
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
