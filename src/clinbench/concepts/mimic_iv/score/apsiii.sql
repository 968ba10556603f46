-- Concept: apsiii
-- Definition: Acute Physiology Score III over the first ICU day. Vitals, labs, urine output
--   and GCS come from the first_day_* tables (6 h before to 24 h after ICU admission); the
--   arterial blood gases are read over the whole ICU stay (intime <= charttime < outtime), as
--   mimic-code does. Each physiological variable scores its worst value, "worst" being the
--   extreme farther from a fixed normal (heart rate 75, MAP 90, temperature 38, respiratory
--   rate 19, haematocrit 45.5, WBC 11.5, creatinine 1, sodium 145.5, albumin 3.5, glucose
--   130; ties take the higher score; BUN and bilirubin use the maximum). Oxygenation scores
--   the best PaO2 when not invasively ventilated with FiO2 < 50% and the highest A-aDO2 when
--   ventilated with FiO2 >= 50%; acid-base scores the worst pH/PaCO2 pair; acute renal failure
--   (creatinine >= 1.5, urine < 410 mL, an admission coded without end-stage renal disease)
--   changes the creatinine table; GCS scores the eyes/verbal/motor combination (0 when the
--   verbal response cannot be assessed). Temperatures are scored as charted (no axillary
--   correction). Components are NULL when unmeasured; apsiii sums them with missing = 0;
--   apsiii_prob = 1 / (1 + exp(-(-4.4360 + 0.04726 apsiii))).
-- Source: Knaus et al., Chest 1991; mimic-code score/apsiii (MIT-LCP, commit 8bcbd190,
--   concepts_duckdb).
-- Grain: stay_id
-- Deviations: none. Public behaviour kept: an admission without any ICD code has no ESRD
--   flag, and mimic-code's "ckd = 0" test is then false, so acute renal failure never applies.
--   Variants: apsiii-24h__first_day_gases (blood gases from the first-day window),
--   apsiii-24h__axillary_plus_1 (axillary temperatures raised by 1 C).
--   Rewritten for speed with identical rows (the three gas aggregates as one GROUP BY with
--   FILTERs; the point tables applied to each minimum and maximum column instead of a LATERAL
--   min/max union joined back to itself; 0.031 -> 0.024 s CPU at 2,000 patients). The same rows
--   while icustays.stay_id is unique, as MIMIC-IV's primary key is (a stay listed twice gave four rows
--   through the old self-join).
WITH win AS (
    SELECT subject_id, hadm_id, stay_id, intime, outtime,
        intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 1 DAY AS endtime
    FROM mimiciv_icu.icustays
),
gas AS (
    -- arterial gases of the whole ICU stay (mimic-code's window for PaO2, A-aDO2, acid-base):
    -- the best PaO2 while breathing spontaneously with FiO2 < 50% (room air when FiO2 is
    -- missing), the highest A-aDO2 when ventilated with FiO2 >= 50%, the worst pH/PaCO2 pair
    SELECT w.stay_id,
        MAX(bg.po2) FILTER (WHERE vd.stay_id IS NULL AND COALESCE(COALESCE(bg.fio2, bg.fio2_chartevents), 21) < 50
            AND bg.po2 IS NOT NULL) AS pao2,
        MAX(bg.aado2) FILTER (WHERE vd.stay_id IS NOT NULL AND COALESCE(bg.fio2, bg.fio2_chartevents) >= 50
            AND bg.aado2 IS NOT NULL) AS aado2,
        MAX(CASE
            WHEN bg.ph < 7.20 THEN CASE WHEN bg.pco2 < 50 THEN 12 ELSE 4 END
            WHEN bg.ph < 7.30 THEN CASE WHEN bg.pco2 < 30 THEN 9 WHEN bg.pco2 < 40 THEN 6 WHEN bg.pco2 < 50 THEN 3 ELSE 2 END
            WHEN bg.ph < 7.35 THEN CASE WHEN bg.pco2 < 30 THEN 9 WHEN bg.pco2 < 45 THEN 0 ELSE 1 END
            WHEN bg.ph < 7.45 THEN CASE WHEN bg.pco2 < 30 THEN 5 WHEN bg.pco2 < 45 THEN 0 ELSE 1 END
            WHEN bg.ph < 7.50 THEN CASE WHEN bg.pco2 < 30 THEN 5 WHEN bg.pco2 < 35 THEN 0 WHEN bg.pco2 < 45 THEN 2 ELSE 12 END
            WHEN bg.ph < 7.60 THEN CASE WHEN bg.pco2 < 40 THEN 3 ELSE 12 END
            ELSE CASE WHEN bg.pco2 < 25 THEN 0 WHEN bg.pco2 < 40 THEN 3 ELSE 12 END
        END) FILTER (WHERE bg.ph IS NOT NULL AND bg.pco2 IS NOT NULL) AS acidbase_score
    FROM win AS w
    INNER JOIN mimiciv_derived.bg AS bg
        ON bg.hadm_id = w.hadm_id AND bg.specimen = 'ART.'
        AND bg.charttime >= w.intime AND bg.charttime < w.outtime
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = w.stay_id AND bg.charttime >= vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
    GROUP BY w.stay_id
),
esrd AS (
    -- chronic dialysis proxy: end-stage renal disease codes (585.9 / N18.9 excluded on purpose)
    SELECT hadm_id, MAX(CASE
        WHEN icd_version = 9 AND SUBSTR(icd_code, 1, 4) IN ('5854', '5855', '5856') THEN 1
        WHEN icd_version = 10 AND SUBSTR(icd_code, 1, 4) IN ('N184', 'N185', 'N186') THEN 1
        ELSE 0 END) AS ckd
    FROM mimiciv_hosp.diagnoses_icd
    GROUP BY hadm_id
),
vent AS (
    SELECT w.stay_id, MAX(CASE WHEN v.stay_id IS NOT NULL THEN 1 ELSE 0 END) AS vent
    FROM win AS w
    LEFT JOIN mimiciv_derived.ventilation AS v
        ON v.stay_id = w.stay_id AND v.ventilation_status = 'InvasiveVent'
        AND v.starttime <= w.endtime AND v.endtime >= w.intime
    GROUP BY w.stay_id
),
cohort AS (
    SELECT w.subject_id, w.hadm_id, w.stay_id,
        v.heart_rate_min, v.heart_rate_max, v.mbp_min, v.mbp_max,
        v.temperature_min, v.temperature_max, v.resp_rate_min, v.resp_rate_max,
        gas.pao2, gas.aado2, gas.acidbase_score,
        l.hematocrit_min, l.hematocrit_max, l.wbc_min, l.wbc_max,
        l.creatinine_min, l.creatinine_max, l.bun_min, l.bun_max,
        l.sodium_min, l.sodium_max, l.albumin_min, l.albumin_max,
        l.bilirubin_total_min AS bilirubin_min, l.bilirubin_total_max AS bilirubin_max,
        -- glucose: the more extreme of laboratory and fingerstick values
        CASE WHEN l.glucose_max IS NULL AND v.glucose_max IS NULL THEN NULL
            ELSE GREATEST(COALESCE(l.glucose_max, v.glucose_max), COALESCE(v.glucose_max, l.glucose_max)) END AS glucose_max,
        CASE WHEN l.glucose_min IS NULL AND v.glucose_min IS NULL THEN NULL
            ELSE LEAST(COALESCE(l.glucose_min, v.glucose_min), COALESCE(v.glucose_min, l.glucose_min)) END AS glucose_min,
        COALESCE(vent.vent, 0) AS vent,
        uo.urineoutput,
        g.gcs_motor, g.gcs_verbal, g.gcs_eyes, g.gcs_unable,
        CASE WHEN l.creatinine_max >= 1.5 AND uo.urineoutput < 410 AND esrd.ckd = 0
            THEN 1 ELSE 0 END AS arf
    FROM win AS w
    LEFT JOIN gas ON gas.stay_id = w.stay_id
    LEFT JOIN esrd ON esrd.hadm_id = w.hadm_id
    LEFT JOIN vent ON vent.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_lab AS l ON l.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_urine_output AS uo ON uo.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_gcs AS g ON g.stay_id = w.stay_id
),
-- the same point table applied to the minimum and to the maximum of each variable (BUN and
-- bilirubin score their maximum only)
paired AS (
    SELECT *,
        CASE WHEN heart_rate_min IS NULL THEN NULL WHEN heart_rate_min < 40 THEN 8 WHEN heart_rate_min < 50 THEN 5 WHEN heart_rate_min < 100 THEN 0
            WHEN heart_rate_min < 110 THEN 1 WHEN heart_rate_min < 120 THEN 5 WHEN heart_rate_min < 140 THEN 7 WHEN heart_rate_min < 155 THEN 13 ELSE 17 END AS hr_pts,
        CASE WHEN heart_rate_max IS NULL THEN NULL WHEN heart_rate_max < 40 THEN 8 WHEN heart_rate_max < 50 THEN 5 WHEN heart_rate_max < 100 THEN 0
            WHEN heart_rate_max < 110 THEN 1 WHEN heart_rate_max < 120 THEN 5 WHEN heart_rate_max < 140 THEN 7 WHEN heart_rate_max < 155 THEN 13 ELSE 17 END AS hr_pts_max,
        CASE WHEN mbp_min IS NULL THEN NULL WHEN mbp_min < 40 THEN 23 WHEN mbp_min < 60 THEN 15 WHEN mbp_min < 70 THEN 7
            WHEN mbp_min < 80 THEN 6 WHEN mbp_min < 100 THEN 0 WHEN mbp_min < 120 THEN 4 WHEN mbp_min < 130 THEN 7
            WHEN mbp_min < 140 THEN 9 ELSE 10 END AS mbp_pts,
        CASE WHEN mbp_max IS NULL THEN NULL WHEN mbp_max < 40 THEN 23 WHEN mbp_max < 60 THEN 15 WHEN mbp_max < 70 THEN 7
            WHEN mbp_max < 80 THEN 6 WHEN mbp_max < 100 THEN 0 WHEN mbp_max < 120 THEN 4 WHEN mbp_max < 130 THEN 7
            WHEN mbp_max < 140 THEN 9 ELSE 10 END AS mbp_pts_max,
        CASE WHEN temperature_min IS NULL THEN NULL WHEN temperature_min < 33.0 THEN 20 WHEN temperature_min < 33.5 THEN 16
            WHEN temperature_min < 34.0 THEN 13 WHEN temperature_min < 35.0 THEN 8 WHEN temperature_min < 36.0 THEN 2
            WHEN temperature_min < 40.0 THEN 0 ELSE 4 END AS temp_pts,
        CASE WHEN temperature_max IS NULL THEN NULL WHEN temperature_max < 33.0 THEN 20 WHEN temperature_max < 33.5 THEN 16
            WHEN temperature_max < 34.0 THEN 13 WHEN temperature_max < 35.0 THEN 8 WHEN temperature_max < 36.0 THEN 2
            WHEN temperature_max < 40.0 THEN 0 ELSE 4 END AS temp_pts_max,
        -- a slow rate on the ventilator is set, not a sign of illness
        CASE WHEN resp_rate_min IS NULL THEN NULL
            WHEN vent = 1 AND resp_rate_min < 14 THEN 0
            WHEN resp_rate_min < 6 THEN 17 WHEN resp_rate_min < 12 THEN 8 WHEN resp_rate_min < 14 THEN 7 WHEN resp_rate_min < 25 THEN 0
            WHEN resp_rate_min < 35 THEN 6 WHEN resp_rate_min < 40 THEN 9 WHEN resp_rate_min < 50 THEN 11 ELSE 18 END AS rr_pts,
        CASE WHEN resp_rate_max IS NULL THEN NULL
            WHEN vent = 1 AND resp_rate_max < 14 THEN 0
            WHEN resp_rate_max < 6 THEN 17 WHEN resp_rate_max < 12 THEN 8 WHEN resp_rate_max < 14 THEN 7 WHEN resp_rate_max < 25 THEN 0
            WHEN resp_rate_max < 35 THEN 6 WHEN resp_rate_max < 40 THEN 9 WHEN resp_rate_max < 50 THEN 11 ELSE 18 END AS rr_pts_max,
        CASE WHEN hematocrit_min IS NULL THEN NULL WHEN hematocrit_min < 41.0 THEN 3 WHEN hematocrit_min < 50.0 THEN 0 ELSE 3 END AS hct_pts,
        CASE WHEN hematocrit_max IS NULL THEN NULL WHEN hematocrit_max < 41.0 THEN 3 WHEN hematocrit_max < 50.0 THEN 0 ELSE 3 END AS hct_pts_max,
        CASE WHEN wbc_min IS NULL THEN NULL WHEN wbc_min < 1.0 THEN 19 WHEN wbc_min < 3.0 THEN 5 WHEN wbc_min < 20.0 THEN 0
            WHEN wbc_min < 25.0 THEN 1 ELSE 5 END AS wbc_pts,
        CASE WHEN wbc_max IS NULL THEN NULL WHEN wbc_max < 1.0 THEN 19 WHEN wbc_max < 3.0 THEN 5 WHEN wbc_max < 20.0 THEN 0
            WHEN wbc_max < 25.0 THEN 1 ELSE 5 END AS wbc_pts_max,
        CASE WHEN creatinine_min IS NULL THEN NULL
            WHEN arf = 1 AND creatinine_min < 1.5 THEN 0 WHEN arf = 1 THEN 10
            WHEN creatinine_min < 0.5 THEN 3 WHEN creatinine_min < 1.5 THEN 0 WHEN creatinine_min < 1.95 THEN 4 ELSE 7 END AS cr_pts,
        CASE WHEN creatinine_max IS NULL THEN NULL
            WHEN arf = 1 AND creatinine_max < 1.5 THEN 0 WHEN arf = 1 THEN 10
            WHEN creatinine_max < 0.5 THEN 3 WHEN creatinine_max < 1.5 THEN 0 WHEN creatinine_max < 1.95 THEN 4 ELSE 7 END AS cr_pts_max,
        CASE WHEN bun_max IS NULL THEN NULL WHEN bun_max < 17.0 THEN 0 WHEN bun_max < 20.0 THEN 2 WHEN bun_max < 40.0 THEN 7
            WHEN bun_max < 80.0 THEN 11 ELSE 12 END AS bun_pts_max,
        CASE WHEN sodium_min IS NULL THEN NULL WHEN sodium_min < 120 THEN 3 WHEN sodium_min < 135 THEN 2 WHEN sodium_min < 155 THEN 0 ELSE 4 END AS na_pts,
        CASE WHEN sodium_max IS NULL THEN NULL WHEN sodium_max < 120 THEN 3 WHEN sodium_max < 135 THEN 2 WHEN sodium_max < 155 THEN 0 ELSE 4 END AS na_pts_max,
        CASE WHEN albumin_min IS NULL THEN NULL WHEN albumin_min < 2.0 THEN 11 WHEN albumin_min < 2.5 THEN 6 WHEN albumin_min < 4.5 THEN 0 ELSE 4 END AS alb_pts,
        CASE WHEN albumin_max IS NULL THEN NULL WHEN albumin_max < 2.0 THEN 11 WHEN albumin_max < 2.5 THEN 6 WHEN albumin_max < 4.5 THEN 0 ELSE 4 END AS alb_pts_max,
        CASE WHEN bilirubin_max IS NULL THEN NULL WHEN bilirubin_max < 2.0 THEN 0 WHEN bilirubin_max < 3.0 THEN 5 WHEN bilirubin_max < 5.0 THEN 6
            WHEN bilirubin_max < 8.0 THEN 8 ELSE 16 END AS bili_pts_max,
        CASE WHEN glucose_min IS NULL THEN NULL WHEN glucose_min < 40 THEN 8 WHEN glucose_min < 60 THEN 9 WHEN glucose_min < 200 THEN 0
            WHEN glucose_min < 350 THEN 3 ELSE 5 END AS glc_pts,
        CASE WHEN glucose_max IS NULL THEN NULL WHEN glucose_max < 40 THEN 8 WHEN glucose_max < 60 THEN 9 WHEN glucose_max < 200 THEN 0
            WHEN glucose_max < 350 THEN 3 ELSE 5 END AS glc_pts_max
    FROM cohort
    WHERE stay_id IS NOT NULL
),
scorecomp AS (
    SELECT subject_id, hadm_id, stay_id,
        -- worst = the extreme farther from normal; equidistant extremes take the higher score
        CASE WHEN heart_rate_max IS NULL THEN NULL
            WHEN ABS(heart_rate_max - 75) > ABS(heart_rate_min - 75) THEN hr_pts_max
            WHEN ABS(heart_rate_max - 75) < ABS(heart_rate_min - 75) THEN hr_pts
            ELSE GREATEST(hr_pts, hr_pts_max) END AS hr_score,
        CASE WHEN mbp_max IS NULL THEN NULL
            WHEN ABS(mbp_max - 90) > ABS(mbp_min - 90) THEN mbp_pts_max
            WHEN ABS(mbp_max - 90) < ABS(mbp_min - 90) THEN mbp_pts
            ELSE GREATEST(mbp_pts, mbp_pts_max) END AS mbp_score,
        CASE WHEN temperature_max IS NULL THEN NULL
            WHEN ABS(temperature_max - 38) > ABS(temperature_min - 38) THEN temp_pts_max
            WHEN ABS(temperature_max - 38) < ABS(temperature_min - 38) THEN temp_pts
            ELSE GREATEST(temp_pts, temp_pts_max) END AS temp_score,
        CASE WHEN resp_rate_max IS NULL THEN NULL
            WHEN ABS(resp_rate_max - 19) > ABS(resp_rate_min - 19) THEN rr_pts_max
            WHEN ABS(resp_rate_max - 19) < ABS(resp_rate_min - 19) THEN rr_pts
            ELSE GREATEST(rr_pts, rr_pts_max) END AS resp_rate_score,
        CASE WHEN hematocrit_max IS NULL THEN NULL
            WHEN ABS(hematocrit_max - 45.5) > ABS(hematocrit_min - 45.5) THEN hct_pts_max
            WHEN ABS(hematocrit_max - 45.5) < ABS(hematocrit_min - 45.5) THEN hct_pts
            ELSE GREATEST(hct_pts, hct_pts_max) END AS hematocrit_score,
        CASE WHEN wbc_max IS NULL THEN NULL
            WHEN ABS(wbc_max - 11.5) > ABS(wbc_min - 11.5) THEN wbc_pts_max
            WHEN ABS(wbc_max - 11.5) < ABS(wbc_min - 11.5) THEN wbc_pts
            ELSE GREATEST(wbc_pts, wbc_pts_max) END AS wbc_score,
        CASE WHEN creatinine_max IS NULL THEN NULL
            -- with acute renal failure the maximum is what matters
            WHEN arf = 1 THEN cr_pts_max
            WHEN ABS(creatinine_max - 1) > ABS(creatinine_min - 1) THEN cr_pts_max
            WHEN ABS(creatinine_max - 1) < ABS(creatinine_min - 1) THEN cr_pts
            ELSE GREATEST(cr_pts, cr_pts_max) END AS creatinine_score,
        bun_pts_max AS bun_score,
        CASE WHEN sodium_max IS NULL THEN NULL
            WHEN ABS(sodium_max - 145.5) > ABS(sodium_min - 145.5) THEN na_pts_max
            WHEN ABS(sodium_max - 145.5) < ABS(sodium_min - 145.5) THEN na_pts
            ELSE GREATEST(na_pts, na_pts_max) END AS sodium_score,
        CASE WHEN albumin_max IS NULL THEN NULL
            WHEN ABS(albumin_max - 3.5) > ABS(albumin_min - 3.5) THEN alb_pts_max
            WHEN ABS(albumin_max - 3.5) < ABS(albumin_min - 3.5) THEN alb_pts
            ELSE GREATEST(alb_pts, alb_pts_max) END AS albumin_score,
        bili_pts_max AS bilirubin_score,
        CASE WHEN glucose_max IS NULL THEN NULL
            WHEN ABS(glucose_max - 130) > ABS(glucose_min - 130) THEN glc_pts_max
            WHEN ABS(glucose_max - 130) < ABS(glucose_min - 130) THEN glc_pts
            ELSE GREATEST(glc_pts, glc_pts_max) END AS glucose_score,
        CASE WHEN urineoutput IS NULL THEN NULL
            WHEN urineoutput < 400 THEN 15 WHEN urineoutput < 600 THEN 8 WHEN urineoutput < 900 THEN 7
            WHEN urineoutput < 1500 THEN 5 WHEN urineoutput < 2000 THEN 4 WHEN urineoutput < 4000 THEN 0
            ELSE 1 END AS uo_score,
        CASE
            -- intubated: verbal cannot be assessed, scored as normal as in the original study
            WHEN gcs_unable = 1 THEN 0
            WHEN gcs_eyes = 1 THEN CASE
                WHEN gcs_verbal = 1 AND gcs_motor IN (1, 2) THEN 48
                WHEN gcs_verbal = 1 AND gcs_motor IN (3, 4) THEN 33
                WHEN gcs_verbal = 1 AND gcs_motor IN (5, 6) THEN 16
                WHEN gcs_verbal IN (2, 3) AND gcs_motor IN (1, 2) THEN 29
                WHEN gcs_verbal IN (2, 3) AND gcs_motor IN (3, 4) THEN 24
                END
            WHEN gcs_eyes > 1 THEN CASE
                WHEN gcs_verbal = 1 AND gcs_motor IN (1, 2) THEN 29
                WHEN gcs_verbal = 1 AND gcs_motor IN (3, 4) THEN 24
                WHEN gcs_verbal = 1 AND gcs_motor IN (5, 6) THEN 15
                WHEN gcs_verbal IN (2, 3) AND gcs_motor IN (1, 2) THEN 29
                WHEN gcs_verbal IN (2, 3) AND gcs_motor IN (3, 4) THEN 24
                WHEN gcs_verbal IN (2, 3) AND gcs_motor = 5 THEN 13
                WHEN gcs_verbal IN (2, 3) AND gcs_motor = 6 THEN 10
                WHEN gcs_verbal = 4 AND gcs_motor IN (1, 2, 3, 4) THEN 13
                WHEN gcs_verbal = 4 AND gcs_motor = 5 THEN 8
                WHEN gcs_verbal = 4 AND gcs_motor = 6 THEN 3
                WHEN gcs_verbal = 5 AND gcs_motor IN (1, 2, 3, 4, 5) THEN 3
                WHEN gcs_verbal = 5 AND gcs_motor = 6 THEN 0
                END
        END AS gcs_score,
        CASE
            WHEN pao2 IS NULL AND aado2 IS NULL THEN NULL
            WHEN pao2 IS NOT NULL THEN CASE WHEN pao2 < 50 THEN 15 WHEN pao2 < 70 THEN 5 WHEN pao2 < 80 THEN 2 ELSE 0 END
            ELSE CASE WHEN aado2 < 100 THEN 0 WHEN aado2 < 250 THEN 7 WHEN aado2 < 350 THEN 9 WHEN aado2 < 500 THEN 11 ELSE 14 END
        END AS pao2_aado2_score,
        acidbase_score
    FROM paired
),
total AS (
    SELECT *,
        COALESCE(hr_score, 0) + COALESCE(mbp_score, 0) + COALESCE(temp_score, 0)
            + COALESCE(resp_rate_score, 0) + COALESCE(pao2_aado2_score, 0)
            + COALESCE(hematocrit_score, 0) + COALESCE(wbc_score, 0) + COALESCE(creatinine_score, 0)
            + COALESCE(uo_score, 0) + COALESCE(bun_score, 0) + COALESCE(sodium_score, 0)
            + COALESCE(albumin_score, 0) + COALESCE(bilirubin_score, 0) + COALESCE(glucose_score, 0)
            + COALESCE(acidbase_score, 0) + COALESCE(gcs_score, 0) AS apsiii
    FROM scorecomp
)
SELECT subject_id, hadm_id, stay_id, apsiii,
    1 / (1 + EXP(-(-4.4360 + 0.04726 * apsiii))) AS apsiii_prob,
    hr_score, mbp_score, temp_score, resp_rate_score, pao2_aado2_score, hematocrit_score,
    wbc_score, creatinine_score, uo_score, bun_score, sodium_score, albumin_score,
    bilirubin_score, glucose_score, acidbase_score, gcs_score
FROM total
