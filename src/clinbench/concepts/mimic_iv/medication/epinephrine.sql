-- Concept: epinephrine
-- Definition: Epinephrine infusions (inputevents itemid 221289): one row per inputevents row with
--   stay, linked order, start/end time, the charted rate (mcg/kg/min, the only rate unit
--   MIMIC-IV charts for this drug) and amount. Typical dose range: 0.01 (low) - 0.5 (high) mcg/kg/min.
-- Source: mimic-code medication/epinephrine (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id, linkorderid, starttime
-- Deviations: none. The rate is taken as charted (no unit conversion), as mimic-code does.
SELECT
    stay_id
    , linkorderid
    , rate AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid = 221289 -- epinephrine
