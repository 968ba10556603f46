-- Concept: meld-24h
-- Definition: reference output of task mimic-meld-24h: MELD-Na from the first-day labs, one
--   row per ICU stay. Creatinine, bilirubin and INR below 1 count as 1, creatinine above 4 or
--   any RRT on the first day counts as 4; MELD(i) = 10 x round(0.957 ln creatinine + 0.378 ln
--   bilirubin + 1.120 ln INR + 0.643, 1 decimal) (the sum first held at 3 decimals), 40 when
--   the sum exceeds 4; above 11 the sodium term is added: MELD(i) + 1.32 (137 - Na) - 0.033
--   MELD(i) (137 - Na), Na held to 125-137 (a missing sodium adds nothing).
-- Source: organfailure/meld (OPTN MELD-Na 2016; Kim et al. 2008); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/meld-24h.sql.
-- Grain: stay_id
-- Deviations: from the meld concept (mimic-code), the component sum is held at 3 decimals
--   (DuckDB's default DECIMAL, as the anchor writes it) before rounding to 1, instead of 9: a
--   sum from x.x495 up to x.x5 rounds up (1.2496 gives MELD(i) 13, not 12).
WITH cohort AS (
    SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
        labs.creatinine_max, labs.bilirubin_total_max, labs.inr_max, labs.sodium_min,
        r.dialysis_present AS rrt
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN mimiciv_derived.first_day_lab AS labs ON labs.stay_id = ie.stay_id
    LEFT JOIN mimiciv_derived.first_day_rrt AS r ON r.stay_id = ie.stay_id
),
terms AS (
    SELECT subject_id, hadm_id, stay_id,
        CASE WHEN sodium_min IS NULL OR sodium_min > 137 THEN 0.0
            WHEN sodium_min < 125 THEN 12.0
            ELSE 137.0 - sodium_min END AS sodium_term,
        CASE WHEN rrt = 1 OR creatinine_max > 4.0 THEN 0.957 * LN(4)
            WHEN creatinine_max < 1 THEN 0.957 * LN(1)
            ELSE 0.957 * COALESCE(LN(creatinine_max), LN(1)) END AS creatinine_term,
        CASE WHEN bilirubin_total_max < 1 THEN 0.378 * LN(1)
            ELSE 0.378 * COALESCE(LN(bilirubin_total_max), LN(1)) END AS bilirubin_term,
        CASE WHEN inr_max < 1 THEN 1.120 * LN(1) + 0.643
            ELSE 1.120 * COALESCE(LN(inr_max), LN(1)) + 0.643 END AS inr_term
    FROM cohort
),
initial AS (
    SELECT subject_id, hadm_id, stay_id, sodium_term,
        CASE WHEN creatinine_term + bilirubin_term + inr_term > 4 THEN 40.0
            ELSE ROUND(TRY_CAST(creatinine_term + bilirubin_term + inr_term AS DECIMAL(18, 3)), 1) * 10
        END AS meld_initial
    FROM terms
)
SELECT subject_id, hadm_id, stay_id,
    CAST(CASE WHEN meld_initial > 11
        THEN meld_initial + 1.32 * sodium_term - 0.033 * meld_initial * sodium_term
        ELSE meld_initial END AS DOUBLE) AS meld
FROM initial
