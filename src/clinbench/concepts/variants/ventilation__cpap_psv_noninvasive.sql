-- Concept: ventilation__cpap_psv_noninvasive
-- Definition: ventilation episodes as in task mimic-ventilation (status priority, 14 h gap,
--   single-observation episodes dropped, numbered by start time), except that a charting whose
--   only evidence of invasive ventilation is a CPAP or pressure-support ventilator mode
--   (CPAP/PSV, CPAP/PPS, CPAP/PSV with apnoea back-up) is NonInvasiveVent. An endotracheal
--   tube or tracheostomy charted at the same time still makes it invasive.
-- Source: target ventilation (same rules otherwise); Ferreyro et al., JAMA 2020 (device
--   classes). Clinical reason: CPAP and pressure support are spontaneous-breathing modes that
--   are also delivered by face mask or helmet; without a charted artificial airway, counting
--   them as mechanical ventilation inflates invasive-ventilation exposure and duration (for
--   example in weaning, where PSV trials follow extubation-ready patients).
-- Grain: stay_id, ventilation_seq
-- Deviations: CPAP/PSV-family modes without an airway are non-invasive (default target:
--   invasive); everything else is the default target's SQL.
WITH tm AS (
    SELECT stay_id, charttime FROM mimiciv_derived.ventilator_setting
    UNION
    SELECT stay_id, charttime FROM mimiciv_derived.oxygen_delivery
),
status AS (
    SELECT tm.stay_id, tm.charttime,
        CASE
            WHEN od.o2_delivery_device_1 IN ('Tracheostomy tube', 'Trach mask ') THEN 'Tracheostomy'
            WHEN COALESCE(od.o2_delivery_device_1, '') <> 'Endotracheal tube'
                AND vs.ventilator_mode IN ('CPAP/PPS', 'CPAP/PSV', 'CPAP/PSV+Apn TCPL', 'CPAP/PSV+ApnPres', 'CPAP/PSV+ApnVol')
                AND COALESCE(vs.ventilator_mode_hamilton, '') NOT IN ('APRV', 'APV (cmv)', 'Ambient', '(S) CMV', 'P-CMV',
                    'SIMV', 'APV (simv)', 'P-SIMV', 'VS', 'ASV') THEN 'NonInvasiveVent'
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
