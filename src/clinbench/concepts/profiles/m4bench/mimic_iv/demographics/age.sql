-- Concept: age
-- Definition: Age in years at hospital admission, fractional: anchor_age plus the time from
--   1 January of anchor_year to the (shifted) admission, in years of 365.2425 days.
-- Source: M4Bench 0.5.3's pipeline (hannesill/m4 6ed55907, the vendored mimic-code copy's
--   demographics/age, built by `m4 init-derived mimic-iv`).
-- Grain: hadm_id
-- Deviations: differs from the mimic-code profile (whole calendar years) in every row: age is
--   fractional here (52.35, not 52).
SELECT
    adm.subject_id
    , adm.hadm_id
    , adm.admittime
    , pat.anchor_age
    , pat.anchor_year
    , pat.anchor_age
        + date_diff('microseconds', make_timestamp(pat.anchor_year, 1, 1, 0, 0, 0), adm.admittime)
        / 31556908800000.0 AS age
FROM mimiciv_hosp.admissions AS adm
INNER JOIN mimiciv_hosp.patients AS pat
    ON adm.subject_id = pat.subject_id
