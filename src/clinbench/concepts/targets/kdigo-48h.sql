-- Concept: kdigo-48h
-- Definition: reference output of task mimic-kdigo-48h: the worst KDIGO stage within the first
--   48 hours of the ICU stay (intime to intime + 48 h, both ends included) by creatinine, by
--   urine output and by CRRT (3 when CRRT runs, else 0), and overall (the largest stage of
--   kdigo_stages in the window); a stay without any staged measurement in the window is stage 0.
-- Source: organfailure/kdigo_stages (KDIGO 2012); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/kdigo-48h.sql.
-- Grain: stay_id
-- Deviations: none from kdigo_stages; the 48 h window and stage 0 for unstaged stays are the
--   task's.
SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
    COALESCE(MAX(k.aki_stage), 0) AS aki_stage,
    COALESCE(MAX(k.aki_stage_creat), 0) AS aki_stage_creat,
    COALESCE(MAX(k.aki_stage_uo), 0) AS aki_stage_uo,
    COALESCE(MAX(CASE WHEN k.aki_stage_crrt > 0 THEN 3 ELSE 0 END), 0) AS aki_stage_crrt
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.kdigo_stages AS k
    ON k.stay_id = ie.stay_id
    AND k.charttime >= ie.intime
    AND k.charttime <= ie.intime + INTERVAL 48 HOUR
GROUP BY ie.subject_id, ie.hadm_id, ie.stay_id
