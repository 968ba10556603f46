-- Concept: apsiii-24h__axillary_plus_1
-- Definition: APS III and its 16 components as in task mimic-apsiii-24h, with every axillary
--   temperature (vitalsign.temperature_site containing 'axillary') raised by 1 C before the
--   temperature component is scored: the lowest and highest corrected temperature from 6 h
--   before to 24 h after ICU admission, the one farther from 38 C scored (ties: the higher
--   score) on < 33 -> 20, < 33.5 -> 16, < 34 -> 13, < 35 -> 8, < 36 -> 2, < 40 -> 0, else 4;
--   apsiii changes by the difference.
-- Source: score/apsiii (every other component unchanged); Knaus et al., Chest 1991 (APACHE III
--   scores core temperature and adds 1 C to axillary readings); mimic-code's BigQuery apsiii
--   makes the same correction. Clinical reason: an axillary reading under-reads core
--   temperature by about 1 C, so an uncorrected 35.5 C axillary scores hypothermia points
--   for a normothermic patient.
-- Grain: stay_id
-- Deviations: axillary temperatures + 1 C (default target: scored as charted, as mimic-code's
--   DuckDB build).
WITH temps AS (
    SELECT ie.stay_id,
        MIN(CASE WHEN LOWER(v.temperature_site) LIKE '%axillary%' THEN v.temperature + 1.0 ELSE v.temperature END) AS tmin,
        MAX(CASE WHEN LOWER(v.temperature_site) LIKE '%axillary%' THEN v.temperature + 1.0 ELSE v.temperature END) AS tmax
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.vitalsign AS v
        ON v.stay_id = ie.stay_id
        AND v.charttime >= ie.intime - INTERVAL 6 HOUR AND v.charttime <= ie.intime + INTERVAL 1 DAY
        AND v.temperature IS NOT NULL
    GROUP BY ie.stay_id
),
pts AS (
    SELECT stay_id, tmin, tmax,
        CASE WHEN tmin < 33.0 THEN 20 WHEN tmin < 33.5 THEN 16 WHEN tmin < 34.0 THEN 13 WHEN tmin < 35.0 THEN 8
            WHEN tmin < 36.0 THEN 2 WHEN tmin < 40.0 THEN 0 ELSE 4 END AS pts_min,
        CASE WHEN tmax < 33.0 THEN 20 WHEN tmax < 33.5 THEN 16 WHEN tmax < 34.0 THEN 13 WHEN tmax < 35.0 THEN 8
            WHEN tmax < 36.0 THEN 2 WHEN tmax < 40.0 THEN 0 ELSE 4 END AS pts_max
    FROM temps
),
corrected AS (
    SELECT stay_id,
        CASE
            WHEN ABS(tmax - 38) > ABS(tmin - 38) THEN pts_max
            WHEN ABS(tmax - 38) < ABS(tmin - 38) THEN pts_min
            ELSE GREATEST(pts_min, pts_max)
        END AS temp_score
    FROM pts
)
SELECT a.subject_id, a.hadm_id, a.stay_id,
    a.apsiii - a.temp_score + COALESCE(c.temp_score, 0) AS apsiii,
    a.hr_score, a.mbp_score, COALESCE(c.temp_score, 0) AS temp_score, a.resp_rate_score, a.pao2_aado2_score,
    a.hematocrit_score, a.wbc_score, a.creatinine_score, a.uo_score, a.bun_score,
    a.sodium_score, a.albumin_score, a.bilirubin_score, a.glucose_score, a.acidbase_score,
    a.gcs_score
FROM mimiciv_derived.target_apsiii_24h AS a
LEFT JOIN corrected AS c ON c.stay_id = a.stay_id
