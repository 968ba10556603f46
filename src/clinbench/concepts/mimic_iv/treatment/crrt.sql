-- Concept: crrt
-- Definition: Continuous renal replacement therapy settings per ICU stay and charting time:
--   CRRT mode (227290), access/effluent/filter/return pressures, blood flow, citrate, current
--   goal, dialysate fluid and rate, heparin concentration and dose, hourly fluid removal,
--   pre-/post-filter replacement rates, replacement fluid and rate, ultrafiltrate output,
--   and the System Integrity item (224146) split into system_active (Active / Initiated /
--   Reinitiated / New Filter = 1; Recirculating / Discontinued = 0), clots, clots_increasing
--   and clotted.
-- Source: mimic-code treatment/crrt (MIT-LCP).
-- Grain: stay_id, charttime
-- Deviations: none.
-- Rewritten for speed with identical rows (the 19 items as ranges the scan filters on, not an IN join; 0.0096 -> 0.0065 s CPU at 2,000 patients;
--   itemid is INTEGER, so each BETWEEN holds exactly the listed items, and NULL fails both forms).
WITH crrt_settings AS (
    SELECT
        stay_id
        , charttime
        , CASE WHEN itemid = 227290 THEN value END AS crrt_mode
        , CASE WHEN itemid = 224149 THEN valuenum END AS access_pressure
        , CASE WHEN itemid = 224144 THEN valuenum END AS blood_flow
        , CASE WHEN itemid = 228004 THEN valuenum END AS citrate
        , CASE WHEN itemid = 225183 THEN valuenum END AS current_goal
        , CASE WHEN itemid = 225977 THEN value END AS dialysate_fluid
        , CASE WHEN itemid = 224154 THEN valuenum END AS dialysate_rate
        , CASE WHEN itemid = 224151 THEN valuenum END AS effluent_pressure
        , CASE WHEN itemid = 224150 THEN valuenum END AS filter_pressure
        , CASE WHEN itemid = 225958 THEN value END AS heparin_concentration
        , CASE WHEN itemid = 224145 THEN valuenum END AS heparin_dose
        , CASE WHEN itemid = 224191 THEN valuenum END AS hourly_patient_fluid_removal
        , CASE WHEN itemid = 228005 THEN valuenum END AS prefilter_replacement_rate
        , CASE WHEN itemid = 228006 THEN valuenum END AS postfilter_replacement_rate
        , CASE WHEN itemid = 225976 THEN value END AS replacement_fluid
        , CASE WHEN itemid = 224153 THEN valuenum END AS replacement_rate
        , CASE WHEN itemid = 224152 THEN valuenum END AS return_pressure
        , CASE WHEN itemid = 226457 THEN valuenum END AS ultrafiltrate_output
        , CASE
            WHEN itemid = 224146 AND value IN ('Active', 'Initiated', 'Reinitiated', 'New Filter') THEN 1
            WHEN itemid = 224146 AND value IN ('Recirculating', 'Discontinued') THEN 0
        END AS system_active
        , CASE
            WHEN itemid = 224146 AND value = 'Clots Present' THEN 1
            WHEN itemid = 224146 AND value = 'No Clot Present' THEN 0
        END AS clots
        , CASE WHEN itemid = 224146 AND value IN ('Clots Increasing', 'Clot Increasing') THEN 1 END AS clots_increasing
        , CASE WHEN itemid = 224146 AND value = 'Clotted' THEN 1 END AS clotted
    FROM mimiciv_icu.chartevents
    -- items 227290, 224146, 224149, 224144, 228004, 225183, 225977, 224154, 224151, 224150,
    -- 225958, 224145, 224191, 228005, 228006, 225976, 224153, 224152, 226457, as ranges the
    -- scan filters on
    WHERE (
            itemid BETWEEN 224144 AND 224146 OR itemid BETWEEN 224149 AND 224154 OR itemid = 224191
            OR itemid = 225183 OR itemid = 225958 OR itemid BETWEEN 225976 AND 225977
            OR itemid = 226457 OR itemid = 227290 OR itemid BETWEEN 228004 AND 228006
        )
        AND value IS NOT NULL
)

SELECT
    stay_id
    , charttime
    , MAX(crrt_mode) AS crrt_mode
    , MAX(access_pressure) AS access_pressure
    , MAX(blood_flow) AS blood_flow
    , MAX(citrate) AS citrate
    , MAX(current_goal) AS current_goal
    , MAX(dialysate_fluid) AS dialysate_fluid
    , MAX(dialysate_rate) AS dialysate_rate
    , MAX(effluent_pressure) AS effluent_pressure
    , MAX(filter_pressure) AS filter_pressure
    , MAX(heparin_concentration) AS heparin_concentration
    , MAX(heparin_dose) AS heparin_dose
    , MAX(hourly_patient_fluid_removal) AS hourly_patient_fluid_removal
    , MAX(prefilter_replacement_rate) AS prefilter_replacement_rate
    , MAX(postfilter_replacement_rate) AS postfilter_replacement_rate
    , MAX(replacement_fluid) AS replacement_fluid
    , MAX(replacement_rate) AS replacement_rate
    , MAX(return_pressure) AS return_pressure
    , MAX(ultrafiltrate_output) AS ultrafiltrate_output
    , MAX(system_active) AS system_active
    , MAX(clots) AS clots
    , MAX(clots_increasing) AS clots_increasing
    , MAX(clotted) AS clotted
FROM crrt_settings
GROUP BY stay_id, charttime
