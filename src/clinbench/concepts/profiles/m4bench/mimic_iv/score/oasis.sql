-- Concept: oasis
-- Definition: Oxford Acute Severity of Illness Score over the first ICU day (6 h before to 24 h
--   after ICU admission): pre-ICU length of stay (minutes: < 10.2 -> 5, < 297 -> 3, < 1440 -> 0,
--   < 18708 -> 2, else 1), age (< 24 -> 0, <= 53 -> 3, <= 77 -> 6, <= 89 -> 9, >= 90 -> 7), GCS
--   (<= 7 -> 10, < 14 -> 4, 14 -> 3), heart rate (> 125 -> 6, < 33 -> 4, 107-125 -> 3,
--   89-106 -> 1), MAP (< 20.65 -> 4, < 51 -> 3, > 143.44 -> 3, 51-61.32 -> 2), respiratory rate
--   (< 6 -> 10, > 44 -> 9, > 30 -> 6, > 22 -> 1, < 13 -> 1), temperature (> 39.88 -> 6,
--   33.22-35.93 -> 4, < 33.22 -> 3, 35.94-36.39 or 36.89-39.88 -> 2), urine output
--   (< 671.09 -> 10, > 6896.80 -> 8, <= 1426.99 -> 5, <= 2544.14 -> 1), invasive ventilation
--   (9), elective surgery (0, else 6). Components are NULL when unmeasured; oasis sums them
--   with missing = 0.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   score/oasis, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id
-- Deviations: differs from the mimic-code profile in every row: age is fractional (the age concept
--   of this profile) and the pre-ICU length of stay is exact elapsed minutes, not minute boundaries
--   crossed. Only admission_type 'ELECTIVE' counts as elective, so a 'SURGICAL SAME DAY ADMISSION'
--   (a planned operation) scores 6. The value columns (age, preiculos, gcs, heartrate, meanbp,
--   resprate, temp, urineoutput, mechvent, electivesurgery) are the value each component scored
--   (the mean of min and max when it scored 0), and oasis_prob = 1 / (1 + exp(6.1746 - 0.1275
--   oasis)).
WITH win AS (
    SELECT subject_id, hadm_id, stay_id, intime,
        intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 1 DAY AS endtime
    FROM mimiciv_icu.icustays
),
surgflag AS (
    SELECT w.stay_id, MAX(CASE
        WHEN LOWER(se.curr_service) LIKE '%surg%' THEN 1
        WHEN se.curr_service = 'ORTHO' THEN 1
        ELSE 0 END) AS surgical
    FROM win AS w
    LEFT JOIN mimiciv_hosp.services AS se
        ON se.hadm_id = w.hadm_id AND se.transfertime < w.endtime
    GROUP BY w.stay_id
),
vent AS (
    SELECT w.stay_id, MAX(CASE WHEN v.stay_id IS NOT NULL THEN 1 ELSE 0 END) AS mechvent
    FROM win AS w
    LEFT JOIN mimiciv_derived.ventilation AS v
        ON v.stay_id = w.stay_id AND v.ventilation_status = 'InvasiveVent'
        AND ((v.starttime >= w.intime AND v.starttime <= w.endtime)
            OR (v.endtime >= w.intime AND v.endtime <= w.endtime)
            OR (v.starttime <= w.intime AND v.endtime >= w.endtime))
    GROUP BY w.stay_id
),
cohort AS (
    SELECT w.subject_id, w.hadm_id, w.stay_id,
        date_diff('microseconds', adm.admittime, w.intime) / 60000000.0 AS preiculos,
        ag.age, g.gcs_min,
        v.heart_rate_min, v.heart_rate_max, v.mbp_min, v.mbp_max,
        v.resp_rate_min, v.resp_rate_max, v.temperature_min, v.temperature_max,
        vent.mechvent, uo.urineoutput,
        CASE
            WHEN adm.admission_type = 'ELECTIVE' AND sf.surgical = 1 THEN 1
            WHEN adm.admission_type IS NULL OR sf.surgical IS NULL THEN NULL
            ELSE 0
        END AS electivesurgery
    FROM win AS w
    INNER JOIN mimiciv_hosp.admissions AS adm ON adm.hadm_id = w.hadm_id
    LEFT JOIN mimiciv_derived.age AS ag ON ag.hadm_id = w.hadm_id
    LEFT JOIN surgflag AS sf ON sf.stay_id = w.stay_id
    LEFT JOIN vent ON vent.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_gcs AS g ON g.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = w.stay_id
    LEFT JOIN mimiciv_derived.first_day_urine_output AS uo ON uo.stay_id = w.stay_id
),
scorecomp AS (
    SELECT subject_id, hadm_id, stay_id,
        CASE WHEN preiculos IS NULL THEN NULL
            WHEN preiculos < 10.2 THEN 5 WHEN preiculos < 297 THEN 3 WHEN preiculos < 1440 THEN 0
            WHEN preiculos < 18708 THEN 2 ELSE 1 END AS preiculos_score,
        CASE WHEN age IS NULL THEN NULL
            WHEN age < 24 THEN 0 WHEN age <= 53 THEN 3 WHEN age <= 77 THEN 6 WHEN age <= 89 THEN 9
            WHEN age >= 90 THEN 7 ELSE 0 END AS age_score,
        CASE WHEN gcs_min IS NULL THEN NULL
            WHEN gcs_min <= 7 THEN 10 WHEN gcs_min < 14 THEN 4 WHEN gcs_min = 14 THEN 3 ELSE 0 END AS gcs_score,
        CASE WHEN heart_rate_max IS NULL THEN NULL
            WHEN heart_rate_max > 125 THEN 6 WHEN heart_rate_min < 33 THEN 4
            WHEN heart_rate_max >= 107 AND heart_rate_max <= 125 THEN 3
            WHEN heart_rate_max >= 89 AND heart_rate_max <= 106 THEN 1 ELSE 0 END AS heart_rate_score,
        CASE WHEN mbp_min IS NULL THEN NULL
            WHEN mbp_min < 20.65 THEN 4 WHEN mbp_min < 51 THEN 3 WHEN mbp_max > 143.44 THEN 3
            WHEN mbp_min >= 51 AND mbp_min < 61.33 THEN 2 ELSE 0 END AS mbp_score,
        CASE WHEN resp_rate_min IS NULL THEN NULL
            WHEN resp_rate_min < 6 THEN 10 WHEN resp_rate_max > 44 THEN 9 WHEN resp_rate_max > 30 THEN 6
            WHEN resp_rate_max > 22 THEN 1 WHEN resp_rate_min < 13 THEN 1 ELSE 0 END AS resp_rate_score,
        CASE WHEN temperature_max IS NULL THEN NULL
            WHEN temperature_max > 39.88 THEN 6
            WHEN temperature_min >= 33.22 AND temperature_min <= 35.93 THEN 4
            WHEN temperature_max >= 33.22 AND temperature_max <= 35.93 THEN 4
            WHEN temperature_min < 33.22 THEN 3
            WHEN temperature_min > 35.93 AND temperature_min <= 36.39 THEN 2
            WHEN temperature_max >= 36.89 AND temperature_max <= 39.88 THEN 2
            ELSE 0 END AS temp_score,
        CASE WHEN urineoutput IS NULL THEN NULL
            WHEN urineoutput < 671.09 THEN 10 WHEN urineoutput > 6896.80 THEN 8
            WHEN urineoutput >= 671.09 AND urineoutput <= 1426.99 THEN 5
            WHEN urineoutput >= 1427.00 AND urineoutput <= 2544.14 THEN 1 ELSE 0 END AS urineoutput_score,
        CASE WHEN mechvent IS NULL THEN NULL WHEN mechvent = 1 THEN 9 ELSE 0 END AS mechvent_score,
        CASE WHEN electivesurgery IS NULL THEN NULL WHEN electivesurgery = 1 THEN 0 ELSE 6 END AS electivesurgery_score,
        preiculos, age, gcs_min AS gcs,
        CASE WHEN heart_rate_max IS NULL THEN NULL
            WHEN heart_rate_max > 125 THEN heart_rate_max WHEN heart_rate_min < 33 THEN heart_rate_min
            WHEN heart_rate_max >= 107 AND heart_rate_max <= 125 THEN heart_rate_max
            WHEN heart_rate_max >= 89 AND heart_rate_max <= 106 THEN heart_rate_max
            ELSE (heart_rate_min + heart_rate_max) / 2 END AS heartrate,
        CASE WHEN mbp_min IS NULL THEN NULL
            WHEN mbp_min < 20.65 THEN mbp_min WHEN mbp_min < 51 THEN mbp_min WHEN mbp_max > 143.44 THEN mbp_max
            WHEN mbp_min >= 51 AND mbp_min < 61.33 THEN mbp_min
            ELSE (mbp_min + mbp_max) / 2 END AS meanbp,
        CASE WHEN resp_rate_min IS NULL THEN NULL
            WHEN resp_rate_min < 6 THEN resp_rate_min WHEN resp_rate_max > 44 THEN resp_rate_max
            WHEN resp_rate_max > 30 THEN resp_rate_max WHEN resp_rate_max > 22 THEN resp_rate_max
            WHEN resp_rate_min < 13 THEN resp_rate_min
            ELSE (resp_rate_min + resp_rate_max) / 2 END AS resprate,
        CASE WHEN temperature_max IS NULL THEN NULL
            WHEN temperature_max > 39.88 THEN temperature_max
            WHEN temperature_min >= 33.22 AND temperature_min <= 35.93 THEN temperature_min
            WHEN temperature_max >= 33.22 AND temperature_max <= 35.93 THEN temperature_max
            WHEN temperature_min < 33.22 THEN temperature_min
            WHEN temperature_min > 35.93 AND temperature_min <= 36.39 THEN temperature_min
            WHEN temperature_max >= 36.89 AND temperature_max <= 39.88 THEN temperature_max
            ELSE (temperature_min + temperature_max) / 2 END AS temp,
        urineoutput, mechvent, electivesurgery
    FROM cohort
),
score AS (
    SELECT *,
        COALESCE(age_score, 0) + COALESCE(preiculos_score, 0) + COALESCE(gcs_score, 0)
            + COALESCE(heart_rate_score, 0) + COALESCE(mbp_score, 0) + COALESCE(resp_rate_score, 0)
            + COALESCE(temp_score, 0) + COALESCE(urineoutput_score, 0) + COALESCE(mechvent_score, 0)
            + COALESCE(electivesurgery_score, 0) AS oasis
    FROM scorecomp
)
SELECT subject_id, hadm_id, stay_id, oasis,
    1 / (1 + EXP(-(-6.1746 + 0.1275 * oasis))) AS oasis_prob,
    age, age_score, preiculos, preiculos_score, gcs, gcs_score, heartrate, heart_rate_score,
    meanbp, mbp_score, resprate, resp_rate_score, temp, temp_score, urineoutput,
    urineoutput_score, mechvent, mechvent_score, electivesurgery, electivesurgery_score
FROM score
