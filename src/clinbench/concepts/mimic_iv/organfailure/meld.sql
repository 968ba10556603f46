-- Concept: meld
-- Definition: MELD-Na from the first ICU day: MELD(i) = 10 x round(0.957 ln(creatinine) +
--   0.378 ln(bilirubin) + 1.120 ln(INR) + 0.643, 1 place), each lab floored at 1.0, creatinine
--   capped at 4.0 and set to 4.0 when renal replacement therapy is present, MELD(i) capped at 40;
--   when MELD(i) > 11, MELD = MELD(i) + 1.32 (137 - Na) - 0.033 MELD(i) (137 - Na) with sodium
--   bounded to 125-137 mmol/L. Missing labs count as normal (1.0; sodium 137).
-- Source: Kamath et al., Hepatology 2001; OPTN MELD-Na policy 9.1.D (2016); MIT-LCP mimic-code
--   organfailure/meld.
-- Grain: stay_id
-- Deviations: none. Labs are the worst values from 6 h before to 24 h after ICU admission
--   (first_day_lab); RRT is any dialysis charted in that window, as in the public code (the
--   policy's "two dialyses in the prior week" cannot be read reliably from ICU charting).
WITH rrt AS (
    SELECT ie.stay_id, MAX(r.dialysis_present) AS rrt
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.rrt AS r
        ON r.stay_id = ie.stay_id
        AND r.charttime >= ie.intime - INTERVAL 6 HOUR
        AND r.charttime <= ie.intime + INTERVAL 1 DAY
    GROUP BY ie.stay_id
),
cohort AS (
    SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
        lab.creatinine_max, lab.bilirubin_total_max, lab.inr_max, lab.sodium_min,
        COALESCE(rrt.rrt, 0) AS rrt
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN mimiciv_derived.first_day_lab AS lab ON lab.stay_id = ie.stay_id
    LEFT JOIN rrt ON rrt.stay_id = ie.stay_id
),
terms AS (
    SELECT *,
        CASE
            WHEN sodium_min IS NULL OR sodium_min > 137 THEN 0.0
            WHEN sodium_min < 125 THEN 12.0
            ELSE 137.0 - sodium_min
        END AS sodium_score,
        0.957 * LN(CASE
            WHEN rrt = 1 OR creatinine_max > 4.0 THEN 4.0
            WHEN creatinine_max IS NULL OR creatinine_max < 1 THEN 1.0
            ELSE creatinine_max END) AS creatinine_score,
        0.378 * LN(CASE
            WHEN bilirubin_total_max IS NULL OR bilirubin_total_max < 1 THEN 1.0
            ELSE bilirubin_total_max END) AS bilirubin_score,
        1.120 * LN(CASE
            WHEN inr_max IS NULL OR inr_max < 1 THEN 1.0
            ELSE inr_max END) + 0.643 AS inr_score
    FROM cohort
),
initial AS (
    SELECT *,
        CASE
            WHEN creatinine_score + bilirubin_score + inr_score > 4 THEN 40.0
            ELSE ROUND(creatinine_score + bilirubin_score + inr_score, 1) * 10
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
