-- Concept: vasopressin
-- Definition: Vasopressin infusions (inputevents itemid 222315) with start/end time, rate in
--   units/hour and amount. Rates charted in units/min are x60 (units/kg/min would need a
--   weight and do not occur). Typical dose: 1.2 (low) - 2.4 (high) units/hour.
-- Source: mimic-code medication/vasopressin (MIT-LCP).
-- Grain: stay_id, orderid, starttime
-- Deviations: none.
SELECT
    stay_id
    , linkorderid
    , orderid
    , CASE WHEN rateuom = 'units/min' THEN rate * 60.0 ELSE rate END AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid = 222315 -- vasopressin
