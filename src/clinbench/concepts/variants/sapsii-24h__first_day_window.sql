-- Concept: sapsii-24h__first_day_window
-- Definition: SAPS II and its 15 components as in task mimic-sapsii-24h, but every variable
--   read from the first-day tables of the shared first-day window (6 h before to 24 h after
--   ICU admission, both ends included, by ICU stay): first_day_vitalsign, first_day_lab,
--   first_day_gcs, first_day_urine_output (intime to intime + 24 h), and arterial P/F ratios
--   (by subject) in the same window while invasively ventilated or within the stay's own
--   CPAP/BiPAP charting.
-- Source: score/sapsii (same point tables, comorbidities and admission type); Le Gall et al.,
--   JAMA 1993. Clinical reason: SAPS II is defined on the worst values of the first 24 ICU
--   hours, and the values measured just before transfer (emergency department, theatre,
--   ward) are the ones that describe the patient on arrival; the default (mimic-code) starts
--   at intime, excludes a value charted at exactly intime, and reads vitals and labs by
--   subject, while every other first-day score of clinbench uses the first-day tables.
-- Grain: stay_id
-- Deviations: first-day window from intime - 6 h and first_day_* tables (default target:
--   intime < t <= intime + 24 h, by subject for vitals and labs); unmeasured components are 0,
--   as in the default.
WITH co AS (
    SELECT subject_id, hadm_id, stay_id,
        intime - INTERVAL 6 HOUR AS starttime, intime + INTERVAL 24 HOUR AS endtime
    FROM mimiciv_icu.icustays
),
cpap AS (
    -- CPAP/BiPAP mask charting makes a blood gas count as "on respiratory support"
    SELECT co.stay_id,
        GREATEST(MIN(ce.charttime - INTERVAL 1 HOUR), co.starttime) AS starttime,
        LEAST(MAX(ce.charttime + INTERVAL 4 HOUR), co.endtime) AS endtime
    FROM co
    INNER JOIN mimiciv_icu.chartevents AS ce
        ON ce.stay_id = co.stay_id AND ce.charttime > co.starttime AND ce.charttime <= co.endtime
    WHERE ce.itemid = 226732
        AND regexp_matches(LOWER(CAST(ce.value AS VARCHAR)), '(cpap mask|bipap)')
    GROUP BY co.stay_id, co.starttime, co.endtime
),
surgflag AS (
    SELECT adm.hadm_id,
        CASE WHEN LOWER(se.curr_service) LIKE '%surg%' THEN 1 ELSE 0 END AS surgical,
        ROW_NUMBER() OVER (PARTITION BY adm.hadm_id ORDER BY se.transfertime) AS serviceorder
    FROM mimiciv_hosp.admissions AS adm
    LEFT JOIN mimiciv_hosp.services AS se ON se.hadm_id = adm.hadm_id
),
comorb AS (
    SELECT hadm_id,
        MAX(CASE
            WHEN icd_version = 9 AND SUBSTR(icd_code, 1, 3) BETWEEN '042' AND '044' THEN 1
            WHEN icd_version = 10 AND SUBSTR(icd_code, 1, 3) IN ('B20', 'B21', 'B22', 'B24') THEN 1
            ELSE 0 END) AS aids,
        MAX(CASE
            WHEN icd_version = 9 AND (
                SUBSTR(icd_code, 1, 5) BETWEEN '20000' AND '20238'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20240' AND '20248'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20250' AND '20302'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20310' AND '20312'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20302' AND '20382'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20400' AND '20522'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20580' AND '20702'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20720' AND '20892'
                OR SUBSTR(icd_code, 1, 4) IN ('2386', '2733')) THEN 1
            WHEN icd_version = 10 AND SUBSTR(icd_code, 1, 3) BETWEEN 'C81' AND 'C96' THEN 1
            ELSE 0 END) AS hem,
        MAX(CASE
            WHEN icd_version = 9 AND (
                SUBSTR(icd_code, 1, 4) BETWEEN '1960' AND '1991'
                OR SUBSTR(icd_code, 1, 5) BETWEEN '20970' AND '20975'
                OR SUBSTR(icd_code, 1, 5) IN ('20979', '78951')) THEN 1
            WHEN icd_version = 10 AND (SUBSTR(icd_code, 1, 3) BETWEEN 'C77' AND 'C79'
                OR SUBSTR(icd_code, 1, 4) = 'C800') THEN 1
            ELSE 0 END) AS mets
    FROM mimiciv_hosp.diagnoses_icd
    GROUP BY hadm_id
),
pafi AS (
    SELECT co.stay_id, MIN(bg.pao2fio2ratio) AS pao2fio2_vent_min
    FROM co
    INNER JOIN mimiciv_derived.bg AS bg
        ON bg.subject_id = co.subject_id AND bg.specimen = 'ART.'
        AND bg.charttime > co.starttime AND bg.charttime <= co.endtime
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = co.stay_id AND bg.charttime > vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
    LEFT JOIN cpap AS cp
        ON cp.stay_id = co.stay_id AND bg.charttime > cp.starttime AND bg.charttime <= cp.endtime
    WHERE vd.stay_id IS NOT NULL OR cp.stay_id IS NOT NULL
    GROUP BY co.stay_id
),
cohort AS (
    SELECT co.subject_id, co.hadm_id, co.stay_id, ag.age,
        v.heart_rate_min, v.heart_rate_max, v.sbp_min, v.sbp_max,
        v.temperature_min AS tempc_min, v.temperature_max AS tempc_max,
        pf.pao2fio2_vent_min, uo.urineoutput,
        l.bun_max, l.wbc_min, l.wbc_max, l.potassium_min, l.potassium_max,
        l.sodium_min, l.sodium_max, l.bicarbonate_min, l.bicarbonate_max,
        l.bilirubin_total_max AS bilirubin_max,
        g.gcs_min AS mingcs,
        cm.aids, cm.hem, cm.mets,
        CASE
            WHEN adm.admission_type = 'ELECTIVE' AND sf.surgical = 1 THEN 'ScheduledSurgical'
            WHEN adm.admission_type != 'ELECTIVE' AND sf.surgical = 1 THEN 'UnscheduledSurgical'
            ELSE 'Medical'
        END AS admissiontype
    FROM co
    INNER JOIN mimiciv_hosp.admissions AS adm ON adm.hadm_id = co.hadm_id
    LEFT JOIN mimiciv_derived.age AS ag ON ag.hadm_id = co.hadm_id
    LEFT JOIN pafi AS pf ON pf.stay_id = co.stay_id
    LEFT JOIN surgflag AS sf ON sf.hadm_id = co.hadm_id AND sf.serviceorder = 1
    LEFT JOIN comorb AS cm ON cm.hadm_id = co.hadm_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = co.stay_id
    LEFT JOIN mimiciv_derived.first_day_urine_output AS uo ON uo.stay_id = co.stay_id
    LEFT JOIN mimiciv_derived.first_day_lab AS l ON l.stay_id = co.stay_id
    LEFT JOIN mimiciv_derived.first_day_gcs AS g ON g.stay_id = co.stay_id
),
scorecomp AS (
    SELECT subject_id, hadm_id, stay_id,
        CASE
            WHEN age IS NULL THEN NULL
            WHEN age < 40 THEN 0 WHEN age < 60 THEN 7 WHEN age < 70 THEN 12
            WHEN age < 75 THEN 15 WHEN age < 80 THEN 16 ELSE 18
        END AS age_score,
        CASE
            WHEN heart_rate_max IS NULL THEN NULL
            WHEN heart_rate_min < 40 THEN 11
            WHEN heart_rate_max >= 160 THEN 7
            WHEN heart_rate_max >= 120 THEN 4
            WHEN heart_rate_min < 70 THEN 2
            ELSE 0
        END AS hr_score,
        CASE
            WHEN sbp_min IS NULL THEN NULL
            WHEN sbp_min < 70 THEN 13
            WHEN sbp_min < 100 THEN 5
            WHEN sbp_max >= 200 THEN 2
            ELSE 0
        END AS sysbp_score,
        CASE
            WHEN tempc_max IS NULL THEN NULL
            WHEN tempc_max >= 39.0 THEN 3
            ELSE 0
        END AS temp_score,
        CASE
            WHEN pao2fio2_vent_min IS NULL THEN NULL
            WHEN pao2fio2_vent_min < 100 THEN 11
            WHEN pao2fio2_vent_min < 200 THEN 9
            ELSE 6
        END AS pao2fio2_score,
        CASE
            WHEN urineoutput IS NULL THEN NULL
            WHEN urineoutput < 500.0 THEN 11
            WHEN urineoutput < 1000.0 THEN 4
            ELSE 0
        END AS uo_score,
        CASE
            WHEN bun_max IS NULL THEN NULL
            WHEN bun_max < 28.0 THEN 0
            WHEN bun_max < 84.0 THEN 6
            ELSE 10
        END AS bun_score,
        CASE
            WHEN wbc_max IS NULL THEN NULL
            WHEN wbc_min < 1.0 THEN 12
            WHEN wbc_max >= 20.0 THEN 3
            ELSE 0
        END AS wbc_score,
        CASE
            WHEN potassium_max IS NULL THEN NULL
            WHEN potassium_min < 3.0 THEN 3
            WHEN potassium_max >= 5.0 THEN 3
            ELSE 0
        END AS potassium_score,
        CASE
            WHEN sodium_max IS NULL THEN NULL
            WHEN sodium_min < 125 THEN 5
            WHEN sodium_max >= 145 THEN 1
            ELSE 0
        END AS sodium_score,
        CASE
            WHEN bicarbonate_max IS NULL THEN NULL
            WHEN bicarbonate_min < 15.0 THEN 6
            WHEN bicarbonate_min < 20.0 THEN 3
            ELSE 0
        END AS bicarbonate_score,
        CASE
            WHEN bilirubin_max IS NULL THEN NULL
            WHEN bilirubin_max < 4.0 THEN 0
            WHEN bilirubin_max < 6.0 THEN 4
            ELSE 9
        END AS bilirubin_score,
        CASE
            WHEN mingcs IS NULL THEN NULL
            WHEN mingcs < 3 THEN NULL
            WHEN mingcs < 6 THEN 26
            WHEN mingcs < 9 THEN 13
            WHEN mingcs < 11 THEN 7
            WHEN mingcs < 14 THEN 5
            ELSE 0
        END AS gcs_score,
        CASE
            WHEN aids = 1 THEN 17
            WHEN hem = 1 THEN 10
            WHEN mets = 1 THEN 9
            ELSE 0
        END AS comorbidity_score,
        CASE
            WHEN admissiontype = 'ScheduledSurgical' THEN 0
            WHEN admissiontype = 'Medical' THEN 6
            WHEN admissiontype = 'UnscheduledSurgical' THEN 8
        END AS admissiontype_score
    FROM cohort
)
SELECT subject_id, hadm_id, stay_id,
    COALESCE(age_score, 0) + COALESCE(hr_score, 0) + COALESCE(sysbp_score, 0)
        + COALESCE(temp_score, 0) + COALESCE(pao2fio2_score, 0) + COALESCE(uo_score, 0)
        + COALESCE(bun_score, 0) + COALESCE(wbc_score, 0) + COALESCE(potassium_score, 0)
        + COALESCE(sodium_score, 0) + COALESCE(bicarbonate_score, 0)
        + COALESCE(bilirubin_score, 0) + COALESCE(gcs_score, 0)
        + COALESCE(comorbidity_score, 0) + COALESCE(admissiontype_score, 0) AS sapsii,
    COALESCE(age_score, 0) AS age_score, COALESCE(hr_score, 0) AS hr_score,
    COALESCE(sysbp_score, 0) AS sysbp_score, COALESCE(temp_score, 0) AS temp_score,
    COALESCE(pao2fio2_score, 0) AS pao2fio2_score, COALESCE(uo_score, 0) AS uo_score,
    COALESCE(bun_score, 0) AS bun_score, COALESCE(wbc_score, 0) AS wbc_score,
    COALESCE(potassium_score, 0) AS potassium_score, COALESCE(sodium_score, 0) AS sodium_score,
    COALESCE(bicarbonate_score, 0) AS bicarbonate_score, COALESCE(bilirubin_score, 0) AS bilirubin_score,
    COALESCE(gcs_score, 0) AS gcs_score, COALESCE(comorbidity_score, 0) AS comorbidity_score,
    COALESCE(admissiontype_score, 0) AS admissiontype_score
FROM scorecomp
