-- Concept: kdigo_stages
-- Definition: KDIGO acute kidney injury stage at every creatinine, urine-output and CRRT
--   charting time of an ICU stay: creatinine stage (>= 0.3 mg/dL rise within 48 h or >= 1.5x the
--   7-day low -> 1; >= 2x -> 2; >= 3x, or >= 4.0 mg/dL after an acute rise -> 3), urine-output
--   stage (< 0.5 mL/kg/h for 6-12 h -> 1; < 0.5 for >= 12 h -> 2; < 0.3 for 24 h or anuria for
--   12 h -> 3), CRRT -> 3; aki_stage is the worst of the three and aki_stage_smoothed the worst
--   of the previous 6 hours.
-- Source: KDIGO AKI guideline (2012); MIT-LCP mimic-code organfailure/kdigo_stages.
-- Grain: stay_id, charttime
-- Deviations: creatinine rises and ratios are compared after rounding to 4 decimal places, so
--   1.1 -> 1.4 (+0.3) and 0.8 -> 1.2 (1.5x) stage as the guideline says (the public code loses
--   them to binary floating point). The smoothed stage looks back within the same ICU stay (the
--   public code partitions by subject while ordering by time since each stay's admission, which
--   mixes stays).
WITH cr_stg AS (
    SELECT stay_id, charttime, creat_low_past_7day, creat_low_past_48hr, creat,
        CASE
            WHEN ROUND(creat / creat_low_past_7day, 4) >= 3.0 THEN 3
            -- >= 4.0 mg/dL counts as stage 3 only after an acute rise
            WHEN creat >= 4
                AND (creat_low_past_48hr <= 3.7 OR ROUND(creat / creat_low_past_7day, 4) >= 1.5) THEN 3
            WHEN ROUND(creat / creat_low_past_7day, 4) >= 2.0 THEN 2
            WHEN ROUND(creat - creat_low_past_48hr, 4) >= 0.3 THEN 1
            WHEN ROUND(creat / creat_low_past_7day, 4) >= 1.5 THEN 1
            ELSE 0
        END AS aki_stage_creat
    FROM mimiciv_derived.kdigo_creatinine
),
uo_stg AS (
    SELECT uo.stay_id, uo.charttime, uo.weight, uo.uo_rt_6hr, uo.uo_rt_12hr, uo.uo_rt_24hr,
        CASE
            WHEN uo.uo_rt_6hr IS NULL THEN NULL
            -- the first 6 ICU hours cannot show 6 h of oliguria
            WHEN uo.charttime <= ie.intime + INTERVAL 6 HOUR THEN 0
            WHEN uo.uo_tm_24hr >= 24 AND uo.uo_rt_24hr < 0.3 THEN 3
            WHEN uo.uo_tm_12hr >= 12 AND uo.uo_rt_12hr = 0 THEN 3
            WHEN uo.uo_tm_12hr >= 12 AND uo.uo_rt_12hr < 0.5 THEN 2
            WHEN uo.uo_tm_6hr >= 6 AND uo.uo_rt_6hr < 0.5 THEN 1
            ELSE 0
        END AS aki_stage_uo
    FROM mimiciv_derived.kdigo_uo AS uo
    INNER JOIN mimiciv_icu.icustays AS ie ON ie.stay_id = uo.stay_id
),
crrt_stg AS (
    SELECT DISTINCT stay_id, charttime, 3 AS aki_stage_crrt
    FROM mimiciv_derived.crrt
    WHERE crrt_mode IS NOT NULL AND charttime IS NOT NULL
),
tm_stg AS (
    SELECT stay_id, charttime FROM cr_stg
    UNION
    SELECT stay_id, charttime FROM uo_stg
    UNION
    SELECT stay_id, charttime FROM crrt_stg
),
staged AS (
    SELECT ie.subject_id, ie.hadm_id, ie.stay_id, ie.intime, tm.charttime,
        cr.creat_low_past_7day, cr.creat_low_past_48hr, cr.creat, cr.aki_stage_creat,
        uo.uo_rt_6hr, uo.uo_rt_12hr, uo.uo_rt_24hr, uo.aki_stage_uo,
        crrt.aki_stage_crrt,
        GREATEST(COALESCE(cr.aki_stage_creat, 0), COALESCE(uo.aki_stage_uo, 0), COALESCE(crrt.aki_stage_crrt, 0)) AS aki_stage
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN tm_stg AS tm ON tm.stay_id = ie.stay_id
    LEFT JOIN cr_stg AS cr ON cr.stay_id = tm.stay_id AND cr.charttime = tm.charttime
    LEFT JOIN uo_stg AS uo ON uo.stay_id = tm.stay_id AND uo.charttime = tm.charttime
    LEFT JOIN crrt_stg AS crrt ON crrt.stay_id = tm.stay_id AND crrt.charttime = tm.charttime
)
SELECT subject_id, hadm_id, stay_id, charttime,
    creat_low_past_7day, creat_low_past_48hr, creat, aki_stage_creat,
    uo_rt_6hr, uo_rt_12hr, uo_rt_24hr, aki_stage_uo, aki_stage_crrt, aki_stage,
    MAX(aki_stage) OVER (
        PARTITION BY stay_id ORDER BY date_diff('second', intime, charttime)
        RANGE BETWEEN 21600 PRECEDING AND CURRENT ROW
    ) AS aki_stage_smoothed
FROM staged
