-- Concept: sofa_points
-- Definition: the SOFA organ points (0-4) of the worst values of both SOFA grains, scored by the
--   one set of cut-offs that sofa and first_day_sofa share: respiration from PaO2/FiO2
--   (< 400 -> 1, < 300 -> 2, < 200 with invasive ventilation -> 3, < 100 with invasive
--   ventilation -> 4; in the first-day grain only an unventilated P/F scores 1-2, so a
--   ventilated 200-399 scores 0, as mimic-code's first_day_sofa), coagulation from platelets (< 150/100/50/20), liver from bilirubin
--   (>= 1.2/2/6/12 mg/dL), cardiovascular from MAP < 70 -> 1, dopamine <= 5 or any
--   dobutamine -> 2, dopamine > 5 or norepinephrine/epinephrine above 0 and <= 0.1 mcg/kg/min -> 3,
--   dopamine > 15 or norepinephrine/epinephrine > 0.1 -> 4, cns from GCS (13-14/10-12/6-9/< 6),
--   renal from creatinine (>= 1.2/2/3.5/5 mg/dL) or urine output (< 500 -> 3, < 200 mL/day -> 4).
--   A component is NULL when none of its inputs was measured.
-- Source: Vincent et al., Intensive Care Med 1996; mimic-code score/sofa and
--   firstday/first_day_sofa (MIT-LCP, commit 8bcbd190, concepts_duckdb) with the open correction of
--   mimic-code PR #2124 (a zero vasopressor rate is no vasopressor). Inputs: sofa_hourly_worst,
--   sofa_first_day_worst.
-- Grain: grain, stay_id, hr - grain 'hourly' has one row per sofa_hourly_worst row (stay_id,
--   hr); grain 'first_day' has one row per ICU stay with hr NULL.
-- Deviations: differs from the mimic-code profile in the cardiovascular component: norepinephrine
--   or epinephrine scores 3 only at a rate above 0 and up to 0.1 mcg/kg/min (mimic-code's `rate <=
--   0.1` scores a charted rate of 0, an infusion paused or stopped, as 3). The hourly and the
--   first-day grains both change, and so sofa, first_day_sofa and sepsis3.
--   Written for speed with identical points: each CASE first sends the rows without any of its
--   inputs to NULL (no other branch can be true for them: each compares a NULL), and the
--   cardiovascular one sends the rows without a vasopressor rate to MAP alone (the branches it
--   skips compare NULL rates); about -0.005 s CPU of the sofa statement at 2,000 patients.
--   Checked: row hashes and types of every table before and after on synthetic patients (seeds 0
--   and 7 at 2,000, seed 1 at 200), and the demo anchor tests.
-- Helper: clinbench's own intermediate, read by sofa, first_day_sofa and variant sepsis3__paused_infusions_unscored; no anchor builds it.
WITH worst AS (
    SELECT 'hourly' AS grain, stay_id, hr,
        pao2fio2ratio_novent, pao2fio2ratio_vent,
        rate_epinephrine, rate_norepinephrine, rate_dopamine, rate_dobutamine,
        meanbp_min AS mbp_min, gcs_min, uo_24hr AS urineoutput,
        bilirubin_max, creatinine_max, platelet_min
    FROM mimiciv_derived.sofa_hourly_worst
    UNION ALL
    SELECT 'first_day', stay_id, NULL,
        pao2fio2_novent_min, pao2fio2_vent_min,
        rate_epinephrine, rate_norepinephrine, rate_dopamine, rate_dobutamine,
        mbp_min, gcs_min, urineoutput,
        bilirubin_max, creatinine_max, platelet_min
    FROM mimiciv_derived.sofa_first_day_worst
)
SELECT grain, stay_id, hr,
    CASE
        WHEN COALESCE(pao2fio2ratio_vent, pao2fio2ratio_novent) IS NULL THEN NULL
        WHEN pao2fio2ratio_vent < 100 THEN 4
        WHEN pao2fio2ratio_vent < 200 THEN 3
        WHEN pao2fio2ratio_novent < 300 THEN 2
        WHEN grain = 'hourly' AND pao2fio2ratio_vent < 300 THEN 2
        WHEN pao2fio2ratio_novent < 400 THEN 1
        WHEN grain = 'hourly' AND pao2fio2ratio_vent < 400 THEN 1
        ELSE 0
    END AS respiration,
    CASE
        WHEN platelet_min IS NULL THEN NULL
        WHEN platelet_min < 20 THEN 4
        WHEN platelet_min < 50 THEN 3
        WHEN platelet_min < 100 THEN 2
        WHEN platelet_min < 150 THEN 1
        ELSE 0
    END AS coagulation,
    CASE
        WHEN bilirubin_max IS NULL THEN NULL
        WHEN bilirubin_max >= 12.0 THEN 4
        WHEN bilirubin_max >= 6.0 THEN 3
        WHEN bilirubin_max >= 2.0 THEN 2
        WHEN bilirubin_max >= 1.2 THEN 1
        ELSE 0
    END AS liver,
    CASE
        WHEN COALESCE(rate_dopamine, rate_dobutamine, rate_epinephrine, rate_norepinephrine) IS NULL
            THEN CASE WHEN mbp_min < 70 THEN 1 WHEN mbp_min IS NULL THEN NULL ELSE 0 END
        WHEN rate_dopamine > 15 OR rate_epinephrine > 0.1 OR rate_norepinephrine > 0.1 THEN 4
        WHEN rate_dopamine > 5 OR (rate_epinephrine > 0 AND rate_epinephrine <= 0.1)
            OR (rate_norepinephrine > 0 AND rate_norepinephrine <= 0.1) THEN 3
        WHEN rate_dopamine > 0 OR rate_dobutamine > 0 THEN 2
        WHEN mbp_min < 70 THEN 1
        ELSE 0
    END AS cardiovascular,
    CASE
        WHEN gcs_min IS NULL THEN NULL
        WHEN gcs_min >= 13 AND gcs_min <= 14 THEN 1
        WHEN gcs_min >= 10 AND gcs_min <= 12 THEN 2
        WHEN gcs_min >= 6 AND gcs_min <= 9 THEN 3
        WHEN gcs_min < 6 THEN 4
        ELSE 0
    END AS cns,
    CASE
        WHEN COALESCE(urineoutput, creatinine_max) IS NULL THEN NULL
        WHEN creatinine_max >= 5.0 THEN 4
        WHEN urineoutput < 200 THEN 4
        WHEN creatinine_max >= 3.5 THEN 3
        WHEN urineoutput < 500 THEN 3
        WHEN creatinine_max >= 2.0 THEN 2
        WHEN creatinine_max >= 1.2 THEN 1
        ELSE 0
    END AS renal
FROM worst
