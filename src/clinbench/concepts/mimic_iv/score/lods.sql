-- Concept: lods
-- Definition: Logistic Organ Dysfunction Score over the first ICU day (vitals, labs, GCS and
--   urine from the first_day_* tables, 6 h before to 24 h after ICU admission): neurologic (GCS <= 5 -> 5, <= 8 -> 3, <= 13 -> 1), cardiovascular (HR < 30
--   or SBP < 40 -> 5; SBP < 70 or >= 270 -> 3; HR >= 140, SBP >= 240 or < 90 -> 1), renal
--   (urine < 500 mL or BUN >= 56 -> 5; creatinine >= 1.6, urine < 750, BUN >= 28 or urine
--   >= 10 L -> 3; creatinine >= 1.2 or BUN >= 7.5 -> 1), pulmonary (ventilated or CPAP:
--   P/F < 150 -> 3, >= 150 -> 1; otherwise 0; the P/F ratios are every blood gas of the ICU
--   stay, intime <= t < outtime, whatever the specimen, and CPAP is item 226732 charted from
--   intime to intime + 24 h, 1 h before to 4 h after each charting), hematologic (WBC < 1 -> 3; WBC < 2.5,
--   platelets < 50 or WBC >= 50 -> 1), hepatic (bilirubin >= 2 or PT > 15 s or < 3 s -> 1).
--   Components are NULL when unmeasured; lods sums them with missing = 0.
-- Source: Le Gall et al., JAMA 1996; mimic-code score/lods (MIT-LCP, commit 8bcbd190,
--   concepts_duckdb; standard PT taken as 12 s; CPAP 'cpap' / 'bipap mask').
-- Grain: stay_id
-- Deviations: none. Public behaviour kept: renal 1 point for BUN >= 7.5 mg/dL (the published
--   cut-off is urea 6 mmol/L, BUN about 17 mg/dL); venous gases count for the pulmonary P/F;
--   gases of the whole stay count. No task reads lods, so clinbench's former first-day,
--   arterial-only convention has no task-level variant.
WITH win AS (
    SELECT subject_id, hadm_id, stay_id, intime, outtime,
        intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 1 DAY AS endtime
    FROM mimiciv_icu.icustays
),
cpap AS (
    SELECT w.stay_id,
        MIN(ce.charttime - INTERVAL 1 HOUR) AS starttime,
        MAX(ce.charttime + INTERVAL 4 HOUR) AS endtime
    FROM win AS w
    INNER JOIN mimiciv_icu.chartevents AS ce
        ON ce.stay_id = w.stay_id AND ce.charttime >= w.intime AND ce.charttime <= w.endtime
    WHERE ce.itemid = 226732
        AND (LOWER(CAST(ce.value AS VARCHAR)) LIKE '%cpap%' OR LOWER(CAST(ce.value AS VARCHAR)) LIKE '%bipap mask%')
    GROUP BY w.stay_id
),
pafi AS (
    SELECT w.stay_id, MIN(bg.pao2fio2ratio) AS pao2fio2_vent_min
    FROM win AS w
    INNER JOIN mimiciv_derived.bg AS bg
        ON bg.hadm_id = w.hadm_id
        AND bg.charttime >= w.intime AND bg.charttime < w.outtime
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = w.stay_id AND bg.charttime >= vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
    LEFT JOIN cpap AS cp
        ON cp.stay_id = w.stay_id AND bg.charttime >= cp.starttime AND bg.charttime <= cp.endtime
    WHERE vd.stay_id IS NOT NULL OR cp.stay_id IS NOT NULL
    GROUP BY w.stay_id
),
cohort AS (
    SELECT w.subject_id, w.hadm_id, w.stay_id,
        g.gcs_min, v.heart_rate_max, v.heart_rate_min, v.sbp_max, v.sbp_min,
        pf.pao2fio2_vent_min,
        l.bun_max, l.wbc_max, l.wbc_min, l.bilirubin_total_max AS bilirubin_max,
        l.creatinine_max, l.pt_min, l.pt_max, l.platelets_min AS platelet_min,
        uo.urineoutput
    FROM win AS w
    LEFT JOIN pafi AS pf ON pf.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_gcs AS g ON g.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_urine_output AS uo ON uo.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_lab AS l ON l.stay_id = w.stay_id
),
scorecomp AS (
    SELECT subject_id, hadm_id, stay_id,
        CASE
            WHEN gcs_min IS NULL OR gcs_min < 3 THEN NULL
            WHEN gcs_min <= 5 THEN 5 WHEN gcs_min <= 8 THEN 3 WHEN gcs_min <= 13 THEN 1 ELSE 0
        END AS neurologic,
        CASE
            WHEN heart_rate_max IS NULL AND sbp_min IS NULL THEN NULL
            WHEN heart_rate_min < 30 THEN 5
            WHEN sbp_min < 40 THEN 5
            WHEN sbp_min < 70 THEN 3
            WHEN sbp_max >= 270 THEN 3
            WHEN heart_rate_max >= 140 THEN 1
            WHEN sbp_max >= 240 THEN 1
            WHEN sbp_min < 90 THEN 1
            ELSE 0
        END AS cardiovascular,
        CASE
            WHEN bun_max IS NULL OR urineoutput IS NULL OR creatinine_max IS NULL THEN NULL
            WHEN urineoutput < 500.0 THEN 5
            WHEN bun_max >= 56.0 THEN 5
            WHEN creatinine_max >= 1.60 THEN 3
            WHEN urineoutput < 750.0 THEN 3
            WHEN bun_max >= 28.0 THEN 3
            WHEN urineoutput >= 10000.0 THEN 3
            WHEN creatinine_max >= 1.20 THEN 1
            WHEN bun_max >= 7.50 THEN 1
            ELSE 0
        END AS renal,
        CASE
            WHEN pao2fio2_vent_min IS NULL THEN 0
            WHEN pao2fio2_vent_min >= 150 THEN 1
            ELSE 3
        END AS pulmonary,
        CASE
            WHEN wbc_max IS NULL AND platelet_min IS NULL THEN NULL
            WHEN wbc_min < 1.0 THEN 3
            WHEN wbc_min < 2.5 THEN 1
            WHEN platelet_min < 50.0 THEN 1
            WHEN wbc_max >= 50.0 THEN 1
            ELSE 0
        END AS hematologic,
        CASE
            WHEN pt_max IS NULL AND bilirubin_max IS NULL THEN NULL
            WHEN bilirubin_max >= 2.0 THEN 1
            WHEN pt_max > (12 + 3) THEN 1
            WHEN pt_min < (12 * 0.25) THEN 1
            ELSE 0
        END AS hepatic
    FROM cohort
)
SELECT subject_id, hadm_id, stay_id,
    COALESCE(neurologic, 0) + COALESCE(cardiovascular, 0) + COALESCE(renal, 0)
        + COALESCE(pulmonary, 0) + COALESCE(hematologic, 0) + COALESCE(hepatic, 0) AS lods,
    neurologic, cardiovascular, renal, pulmonary, hematologic, hepatic
FROM scorecomp
