-- Concept: phenylephrine
-- Definition: Phenylephrine infusions (inputevents itemids 221749, 229630, 229631, 229632): one row
--   per inputevents row with stay, linked order, start/end time, rate in mcg/kg/min and amount. A
--   rate charted in mcg/min is divided by the weight on the order (inputevents.patientweight; a
--   zero weight gives NULL). Typical dose range: 0.5 (low) - 5 (high) mcg/kg/min.
-- Source: mimic-code medication/phenylephrine (MIT-LCP, commit 8bcbd190, concepts_duckdb) with the
--   open correction of mimic-code issue #2159 (the concentration-variant itemids).
-- Grain: stay_id, linkorderid, starttime
-- Deviations: differs from the mimic-code profile, which reads itemid 221749 only: infusions
--   charted under Phenylephrine (50/250) 229630, (200/250)_OLD_1 229631 and (200/250) 229632 are
--   phenylephrine too, so they reach vasoactive_agent and norepinephrine_equivalent_dose.
--   Phenylephrine (Intubation) 229789 is a push dose, not an infusion, and stays out.
SELECT
    stay_id
    , linkorderid
    , CASE WHEN rateuom = 'mcg/min' THEN rate / patientweight ELSE rate END AS vaso_rate
    , amount AS vaso_amount
    , starttime
    , endtime
FROM mimiciv_icu.inputevents
WHERE itemid IN (221749, 229630, 229631, 229632) -- phenylephrine, every bag concentration
