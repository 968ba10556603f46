-- Concept: neuroblock
-- Definition: Neuromuscular-blocker infusions: every inputevents row of cisatracurium (221555)
--   or vecuronium (222062) with a rate, with its order, rate, amount and times.
-- Source: mimic-code medication/neuroblock (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: one row per inputevents row (stay_id, orderid, starttime); not unique
-- Deviations: none.
SELECT
    stay_id
    , orderid
    , rate AS drug_rate
    , amount AS drug_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid IN (222062, 221555) AND rate IS NOT NULL
