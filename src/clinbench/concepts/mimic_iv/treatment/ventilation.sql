-- Concept: ventilation
-- Definition: Episodes of respiratory support per ICU stay. Each ventilator-setting or
--   oxygen-delivery charting time gets one status, in priority order: Tracheostomy
--   (tracheostomy tube or trach mask) > InvasiveVent (endotracheal tube, or an invasive
--   ventilator mode, CPAP/PSV included) > NonInvasiveVent (BiPAP/CPAP mask, or a Hamilton NIV
--   mode) > HFNC (high flow nasal cannula) > SupplementalOxygen (non-rebreather, face tent,
--   aerosol, venti mask, nasal cannula, ...) > None; other rows are unclassified and dropped.
--   Consecutive chartings with the same status form an episode; a charting 14 or more hour
--   boundaries after the previous charting of the same status starts a new one. An episode ends
--   at the next charting of any status, or at its own last charting when that next one is 14 or
--   more hour boundaries away. Single-charting episodes are dropped. The status rules live in
--   ventilation_status (column ventilation_status), the episode rules in ventilation_episodes
--   (status_rule 'default'); this file only selects the public columns.
-- Source: mimic-code treatment/ventilation (MIT-LCP); device classes after Ferreyro et al.,
--   JAMA 2020 (doi:10.1001/jama.2020.9524).
-- Grain: stay_id, starttime
-- Deviations: none. Public behaviours kept on purpose: gaps count hour boundaries
--   (date_diff('hour')), so 13.5 h crossing 14 boundaries splits; BiPAP/CPAP masks count in
--   any of the four device slots, every other device only in the first; device-only
--   chartings without an O2 flow are absent from oxygen_delivery and so never classified.
SELECT
    stay_id
    , starttime
    , endtime
    , ventilation_status
FROM mimiciv_derived.ventilation_episodes
WHERE status_rule = 'default'
