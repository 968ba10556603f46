-- Concept: ventilation
-- Definition: Episodes of respiratory support per ICU stay. Each ventilator-setting or
--   oxygen-delivery charting time gets one status, in priority order: Tracheostomy
--   (tracheostomy tube or trach mask) > InvasiveVent (endotracheal tube, or an invasive
--   ventilator mode, CPAP/PSV included) > NonInvasiveVent (BiPAP/CPAP mask as first device, or a
--   Hamilton NIV mode) > HFNC (high flow nasal cannula) > SupplementalOxygen (non-rebreather,
--   face tent, aerosol, venti mask, nasal cannula, ...) > None; other rows are unclassified and
--   dropped. Consecutive chartings with the same status form an episode; a charting 14 or more
--   hours after the previous charting of the same status starts a new one. An episode ends at
--   the next charting of any status, or at its own last charting when that next one is 14 or
--   more hours away. Single-charting episodes are dropped.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   treatment/ventilation, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, starttime
-- Deviations: differs from the mimic-code profile in two places, as M4's copy does: a BiPAP/CPAP
--   mask counts only in the first device slot (mimic-code reads any of the four), so a mask
--   charted second is not NonInvasiveVent here; and the 14-hour gaps are exact elapsed hours
--   (mimic-code counts hour boundaries, so 13.5 h crossing 14 boundaries splits there, not here).
--   Device-only chartings without an O2 flow are absent from oxygen_delivery and so never classified.
--   Rewritten for speed with identical rows (the union of times and two LEFT JOINs as one FULL
--   JOIN of the sources; the previous charting of the same status read from the stay's previous
--   charting, which is it whenever the status did not change, so one window less; 0.022 ->
--   0.016 s CPU at 2,000 patients).
WITH
-- one status per charting time (ventilator_setting and oxygen_delivery hold one row per subject and time)
vs AS (
    SELECT
        COALESCE(vs.stay_id, od.stay_id) AS stay_id
        , COALESCE(vs.charttime, od.charttime) AS charttime
        , CASE
            WHEN od.o2_delivery_device_1 IN ('Tracheostomy tube', 'Trach mask ') THEN 'Tracheostomy'
            WHEN od.o2_delivery_device_1 IN ('Endotracheal tube')
                OR vs.ventilator_mode IN (
                    '(S) CMV', 'APRV', 'APRV/Biphasic+ApnPress', 'APRV/Biphasic+ApnVol', 'APV (cmv)'
                    , 'Ambient', 'Apnea Ventilation', 'CMV', 'CMV/ASSIST', 'CMV/ASSIST/AutoFlow'
                    , 'CMV/AutoFlow', 'CPAP/PPS', 'CPAP/PSV', 'CPAP/PSV+Apn TCPL', 'CPAP/PSV+ApnPres'
                    , 'CPAP/PSV+ApnVol', 'MMV', 'MMV/AutoFlow', 'MMV/PSV', 'MMV/PSV/AutoFlow', 'P-CMV'
                    , 'PCV+', 'PCV+/PSV', 'PCV+Assist', 'PRES/AC', 'PRVC/AC', 'PRVC/SIMV', 'PSV/SBT'
                    , 'SIMV', 'SIMV/AutoFlow', 'SIMV/PRES', 'SIMV/PSV', 'SIMV/PSV/AutoFlow', 'SIMV/VOL'
                    , 'SYNCHRON MASTER', 'SYNCHRON SLAVE', 'VOL/AC'
                )
                OR vs.ventilator_mode_hamilton IN (
                    'APRV', 'APV (cmv)', 'Ambient', '(S) CMV', 'P-CMV', 'SIMV', 'APV (simv)', 'P-SIMV'
                    , 'VS', 'ASV'
                ) THEN 'InvasiveVent'
            WHEN od.o2_delivery_device_1 IN ('Bipap mask ', 'CPAP mask ')
                OR vs.ventilator_mode_hamilton IN ('DuoPaP', 'NIV', 'NIV-ST') THEN 'NonInvasiveVent'
            WHEN od.o2_delivery_device_1 IN ('High flow nasal cannula') THEN 'HFNC'
            WHEN od.o2_delivery_device_1 IN (
                'Non-rebreather', 'Face tent', 'Aerosol-cool', 'Venti mask ', 'Medium conc mask '
                , 'Ultrasonic neb', 'Vapomist', 'Oxymizer', 'High flow neb', 'Nasal cannula'
            ) THEN 'SupplementalOxygen'
            WHEN od.o2_delivery_device_1 IN ('None') THEN 'None'
        END AS ventilation_status
    -- each (stay, time) of either source with the other's row at that time: the union of the
    -- times and a LEFT JOIN of each source, as one FULL JOIN (a time without a stay or a stay
    -- without a time matches neither source there, so has no status)
    FROM mimiciv_derived.ventilator_setting AS vs
    FULL JOIN mimiciv_derived.oxygen_delivery AS od
        ON vs.stay_id = od.stay_id
            AND vs.charttime = od.charttime
    WHERE COALESCE(vs.stay_id, od.stay_id) IS NOT NULL
        AND COALESCE(vs.charttime, od.charttime) IS NOT NULL
)

, vd0 AS (
    SELECT
        stay_id
        , charttime
        -- previous charting of any status: when it has the same status it is the previous charting
        -- with that status (for the 14 h gap); when not, a new episode starts whatever the gap
        , LAG(charttime) OVER w AS charttime_lag
        -- next charting of any status (the end of a status)
        , LEAD(charttime) OVER w AS charttime_lead
        , ventilation_status
        , LAG(ventilation_status) OVER w AS ventilation_status_lag
    FROM vs
    WHERE ventilation_status IS NOT NULL
    WINDOW w AS (PARTITION BY stay_id ORDER BY charttime)
)

, vd1 AS (
    SELECT
        *
        , SUM(CASE
            WHEN ventilation_status_lag IS NULL THEN 1
            WHEN ventilation_status_lag <> ventilation_status THEN 1
            WHEN date_diff('microseconds', charttime_lag, charttime) / 3600000000.0 >= 14 THEN 1
            ELSE 0
        END) OVER (PARTITION BY stay_id ORDER BY charttime) AS episode
    FROM vd0
)

SELECT
    stay_id
    , MIN(charttime) AS starttime
    , MAX(CASE
        WHEN charttime_lead IS NULL OR date_diff('microseconds', charttime, charttime_lead) / 3600000000.0 >= 14 THEN charttime
        ELSE charttime_lead
    END) AS endtime
    , MAX(ventilation_status) AS ventilation_status
FROM vd1
GROUP BY stay_id, episode
HAVING MIN(charttime) <> MAX(charttime)
