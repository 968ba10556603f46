-- Concept: sirs
-- Definition: Systemic inflammatory response syndrome criteria over the first ICU day (6 h
--   before to 24 h after ICU admission), one point each: temperature < 36 or > 38 C; heart rate
--   > 90/min; respiratory rate > 20/min or PaCO2 < 32 mmHg; WBC < 4 or > 12 x10^9/L or bands
--   > 10%. Components are NULL when unmeasured; sirs sums them with missing = 0.
-- Source: ACCP/SCCM Consensus Conference, Crit Care Med 1992; MIT-LCP mimic-code score/sirs with
--   the open correction of mimic-code PR #2146 (the WBC missing-data guard).
-- Grain: stay_id
-- Deviations: differs from the mimic-code profile in the WBC component's missing-data guard, which
--   also looks at wbc_max (mimic-code: COALESCE(wbc_min, bands_max)): a stay with only a normal
--   wbc_max scores 0 instead of NULL. No row moves when wbc_min and wbc_max come from the same labs
--   (first_day_lab: they are NULL together), as the maintainers note on the PR.
WITH scorecomp AS (
    SELECT ie.subject_id, ie.hadm_id, ie.stay_id,
        v.temperature_min, v.temperature_max, v.heart_rate_max, v.resp_rate_max,
        bg.pco2_min AS paco2_min, l.wbc_min, l.wbc_max, l.bands_max
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN mimiciv_derived.first_day_bg_art AS bg ON bg.stay_id = ie.stay_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = ie.stay_id
    LEFT JOIN mimiciv_derived.first_day_lab AS l ON l.stay_id = ie.stay_id
),
scorecalc AS (
    SELECT subject_id, hadm_id, stay_id,
        CASE
            WHEN temperature_min < 36.0 THEN 1
            WHEN temperature_max > 38.0 THEN 1
            WHEN temperature_min IS NULL THEN NULL
            ELSE 0
        END AS temp_score,
        CASE
            WHEN heart_rate_max > 90.0 THEN 1
            WHEN heart_rate_max IS NULL THEN NULL
            ELSE 0
        END AS heart_rate_score,
        CASE
            WHEN resp_rate_max > 20.0 THEN 1
            WHEN paco2_min < 32.0 THEN 1
            WHEN COALESCE(resp_rate_max, paco2_min) IS NULL THEN NULL
            ELSE 0
        END AS resp_score,
        CASE
            WHEN wbc_min < 4.0 THEN 1
            WHEN wbc_max > 12.0 THEN 1
            WHEN bands_max > 10 THEN 1
            WHEN COALESCE(wbc_min, wbc_max, bands_max) IS NULL THEN NULL
            ELSE 0
        END AS wbc_score
    FROM scorecomp
)
SELECT subject_id, hadm_id, stay_id,
    COALESCE(temp_score, 0) + COALESCE(heart_rate_score, 0) + COALESCE(resp_score, 0)
        + COALESCE(wbc_score, 0) AS sirs,
    temp_score, heart_rate_score, resp_score, wbc_score
FROM scorecalc
