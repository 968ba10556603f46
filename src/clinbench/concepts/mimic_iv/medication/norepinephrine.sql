-- Concept: norepinephrine
-- Definition: Norepinephrine infusions (inputevents itemid 221906) with start/end time, rate in
--   mcg/kg/min and amount. Rates charted in mg/kg/min are x1000; rates charted in mcg/min
--   are divided by the patient weight recorded on the order (inputevents.patientweight).
--   Typical dose range: 0.01 (low) - 0.5 (high) mcg/kg/min.
--   Public behaviour kept: a 'mg/kg/min' row whose patientweight is exactly 1 is taken as
--   already in mcg/kg/min (those rows are mis-documented), others are x1000.
--   Precision: rates are DOUBLE read from MIMIC's 32-bit values, so a charted 0.1 can arrive
--   as 0.0999999975 or 0.1000000015; SOFA rounds rates to 6 places before its 0.1 cut-off.
-- Source: mimic-code medication/norepinephrine (MIT-LCP).
-- Grain: stay_id, orderid, starttime
-- Deviations: none beyond the unit harmonisation above (public converts mcg/min only for
--   phenylephrine; MIMIC-IV has no mcg/min rows for the other agents, so results match).
SELECT
    stay_id
    , linkorderid
    , orderid
    , CASE
        -- mis-documented rows: unit says mg/kg/min, weight 1, value is mcg/kg/min
        WHEN rateuom = 'mg/kg/min' AND patientweight = 1 THEN rate
        WHEN rateuom = 'mg/kg/min' THEN rate * 1000.0
        -- weight-based dose from a fixed rate: divide by the weight charted on the order
        WHEN rateuom = 'mcg/min' AND patientweight > 0 THEN rate / patientweight
        WHEN rateuom = 'mcg/min' THEN NULL
        ELSE rate
    END AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid = 221906 -- norepinephrine
