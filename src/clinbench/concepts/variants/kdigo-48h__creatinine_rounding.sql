-- Concept: kdigo-48h__creatinine_rounding
-- Definition: the worst KDIGO stage of task mimic-kdigo-48h (intime to intime + 48 h, both ends
--   included; by creatinine, urine output, CRRT and overall) with the creatinine criteria
--   compared after rounding the rise and the ratio to 4 decimal places: a rise >= 0.3 mg/dL
--   over the 48-hour low or a ratio >= 1.5 / 2 / 3 to the 7-day low, and >= 4.0 mg/dL with
--   such an acute rise for stage 3.
-- Source: organfailure/kdigo_creatinine and kdigo_stages (urine-output and CRRT stages kept),
--   KDIGO AKI guideline 2012. Clinical reason: creatinine is reported to 0.1 mg/dL, and the
--   guideline's thresholds are meant on those reported values: 1.1 -> 1.4 is a rise of 0.3 and
--   0.8 -> 1.2 is 1.5x, yet in binary floating point 1.4 - 1.1 = 0.29999... and 1.2 / 0.8 =
--   1.4999..., so the default (mimic-code) misses exactly the boundary patients.
-- Grain: stay_id
-- Deviations: creatinine rises and ratios rounded to 4 places before the comparisons (default
--   target: compared in binary floating point).
WITH cr AS (
    SELECT stay_id, charttime,
        CASE
            WHEN ROUND(creat / creat_low_past_7day, 4) >= 3.0 THEN 3
            WHEN creat >= 4
                AND (ROUND(creat - creat_low_past_48hr, 4) >= 0.3 OR ROUND(creat / creat_low_past_7day, 4) >= 1.5) THEN 3
            WHEN ROUND(creat / creat_low_past_7day, 4) >= 2.0 THEN 2
            WHEN ROUND(creat - creat_low_past_48hr, 4) >= 0.3 THEN 1
            WHEN ROUND(creat / creat_low_past_7day, 4) >= 1.5 THEN 1
            ELSE 0
        END AS aki_stage_creat
    FROM mimiciv_derived.kdigo_creatinine
),
staged AS (
    SELECT k.stay_id, k.charttime, cr.aki_stage_creat, k.aki_stage_uo, k.aki_stage_crrt,
        GREATEST(COALESCE(cr.aki_stage_creat, 0), COALESCE(k.aki_stage_uo, 0), COALESCE(k.aki_stage_crrt, 0)) AS aki_stage
    FROM mimiciv_derived.kdigo_stages AS k
    LEFT JOIN cr ON cr.stay_id = k.stay_id AND cr.charttime = k.charttime
)
SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
    COALESCE(MAX(k.aki_stage), 0) AS aki_stage,
    COALESCE(MAX(k.aki_stage_creat), 0) AS aki_stage_creat,
    COALESCE(MAX(k.aki_stage_uo), 0) AS aki_stage_uo,
    COALESCE(MAX(CASE WHEN k.aki_stage_crrt > 0 THEN 3 ELSE 0 END), 0) AS aki_stage_crrt
FROM mimiciv_icu.icustays AS ie
LEFT JOIN staged AS k
    ON k.stay_id = ie.stay_id
    AND k.charttime >= ie.intime
    AND k.charttime <= ie.intime + INTERVAL 48 HOUR
GROUP BY ie.subject_id, ie.hadm_id, ie.stay_id
