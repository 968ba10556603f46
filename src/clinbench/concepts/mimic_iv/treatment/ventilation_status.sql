-- Concept: ventilation_status
-- Definition: The respiratory-support status of each ventilator-setting or oxygen-delivery
--   charting time of an ICU stay, in priority order: Tracheostomy (tracheostomy tube or trach
--   mask) > InvasiveVent (endotracheal tube, or an invasive ventilator mode) > NonInvasiveVent
--   (BiPAP/CPAP mask, or a Hamilton NIV mode) > HFNC (high flow nasal cannula) >
--   SupplementalOxygen (non-rebreather, face tent, aerosol, venti mask, nasal cannula, ...) >
--   None; chartings that match no class are dropped. The two status columns differ only for
--   the CPAP / pressure-support ventilator modes (CPAP/PSV, CPAP/PPS, CPAP/PSV with apnoea
--   back-up): ventilation_status counts them as InvasiveVent (mimic-code);
--   ventilation_status_cpap_psv_noninvasive counts them as NonInvasiveVent, so such a charting
--   is invasive only when a tracheostomy, an endotracheal tube or another invasive mode is
--   charted at the same time.
-- Source: mimic-code treatment/ventilation (MIT-LCP); device classes after Ferreyro et al.,
--   JAMA 2020 (doi:10.1001/jama.2020.9524). CPAP/PSV rule: variants/
--   ventilation__cpap_psv_noninvasive.sql (clinical reason there).
-- Grain: stay_id, charttime
-- Deviations: none for ventilation_status. Public behaviours kept on purpose: BiPAP/CPAP masks
--   count in any of the four device slots, every other device only in the first; device-only
--   chartings without an O2 flow are absent from oxygen_delivery and so never classified.
-- Helper: clinbench's own intermediate, read by ventilation_episodes; no anchor builds it.
WITH tm AS (
    SELECT stay_id, charttime FROM mimiciv_derived.ventilator_setting
    UNION
    SELECT stay_id, charttime FROM mimiciv_derived.oxygen_delivery
)

-- what is charted at each time, one flag per class (NULL when nothing of it is charted)
, evidence AS (
    SELECT
        tm.stay_id
        , tm.charttime
        , od.o2_delivery_device_1 IN ('Tracheostomy tube', 'Trach mask ') AS tracheostomy
        , od.o2_delivery_device_1 IN ('Endotracheal tube')
            OR vs.ventilator_mode IN (
                '(S) CMV', 'APRV', 'APRV/Biphasic+ApnPress', 'APRV/Biphasic+ApnVol', 'APV (cmv)'
                , 'Ambient', 'Apnea Ventilation', 'CMV', 'CMV/ASSIST', 'CMV/ASSIST/AutoFlow'
                , 'CMV/AutoFlow', 'MMV', 'MMV/AutoFlow', 'MMV/PSV', 'MMV/PSV/AutoFlow', 'P-CMV'
                , 'PCV+', 'PCV+/PSV', 'PCV+Assist', 'PRES/AC', 'PRVC/AC', 'PRVC/SIMV', 'PSV/SBT'
                , 'SIMV', 'SIMV/AutoFlow', 'SIMV/PRES', 'SIMV/PSV', 'SIMV/PSV/AutoFlow', 'SIMV/VOL'
                , 'SYNCHRON MASTER', 'SYNCHRON SLAVE', 'VOL/AC'
            )
            OR vs.ventilator_mode_hamilton IN (
                'APRV', 'APV (cmv)', 'Ambient', '(S) CMV', 'P-CMV', 'SIMV', 'APV (simv)', 'P-SIMV'
                , 'VS', 'ASV'
            ) AS invasive
        -- spontaneous-breathing modes that are also delivered by mask: the two rules differ here
        , vs.ventilator_mode IN (
            'CPAP/PPS', 'CPAP/PSV', 'CPAP/PSV+Apn TCPL', 'CPAP/PSV+ApnPres', 'CPAP/PSV+ApnVol'
        ) AS cpap_psv_mode
        , od.o2_delivery_device_1 IN ('Bipap mask ', 'CPAP mask ')
            OR od.o2_delivery_device_2 IN ('Bipap mask ', 'CPAP mask ')
            OR od.o2_delivery_device_3 IN ('Bipap mask ', 'CPAP mask ')
            OR od.o2_delivery_device_4 IN ('Bipap mask ', 'CPAP mask ')
            OR vs.ventilator_mode_hamilton IN ('DuoPaP', 'NIV', 'NIV-ST') AS noninvasive
        , od.o2_delivery_device_1 IN ('High flow nasal cannula') AS hfnc
        , od.o2_delivery_device_1 IN (
            'Non-rebreather', 'Face tent', 'Aerosol-cool', 'Venti mask ', 'Medium conc mask '
            , 'Ultrasonic neb', 'Vapomist', 'Oxymizer', 'High flow neb', 'Nasal cannula'
        ) AS supplemental_oxygen
        , od.o2_delivery_device_1 IN ('None') AS no_support
    FROM tm
    LEFT JOIN mimiciv_derived.ventilator_setting AS vs
        ON tm.stay_id = vs.stay_id
            AND tm.charttime = vs.charttime
    LEFT JOIN mimiciv_derived.oxygen_delivery AS od
        ON tm.stay_id = od.stay_id
            AND tm.charttime = od.charttime
)

-- the priority ladder, written once and evaluated under both CPAP/PSV rules
, rules AS (
    SELECT * FROM (VALUES (TRUE), (FALSE)) AS r (cpap_psv_invasive)
)

, classified AS (
    SELECT
        evidence.stay_id
        , evidence.charttime
        , rules.cpap_psv_invasive
        , CASE
            WHEN evidence.tracheostomy THEN 'Tracheostomy'
            WHEN evidence.invasive OR (evidence.cpap_psv_mode AND rules.cpap_psv_invasive) THEN 'InvasiveVent'
            WHEN evidence.noninvasive OR evidence.cpap_psv_mode THEN 'NonInvasiveVent'
            WHEN evidence.hfnc THEN 'HFNC'
            WHEN evidence.supplemental_oxygen THEN 'SupplementalOxygen'
            WHEN evidence.no_support THEN 'None'
        END AS status
    FROM evidence
    CROSS JOIN rules
)

-- one row per stay and charting time: ventilator_setting and oxygen_delivery hold one row per
-- subject and time, so each group has exactly one row per rule
SELECT
    stay_id
    , charttime
    , MAX(status) FILTER (WHERE cpap_psv_invasive) AS ventilation_status
    , MAX(status) FILTER (WHERE NOT cpap_psv_invasive) AS ventilation_status_cpap_psv_noninvasive
FROM classified
GROUP BY stay_id, charttime
HAVING COUNT(status) > 0
