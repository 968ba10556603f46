-- Concept: vasopressin
-- Definition: Vasopressin infusions (inputevents itemid 222315): one row per inputevents row
--   with stay, linked order, start/end time, rate in units/hour (a rate charted in units/min
--   is x60) and amount. Typical dose: 1.2 (low) - 2.4 (high) units/hour.
-- Source: mimic-code medication/vasopressin (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, linkorderid, starttime
-- Deviations: none.
SELECT
    stay_id
    , linkorderid
    , CASE WHEN rateuom = 'units/min' THEN rate * 60.0 ELSE rate END AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid = 222315 -- vasopressin
