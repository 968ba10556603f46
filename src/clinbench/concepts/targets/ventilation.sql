-- Concept: ventilation
-- Definition: reference output of task mimic-ventilation: ventilation episodes per ICU stay
--   (Tracheostomy > InvasiveVent > NonInvasiveVent > HFNC > SupplementalOxygen > None; a gap of
--   14 h or more starts a new episode; single-observation episodes dropped), numbered by start
--   time.
-- Source: treatment/ventilation (mimic-code classification).
-- Grain: stay_id, ventilation_seq
-- Deviations: none.
SELECT stay_id,
    ROW_NUMBER() OVER (PARTITION BY stay_id ORDER BY starttime, endtime, ventilation_status) AS ventilation_seq,
    starttime, endtime, ventilation_status
FROM mimiciv_derived.ventilation
