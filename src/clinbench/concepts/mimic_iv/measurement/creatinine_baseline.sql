-- Concept: creatinine_baseline
-- Definition: Baseline serum creatinine (mg/dL) for each hospital admission of an adult
--   (age >= 18): the lowest creatinine of the admission if it is <= 1.1 or the patient has
--   chronic kidney disease (ICD-9 585.x, ICD-10 N18.x); otherwise the creatinine that gives
--   an eGFR of 75 mL/min/1.73 m2 by the simplified MDRD equation without the race
--   coefficient: 186 x Scr^-1.154 x age^-0.203 x 0.742 (female), solved for Scr.
-- Source: KDIGO 2012 AKI guideline (back-calculation from eGFR 75); Levey et al., Ann Intern
--   Med 1999 (MDRD); mimic-code measurement/creatinine_baseline (MIT-LCP).
-- Grain: hadm_id
-- Deviations: none.
WITH p AS (
    SELECT
        ag.subject_id
        , ag.hadm_id
        , ag.age
        , pat.gender
        , CASE
            WHEN pat.gender = 'F' THEN power(75.0 / 186.0 / power(ag.age, -0.203) / 0.742, -1 / 1.154)
            ELSE power(75.0 / 186.0 / power(ag.age, -0.203), -1 / 1.154)
        END AS mdrd_est
    FROM mimiciv_derived.age AS ag
    LEFT JOIN mimiciv_hosp.patients AS pat
        ON ag.subject_id = pat.subject_id
    WHERE ag.age >= 18
)

, lab AS (
    SELECT hadm_id, MIN(creatinine) AS scr_min
    FROM mimiciv_derived.chemistry
    GROUP BY hadm_id
)

, ckd AS (
    SELECT hadm_id, 1 AS ckd_flag
    FROM mimiciv_hosp.diagnoses_icd
    WHERE (icd_version = 9 AND substr(icd_code, 1, 3) = '585')
        OR (icd_version = 10 AND substr(icd_code, 1, 3) = 'N18')
    GROUP BY hadm_id
)

SELECT
    p.hadm_id
    , p.gender
    , p.age
    , lab.scr_min
    , COALESCE(ckd.ckd_flag, 0) AS ckd
    , p.mdrd_est
    , CASE
        WHEN lab.scr_min <= 1.1 THEN lab.scr_min
        WHEN ckd.ckd_flag = 1 THEN lab.scr_min
        ELSE p.mdrd_est
    END AS scr_baseline
FROM p
LEFT JOIN lab
    ON p.hadm_id = lab.hadm_id
LEFT JOIN ckd
    ON p.hadm_id = ckd.hadm_id
