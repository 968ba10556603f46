-- Concept: ventilation__cpap_psv_noninvasive
-- Definition: ventilation episodes as in task mimic-ventilation (status priority, 14 h gap,
--   single-observation episodes dropped, numbered by start time), except that a charting whose
--   only evidence of invasive ventilation is a CPAP or pressure-support ventilator mode
--   (CPAP/PSV, CPAP/PPS, CPAP/PSV with apnoea back-up) is NonInvasiveVent. An endotracheal
--   tube or tracheostomy charted at the same time still makes it invasive.
-- Source: treatment/ventilation (same rules otherwise); Ferreyro et al., JAMA 2020 (device
--   classes). Clinical reason: CPAP and pressure support are spontaneous-breathing modes that
--   are also delivered by face mask or helmet; without a charted artificial airway, counting
--   them as mechanical ventilation inflates invasive-ventilation exposure and duration (for
--   example in weaning, where PSV trials follow extubation-ready patients).
-- Grain: stay_id, ventilation_seq
-- Deviations: CPAP/PSV-family modes without an airway are non-invasive (default target:
--   invasive). The rule is the ventilation_status_cpap_psv_noninvasive column of
--   ventilation_status; the episodes are ventilation_episodes' (status_rule
--   'cpap_psv_noninvasive'), the same episode SQL as the default concept.
SELECT
    stay_id
    , ventilation_seq
    , starttime
    , endtime
    , ventilation_status
FROM mimiciv_derived.ventilation_episodes
WHERE status_rule = 'cpap_psv_noninvasive'
