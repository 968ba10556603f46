-- Concept: ventilation
-- Definition: reference output of task mimic-ventilation: ventilation episodes per ICU stay,
--   numbered by start time. Each charting of ventilator_setting or oxygen_delivery gets one
--   status from the first O2 delivery device and the ventilator modes: Tracheostomy (tracheostomy
--   tube, trach mask) > InvasiveVent (endotracheal tube or an invasive mode) > NonInvasiveVent
--   (BiPAP or CPAP mask as first device, or Hamilton DuoPaP/NIV/NIV-ST) > HFNC > SupplementalOxygen
--   > None. A new episode starts when the status changes or 14 h or more (exact elapsed time)
--   have passed since the previous charting of the same status; an episode ends at the next
--   charting unless that is 14 h or more later; single-charting episodes are dropped.
-- Source: treatment/ventilation (mimic-code classification); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/ventilation.sql.
-- Grain: stay_id, ventilation_seq
-- Deviations: from the ventilation concept (mimic-code), only the first O2 delivery device can
--   make a charting NonInvasiveVent (mimic-code also reads devices 2-4), and the 14 h gap is
--   exact elapsed time instead of clock-hour boundaries crossed.
WITH tm AS (
    SELECT stay_id, charttime FROM mimiciv_derived.ventilator_setting
    UNION
    SELECT stay_id, charttime FROM mimiciv_derived.oxygen_delivery
),
status AS (
    SELECT tm.stay_id, tm.charttime,
        CASE
            WHEN od.o2_delivery_device_1 IN ('Tracheostomy tube', 'Trach mask ') THEN 'Tracheostomy'
            WHEN od.o2_delivery_device_1 IN ('Endotracheal tube')
                OR vs.ventilator_mode IN ('(S) CMV', 'APRV', 'APRV/Biphasic+ApnPress', 'APRV/Biphasic+ApnVol',
                    'APV (cmv)', 'Ambient', 'Apnea Ventilation', 'CMV', 'CMV/ASSIST', 'CMV/ASSIST/AutoFlow',
                    'CMV/AutoFlow', 'CPAP/PPS', 'CPAP/PSV', 'CPAP/PSV+Apn TCPL', 'CPAP/PSV+ApnPres',
                    'CPAP/PSV+ApnVol', 'MMV', 'MMV/AutoFlow', 'MMV/PSV', 'MMV/PSV/AutoFlow', 'P-CMV', 'PCV+',
                    'PCV+/PSV', 'PCV+Assist', 'PRES/AC', 'PRVC/AC', 'PRVC/SIMV', 'PSV/SBT', 'SIMV',
                    'SIMV/AutoFlow', 'SIMV/PRES', 'SIMV/PSV', 'SIMV/PSV/AutoFlow', 'SIMV/VOL',
                    'SYNCHRON MASTER', 'SYNCHRON SLAVE', 'VOL/AC')
                OR vs.ventilator_mode_hamilton IN ('APRV', 'APV (cmv)', 'Ambient', '(S) CMV', 'P-CMV', 'SIMV',
                    'APV (simv)', 'P-SIMV', 'VS', 'ASV') THEN 'InvasiveVent'
            WHEN od.o2_delivery_device_1 IN ('Bipap mask ', 'CPAP mask ')
                OR vs.ventilator_mode_hamilton IN ('DuoPaP', 'NIV', 'NIV-ST') THEN 'NonInvasiveVent'
            WHEN od.o2_delivery_device_1 IN ('High flow nasal cannula') THEN 'HFNC'
            WHEN od.o2_delivery_device_1 IN ('Non-rebreather', 'Face tent', 'Aerosol-cool', 'Venti mask ',
                'Medium conc mask ', 'Ultrasonic neb', 'Vapomist', 'Oxymizer', 'High flow neb',
                'Nasal cannula') THEN 'SupplementalOxygen'
            WHEN od.o2_delivery_device_1 IN ('None') THEN 'None'
        END AS ventilation_status
    FROM tm
    LEFT JOIN mimiciv_derived.ventilator_setting AS vs ON vs.stay_id = tm.stay_id AND vs.charttime = tm.charttime
    LEFT JOIN mimiciv_derived.oxygen_delivery AS od ON od.stay_id = tm.stay_id AND od.charttime = tm.charttime
),
lagged AS (
    SELECT stay_id, charttime, ventilation_status,
        LAG(charttime) OVER (PARTITION BY stay_id, ventilation_status ORDER BY charttime NULLS FIRST) AS same_status_lag,
        LEAD(charttime) OVER w AS charttime_lead,
        LAG(ventilation_status) OVER w AS status_lag
    FROM status
    WHERE ventilation_status IS NOT NULL
    WINDOW w AS (PARTITION BY stay_id ORDER BY charttime NULLS FIRST)
),
numbered AS (
    SELECT *,
        SUM(CASE
            WHEN status_lag IS NULL THEN 1
            WHEN DATE_DIFF('microseconds', same_status_lag, charttime) / 3600000000.0 >= 14 THEN 1
            WHEN status_lag <> ventilation_status THEN 1
            ELSE 0 END) OVER (PARTITION BY stay_id ORDER BY charttime NULLS FIRST) AS vent_seq
    FROM lagged
),
episodes AS (
    SELECT stay_id, MIN(charttime) AS starttime,
        MAX(CASE WHEN charttime_lead IS NULL
                OR DATE_DIFF('microseconds', charttime, charttime_lead) / 3600000000.0 >= 14
            THEN charttime ELSE charttime_lead END) AS endtime,
        MAX(ventilation_status) AS ventilation_status
    FROM numbered
    GROUP BY stay_id, vent_seq
    HAVING MIN(charttime) <> MAX(charttime)
)
SELECT stay_id,
    ROW_NUMBER() OVER (PARTITION BY stay_id ORDER BY starttime) AS ventilation_seq,
    starttime, endtime, ventilation_status
FROM episodes
