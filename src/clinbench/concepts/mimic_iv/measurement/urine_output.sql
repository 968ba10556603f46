-- Concept: urine_output
-- Definition: Urine output (mL) per ICU stay and charting time, summed over the urine items
--   (Foley, void, condom catheter, ileoconduit, suprapubic, nephrostomies, straight
--   catheter, ureteral stents, GU irrigant/urine volume out). GU irrigant volume IN (227488)
--   is counted as negative, because the irrigant comes back out in the "volume out" item;
--   the net of a charting time can therefore be negative.
-- Source: mimic-code measurement/urine_output (MIT-LCP).
-- Grain: stay_id, charttime
-- Deviations: none.
WITH uo AS (
    SELECT
        stay_id
        , charttime
        , CASE WHEN itemid = 227488 AND value > 0 THEN -1 * value ELSE value END AS urineoutput
    FROM mimiciv_icu.outputevents
    WHERE itemid IN (
        226559 -- Foley
        , 226560 -- Void
        , 226561 -- Condom Cath
        , 226584 -- Ileoconduit
        , 226563 -- Suprapubic
        , 226564 -- R Nephrostomy
        , 226565 -- L Nephrostomy
        , 226567 -- Straight Cath
        , 226557 -- R Ureteral Stent
        , 226558 -- L Ureteral Stent
        , 227488 -- GU Irrigant Volume In (subtracted)
        , 227489 -- GU Irrigant/Urine Volume Out
    )
)

SELECT
    stay_id
    , charttime
    , CAST(SUM(CAST(urineoutput AS DECIMAL(38, 9))) AS DOUBLE) AS urineoutput
FROM uo
GROUP BY stay_id, charttime
