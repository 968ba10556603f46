-- Concept: apsiii-24h__missing_as_null
-- Definition: APS III of task mimic-apsiii-24h with every component that had no measurement in
--   the window left empty instead of scored 0; the total is the default's (it counts an empty
--   component 0).
-- Source: score/apsiii and score/apsiii_gases_24h (the empty components are theirs); Knaus et
--   al. 1991. Clinical reason: mimic-code's own apsiii leaves unmeasured components empty; a 0
--   reads as "measured and normal", which hides that labs such as albumin, bilirubin or a blood
--   gas are drawn for the sicker patients, and studies that handle missingness explicitly
--   (imputation, complete-case analysis) need the gaps visible.
-- Grain: stay_id
-- Deviations: unmeasured component = empty (default target: 0); the total is unchanged.
SELECT t.subject_id, t.hadm_id, t.stay_id, t.apsiii,
    a.hr_score, a.mbp_score, a.temp_score, a.resp_rate_score, g.pao2_aado2_score,
    a.hematocrit_score, a.wbc_score, a.creatinine_score, a.uo_score, a.bun_score,
    a.sodium_score, a.albumin_score, a.bilirubin_score, a.glucose_score, g.acidbase_score,
    a.gcs_score
FROM mimiciv_derived.target_apsiii_24h AS t
LEFT JOIN mimiciv_derived.apsiii AS a ON a.stay_id = t.stay_id
LEFT JOIN mimiciv_derived.apsiii_gases_24h AS g ON g.stay_id = t.stay_id
