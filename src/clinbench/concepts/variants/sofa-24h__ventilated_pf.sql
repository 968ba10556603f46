-- Concept: sofa-24h__ventilated_pf
-- Definition: the first-day SOFA of task mimic-sofa-24h with the respiration component scored on
--   the full SOFA table whether or not the patient was ventilated at the draw: the lowest
--   PaO2/FiO2 < 400 -> 1, < 300 -> 2 (ventilated or not), < 200 with invasive ventilation ->
--   3, < 100 with invasive ventilation -> 4; sofa changes by the difference.
-- Source: score/sofa_first_day_worst (same blood gases and window) and score/sofa_points (the
--   hourly grain already scores this way, as mimic-code's hourly sofa does); Vincent et al.,
--   Intensive Care Med 1996. Clinical reason: the SOFA table gives 1-2 points for P/F 200-399
--   to every patient; mimic-code's first-day code has no ventilated branch below 400, so a
--   ventilated patient with P/F 250 scores 0 while an unventilated one with the same ratio
--   scores 2 - the sicker patient looks healthier.
-- Grain: stay_id
-- Deviations: ventilated P/F 200-399 scores 1-2 (default target: 0 when only ventilated gases
--   were drawn, as mimic-code's first_day_sofa).
WITH resp AS (
    SELECT stay_id,
        CASE
            WHEN pao2fio2_vent_min < 100 THEN 4
            WHEN pao2fio2_vent_min < 200 THEN 3
            WHEN pao2fio2_novent_min < 300 THEN 2
            WHEN pao2fio2_vent_min < 300 THEN 2
            WHEN pao2fio2_novent_min < 400 THEN 1
            WHEN pao2fio2_vent_min < 400 THEN 1
            WHEN COALESCE(pao2fio2_vent_min, pao2fio2_novent_min) IS NULL THEN NULL
            ELSE 0
        END AS respiration
    FROM mimiciv_derived.sofa_first_day_worst
)
SELECT s.subject_id, s.hadm_id, s.stay_id,
    s.sofa - s.respiration + COALESCE(r.respiration, 0) AS sofa,
    COALESCE(r.respiration, 0) AS respiration,
    s.coagulation, s.liver, s.cardiovascular, s.cns, s.renal
FROM mimiciv_derived.target_sofa_24h AS s
LEFT JOIN resp AS r ON r.stay_id = s.stay_id
