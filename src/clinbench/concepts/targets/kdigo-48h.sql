-- Concept: kdigo-48h
-- Definition: reference output of task mimic-kdigo-48h: the worst KDIGO stage within the first
--   48 hours of the ICU stay (intime to intime + 48 h, both ends included) by creatinine, by
--   urine output and by CRRT, and overall (the maximum of the three); a stay without any staged
--   measurement in the window is stage 0.
-- Source: organfailure/kdigo_stages (KDIGO 2012; task convention in TASKS.md).
-- Grain: stay_id
-- Deviations: those of kdigo_stages (creatinine boundaries compared at 4 decimal places).
SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
    COALESCE(MAX(k.aki_stage), 0) AS aki_stage,
    COALESCE(MAX(k.aki_stage_creat), 0) AS aki_stage_creat,
    COALESCE(MAX(k.aki_stage_uo), 0) AS aki_stage_uo,
    COALESCE(MAX(k.aki_stage_crrt), 0) AS aki_stage_crrt
FROM mimiciv_icu.icustays AS ie
LEFT JOIN mimiciv_derived.kdigo_stages AS k
    ON k.stay_id = ie.stay_id
    AND k.charttime >= ie.intime
    AND k.charttime <= ie.intime + INTERVAL 48 HOUR
GROUP BY ie.subject_id, ie.hadm_id, ie.stay_id
