-- Concept: age
-- Definition: Age in years at hospital admission: anchor_age plus the number of calendar
--   years between anchor_year and the (shifted) admission year.
-- Source: MIMIC-IV documentation of patients.anchor_age / anchor_year; mimic-code
--   demographics/age (MIT-LCP).
-- Grain: hadm_id
-- Deviations: none.
SELECT
    adm.subject_id
    , adm.hadm_id
    , adm.admittime
    , pat.anchor_age
    , pat.anchor_year
    -- whole calendar years, as the public concept counts year boundaries
    , pat.anchor_age + (EXTRACT(YEAR FROM adm.admittime) - pat.anchor_year) AS age
FROM mimiciv_hosp.admissions AS adm
INNER JOIN mimiciv_hosp.patients AS pat
    ON adm.subject_id = pat.subject_id
