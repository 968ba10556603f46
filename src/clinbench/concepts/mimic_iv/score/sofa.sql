-- Concept: sofa
-- Definition: Sequential Organ Failure Assessment for every hour of an ICU stay: each organ
--   component (respiration, coagulation, liver, cardiovascular, cns, renal) scored from the
--   worst value charted in that hour (sofa_hourly_worst, scored in sofa_points), and the
--   *_24hours columns holding the worst component of the last 24 hourly rows (missing = 0),
--   summed into sofa_24hours.
-- Source: Vincent et al., Intensive Care Med 1996; mimic-code score/sofa (MIT-LCP, commit
--   8bcbd190, concepts_duckdb; hourly grid
--   from icustay_hourly, 24 h rolling maximum of each component).
-- Grain: stay_id, hr
-- Deviations: none. Rows with hr < 0 are kept out of the output, as in the public code, but still
--   feed the first rolling window.
WITH scorecalc AS (
    SELECT w.*,
        p.respiration, p.coagulation, p.liver, p.cardiovascular, p.cns, p.renal
    FROM mimiciv_derived.sofa_hourly_worst AS w
    INNER JOIN mimiciv_derived.sofa_points AS p
        ON p.grain = 'hourly' AND p.stay_id = w.stay_id AND p.hr = w.hr
),
score_final AS (
    SELECT s.*,
        COALESCE(MAX(respiration) OVER w, 0) AS respiration_24hours,
        COALESCE(MAX(coagulation) OVER w, 0) AS coagulation_24hours,
        COALESCE(MAX(liver) OVER w, 0) AS liver_24hours,
        COALESCE(MAX(cardiovascular) OVER w, 0) AS cardiovascular_24hours,
        COALESCE(MAX(cns) OVER w, 0) AS cns_24hours,
        COALESCE(MAX(renal) OVER w, 0) AS renal_24hours
    FROM scorecalc AS s
    WINDOW w AS (PARTITION BY stay_id ORDER BY hr ROWS BETWEEN 23 PRECEDING AND CURRENT ROW)
)
SELECT stay_id, hr, starttime, endtime,
    pao2fio2ratio_novent, pao2fio2ratio_vent,
    rate_epinephrine, rate_norepinephrine, rate_dopamine, rate_dobutamine,
    meanbp_min, gcs_min, uo_24hr, bilirubin_max, creatinine_max, platelet_min,
    respiration, coagulation, liver, cardiovascular, cns, renal,
    respiration_24hours, coagulation_24hours, liver_24hours, cardiovascular_24hours,
    cns_24hours, renal_24hours,
    respiration_24hours + coagulation_24hours + liver_24hours + cardiovascular_24hours
        + cns_24hours + renal_24hours AS sofa_24hours
FROM score_final
WHERE hr >= 0
