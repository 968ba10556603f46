-- Concept: icustay_detail
-- Definition: Patient, hospital-admission and ICU-stay descriptors for each ICU stay: sex,
--   date of death, admission/discharge times, hospital length of stay (days), age
--   at admission, race, in-hospital death, order of the admission for the patient and of the
--   ICU stay within the admission, ICU length of stay in days (2 dp).
-- Source: M4Bench 0.5.3's pipeline (hannesill/m4 6ed55907, the vendored mimic-code copy's
--   demographics/icustay_detail, built by `m4 init-derived mimic-iv`).
-- Grain: stay_id
-- Deviations: race is read from admissions.race (MIMIC-IV v2 name; v1 called it ethnicity).
--   Differs from the mimic-code profile in every row: los_hospital (fractional days, not day
--   boundaries), admission_age (fractional years) and los_icu (exact hours / 24, not hour
--   boundaries / 24).
SELECT
    ie.subject_id
    , ie.hadm_id
    , ie.stay_id
    , pat.gender
    , pat.dod
    , adm.admittime
    , adm.dischtime
    , date_diff('microseconds', adm.admittime, adm.dischtime) / 86400000000.0 AS los_hospital
    , pat.anchor_age
        + date_diff('microseconds', make_timestamp(pat.anchor_year, 1, 1, 0, 0, 0), adm.admittime)
        / 31556908800000.0 AS admission_age
    , adm.race
    , adm.hospital_expire_flag
    , DENSE_RANK() OVER (PARTITION BY adm.subject_id ORDER BY adm.admittime) AS hospstay_seq
    , DENSE_RANK() OVER (PARTITION BY adm.subject_id ORDER BY adm.admittime) = 1 AS first_hosp_stay
    , ie.intime AS icu_intime
    , ie.outtime AS icu_outtime
    -- DECIMAL without a width is DECIMAL(18, 3): the days are rounded to 3 places, then to 2
    , ROUND(TRY_CAST(date_diff('microseconds', ie.intime, ie.outtime) / 3600000000.0 / 24.0 AS DECIMAL), 2) AS los_icu
    , DENSE_RANK() OVER (PARTITION BY ie.hadm_id ORDER BY ie.intime) AS icustay_seq
    , DENSE_RANK() OVER (PARTITION BY ie.hadm_id ORDER BY ie.intime) = 1 AS first_icu_stay
FROM mimiciv_icu.icustays AS ie
INNER JOIN mimiciv_hosp.admissions AS adm
    ON ie.hadm_id = adm.hadm_id
INNER JOIN mimiciv_hosp.patients AS pat
    ON ie.subject_id = pat.subject_id
