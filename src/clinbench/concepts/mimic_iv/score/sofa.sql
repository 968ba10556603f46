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
--   feed the first rolling window. Rewritten for speed with identical rows (the six MAX windows as
--   one BIT_OR window over thermometer-coded points, 0.27 -> 0.16 s CPU at 2,000 patients): every
--   row and type the same on the demo (anchor tests, both profiles) and on 2,000 synthetic patients
--   (row hashes before and after).
WITH points_24h AS (
    -- the six 24 h maxima in one window: each component (0-4, NULL as 0) as a 4-bit thermometer
    -- code (v -> 2^v - 1) at bits 4c..4c+3; OR over the frame is the code of the maximum, and its
    -- bit count the maximum. One window on sofa_points' point columns, not one per component.
    SELECT stay_id, hr,
        respiration, coagulation, liver, cardiovascular, cns, renal,
        BIT_OR(
            ((1 << COALESCE(respiration, 0)) - 1)
            | (((1 << COALESCE(coagulation, 0)) - 1) << 4)
            | (((1 << COALESCE(liver, 0)) - 1) << 8)
            | (((1 << COALESCE(cardiovascular, 0)) - 1) << 12)
            | (((1 << COALESCE(cns, 0)) - 1) << 16)
            | (((1 << COALESCE(renal, 0)) - 1) << 20)
        ) OVER (PARTITION BY stay_id ORDER BY hr ROWS BETWEEN 23 PRECEDING AND CURRENT ROW) AS worst
    FROM mimiciv_derived.sofa_points
    WHERE grain = 'hourly'
),
points AS (
    SELECT stay_id, hr, respiration, coagulation, liver, cardiovascular, cns, renal,
        CAST(bit_count(worst & 15) AS INTEGER) AS respiration_24hours,
        CAST(bit_count((worst >> 4) & 15) AS INTEGER) AS coagulation_24hours,
        CAST(bit_count((worst >> 8) & 15) AS INTEGER) AS liver_24hours,
        CAST(bit_count((worst >> 12) & 15) AS INTEGER) AS cardiovascular_24hours,
        CAST(bit_count((worst >> 16) & 15) AS INTEGER) AS cns_24hours,
        CAST(bit_count((worst >> 20) & 15) AS INTEGER) AS renal_24hours
    FROM points_24h
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
INNER JOIN points AS p ON p.stay_id = w.stay_id AND p.hr = w.hr
WHERE w.hr >= 0
