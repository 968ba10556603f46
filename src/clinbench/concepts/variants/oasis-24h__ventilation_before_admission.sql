-- Concept: oasis-24h__ventilation_before_admission
-- Definition: OASIS and its components as in task mimic-oasis-24h, with invasive ventilation
--   (9 points) counted when an invasive episode overlaps the first-day window of every other
--   first-day score, 6 h before to 24 h after ICU admission (episode start <= intime + 24 h
--   and end >= intime - 6 h); oasis changes by the difference.
-- Source: score/oasis (every other component unchanged, read from the task reference);
--   Johnson, Kramer, Clifford, Crit Care Med 2013. Clinical reason: a patient intubated in the
--   emergency department or theatre and extubated just before the ICU transfer was ventilated
--   for the acute illness being scored; mimic-code's window starts at intime, so the same
--   patient scores 0 for ventilation while SOFA and SAPS II windows around him open 6 h earlier.
-- Grain: stay_id
-- Deviations: ventilation window from intime - 6 h (default target: an episode that starts,
--   ends or runs across intime to intime + 24 h, as mimic-code).
WITH vent AS (
    SELECT ie.stay_id, MAX(CASE WHEN v.stay_id IS NOT NULL THEN 1 ELSE 0 END) AS mechvent
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN mimiciv_derived.ventilation AS v
        ON v.stay_id = ie.stay_id AND v.ventilation_status = 'InvasiveVent'
        AND v.starttime <= ie.intime + INTERVAL 1 DAY AND v.endtime >= ie.intime - INTERVAL 6 HOUR
    GROUP BY ie.stay_id
)
SELECT t.subject_id, t.hadm_id, t.stay_id,
    t.oasis - t.mechvent_score + CASE WHEN v.mechvent = 1 THEN 9 ELSE 0 END AS oasis,
    t.preiculos_score, t.age_score, t.gcs_score, t.heart_rate_score, t.mbp_score,
    t.resp_rate_score, t.temp_score, t.urineoutput_score,
    CASE WHEN v.mechvent = 1 THEN 9 ELSE 0 END AS mechvent_score,
    t.electivesurgery_score
FROM mimiciv_derived.target_oasis_24h AS t
LEFT JOIN vent AS v ON v.stay_id = t.stay_id
