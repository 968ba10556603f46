-- Concept: phenylephrine
-- Definition: Phenylephrine infusions (inputevents itemid 221749): one row per inputevents
--   row with stay, linked order, start/end time, rate in mcg/kg/min and amount. A rate
--   charted in mcg/min is divided by the weight on the order (inputevents.patientweight; a
--   zero weight gives NULL). Typical dose range: 0.5 (low) - 5 (high) mcg/kg/min.
-- Source: mimic-code medication/phenylephrine (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, linkorderid, starttime
-- Deviations: none.
SELECT
    stay_id
    , linkorderid
    , CASE WHEN rateuom = 'mcg/min' THEN rate / patientweight ELSE rate END AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid = 221749 -- phenylephrine
