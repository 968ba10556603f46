-- Concept: icustay_detail
-- Definition: Patient, hospital-admission and ICU-stay descriptors for each ICU stay: sex,
--   date of death, admission/discharge times, hospital length of stay (day boundaries), age
--   at admission, race, in-hospital death, order of the admission for the patient and of the
--   ICU stay within the admission, ICU length of stay in days (hour boundaries / 24, 2 dp).
-- Source: mimic-code demographics/icustay_detail (MIT-LCP).
-- Grain: stay_id
-- Deviations: race is read from admissions.race (MIMIC-IV v2 name; v1 called it ethnicity).
SELECT
    ie.subject_id
    , ie.hadm_id
    , ie.stay_id
    , pat.gender
    , pat.dod
    , adm.admittime
    , adm.dischtime
    , date_diff('day', adm.admittime, adm.dischtime) AS los_hospital
    , pat.anchor_age + (EXTRACT(YEAR FROM adm.admittime) - pat.anchor_year) AS admission_age
    , adm.race
    , adm.hospital_expire_flag
    , DENSE_RANK() OVER (PARTITION BY adm.subject_id ORDER BY adm.admittime) AS hospstay_seq
    , DENSE_RANK() OVER (PARTITION BY adm.subject_id ORDER BY adm.admittime) = 1 AS first_hosp_stay
    , ie.intime AS icu_intime
    , ie.outtime AS icu_outtime
    , ROUND(date_diff('hour', ie.intime, ie.outtime) / 24.0, 2) AS los_icu
    , DENSE_RANK() OVER (PARTITION BY ie.hadm_id ORDER BY ie.intime) AS icustay_seq
    , DENSE_RANK() OVER (PARTITION BY ie.hadm_id ORDER BY ie.intime) = 1 AS first_icu_stay
FROM mimiciv_icu.icustays AS ie
INNER JOIN mimiciv_hosp.admissions AS adm
    ON ie.hadm_id = adm.hadm_id
INNER JOIN mimiciv_hosp.patients AS pat
    ON ie.subject_id = pat.subject_id
