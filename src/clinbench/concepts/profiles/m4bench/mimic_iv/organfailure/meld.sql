-- Concept: meld
-- Definition: MELD-Na from the first ICU day: MELD(i) = 10 x round(0.957 ln(creatinine) +
--   0.378 ln(bilirubin) + 1.120 ln(INR) + 0.643, 1 place), each lab floored at 1.0, creatinine
--   capped at 4.0 and set to 4.0 when renal replacement therapy is present, MELD(i) = 40 when
--   the sum exceeds 4; when MELD(i) > 11, MELD = MELD(i) + 1.32 (137 - Na) - 0.033 MELD(i)
--   (137 - Na) with sodium bounded to 125-137 mmol/L. Missing labs count as normal (1.0;
--   sodium 137). Labs are the worst values from 6 h before to 24 h after ICU admission
--   (first_day_lab); rrt is first_day_rrt.dialysis_present: 1 when dialysis was documented
--   in that window, NULL when nothing was (never 0), as mimic-code.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   organfailure/meld, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id
-- Deviations: differs from the mimic-code profile in the rounding: the sum of the three scores
--   passes through DECIMAL(18, 3) (M4's copy casts to DECIMAL without a width) before it is rounded
--   to 1 place, so 0.7495 becomes 0.750 and then 0.8 (mimic-code: 0.7). The policy's "two dialyses
--   in the prior week" cannot be read reliably from ICU charting; any dialysis documentation in the
--   window counts.
WITH cohort AS (
    SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
        lab.creatinine_max, lab.bilirubin_total_max, lab.inr_max, lab.sodium_min,
        r.dialysis_present AS rrt
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN mimiciv_derived.first_day_lab AS lab ON ie.stay_id = lab.stay_id
    LEFT JOIN mimiciv_derived.first_day_rrt AS r ON ie.stay_id = r.stay_id
),
terms AS (
    SELECT *,
        CASE
            WHEN sodium_min IS NULL THEN 0.0
            WHEN sodium_min > 137 THEN 0.0
            WHEN sodium_min < 125 THEN 12.0
            ELSE 137.0 - sodium_min
        END AS sodium_score,
        CASE
            WHEN rrt = 1 OR creatinine_max > 4.0 THEN 0.957 * LN(4)
            WHEN creatinine_max < 1 THEN 0.957 * LN(1)
            ELSE 0.957 * COALESCE(LN(creatinine_max), LN(1))
        END AS creatinine_score,
        CASE
            WHEN bilirubin_total_max < 1 THEN 0.378 * LN(1)
            ELSE 0.378 * COALESCE(LN(bilirubin_total_max), LN(1))
        END AS bilirubin_score,
        CASE
            WHEN inr_max < 1 THEN 1.120 * LN(1) + 0.643
            ELSE 1.120 * COALESCE(LN(inr_max), LN(1)) + 0.643
        END AS inr_score
    FROM cohort
),
initial AS (
    SELECT *,
        CASE
            WHEN creatinine_score + bilirubin_score + inr_score > 4 THEN 40.0
            ELSE ROUND(TRY_CAST(creatinine_score + bilirubin_score + inr_score AS DECIMAL), 1) * 10
        END AS meld_initial
    FROM terms
)
SELECT subject_id, hadm_id, stay_id, meld_initial,
    CASE
        WHEN meld_initial > 11
            THEN meld_initial + 1.32 * sodium_score - 0.033 * meld_initial * sodium_score
        ELSE meld_initial
    END AS meld,
    rrt, creatinine_max, bilirubin_total_max, inr_max, sodium_min
FROM initial
