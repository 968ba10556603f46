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
WITH points_24h AS (
    -- the 24 h maxima need only the points: the window sorts these seven columns, not every
    -- column of sofa_hourly_worst (one points row per hourly row, so the frames are the same)
    SELECT stay_id, hr,
        respiration, coagulation, liver, cardiovascular, cns, renal,
        COALESCE(MAX(respiration) OVER w, 0) AS respiration_24hours,
        COALESCE(MAX(coagulation) OVER w, 0) AS coagulation_24hours,
        COALESCE(MAX(liver) OVER w, 0) AS liver_24hours,
        COALESCE(MAX(cardiovascular) OVER w, 0) AS cardiovascular_24hours,
        COALESCE(MAX(cns) OVER w, 0) AS cns_24hours,
        COALESCE(MAX(renal) OVER w, 0) AS renal_24hours
    FROM mimiciv_derived.sofa_points
    WHERE grain = 'hourly'
    WINDOW w AS (PARTITION BY stay_id ORDER BY hr ROWS BETWEEN 23 PRECEDING AND CURRENT ROW)
)
SELECT w.stay_id, w.hr, w.starttime, w.endtime,
    w.pao2fio2ratio_novent, w.pao2fio2ratio_vent,
    w.rate_epinephrine, w.rate_norepinephrine, w.rate_dopamine, w.rate_dobutamine,
    w.meanbp_min, w.gcs_min, w.uo_24hr, w.bilirubin_max, w.creatinine_max, w.platelet_min,
    p.respiration, p.coagulation, p.liver, p.cardiovascular, p.cns, p.renal,
    p.respiration_24hours, p.coagulation_24hours, p.liver_24hours, p.cardiovascular_24hours,
    p.cns_24hours, p.renal_24hours,
    p.respiration_24hours + p.coagulation_24hours + p.liver_24hours + p.cardiovascular_24hours
        + p.cns_24hours + p.renal_24hours AS sofa_24hours
FROM mimiciv_derived.sofa_hourly_worst AS w
INNER JOIN points_24h AS p ON p.stay_id = w.stay_id AND p.hr = w.hr
WHERE w.hr >= 0
