-- Concept: norepinephrine
-- Definition: Norepinephrine infusions (inputevents itemid 221906): one row per inputevents
--   row with stay, linked order, start/end time, rate in mcg/kg/min and amount. A rate
--   charted in mg/kg/min is x1000, except when the order's patientweight is exactly 1: those
--   rows are mis-documented and already hold mcg/kg/min. Typical dose range: 0.01 (low) -
--   0.5 (high) mcg/kg/min.
-- Source: mimic-code medication/norepinephrine (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, linkorderid, starttime
-- Deviations: none.
SELECT
    stay_id
    , linkorderid
    , CASE
        WHEN rateuom = 'mg/kg/min' AND patientweight = 1 THEN rate
        WHEN rateuom = 'mg/kg/min' THEN rate * 1000.0
        ELSE rate
    END AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid = 221906 -- norepinephrine
