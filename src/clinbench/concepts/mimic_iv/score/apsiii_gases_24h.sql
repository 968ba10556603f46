-- Concept: apsiii_gases_24h
-- Definition: the APS III blood-gas components over arterial gases from ICU admission to 24
--   hours later or ICU discharge, whichever is first, one row per ICU stay (empty when no gas
--   qualifies). PaO2: the highest, from gases taken while not invasively ventilated with FiO2
--   < 50 % (21 % when uncharted): < 50 mmHg 15, < 70 5, < 80 2, else 0. Without such a PaO2, the
--   A-a gradient: the highest, from gases taken while invasively ventilated with FiO2 >= 50 %:
--   < 100 0, < 250 7, < 350 9, < 500 11, else 14. Acid-base: the worst score of the pH / PaCO2
--   table over the gases with both values.
-- Source: Knaus et al. 1991 (APACHE III); window and rules of M4Bench 0.5.3
--   benchmark/ground_truth/apsiii-24h.sql, the anchor of task mimic-apsiii-24h (mimic-code's
--   apsiii reads the gases until ICU discharge). Read by target apsiii-24h and its variants.
-- Grain: stay_id
-- Deviations: none (this table exists for the task's 24 h window; the apsiii concept keeps
--   mimic-code's window).
-- Helper: clinbench's own intermediate, read by target apsiii-24h and its variant; no anchor builds it.
WITH gas AS (
    SELECT ie.stay_id, bg.charttime, bg.po2, bg.pco2, bg.ph, bg.aado2,
        COALESCE(bg.fio2, bg.fio2_chartevents) AS fio2,
        EXISTS (
            SELECT 1 FROM mimiciv_derived.ventilation AS v
            WHERE v.stay_id = ie.stay_id AND v.ventilation_status = 'InvasiveVent'
                AND bg.charttime >= v.starttime AND bg.charttime <= v.endtime
        ) AS invasive
    FROM mimiciv_derived.bg AS bg
    INNER JOIN mimiciv_icu.icustays AS ie
        ON bg.hadm_id = ie.hadm_id
        AND bg.charttime >= ie.intime
        AND bg.charttime < LEAST(ie.outtime, ie.intime + INTERVAL 1 DAY)
    WHERE bg.specimen = 'ART.'
),
oxygenation AS (
    SELECT stay_id,
        MAX(po2) FILTER (WHERE NOT invasive AND COALESCE(fio2, 21) < 50) AS pao2,
        MAX(aado2) FILTER (WHERE invasive AND fio2 >= 50) AS aado2
    FROM gas
    GROUP BY stay_id
),
acidbase AS (
    SELECT stay_id, MAX(
        CASE
            WHEN ph < 7.20 THEN CASE WHEN pco2 < 50 THEN 12 ELSE 4 END
            WHEN ph < 7.30 THEN CASE WHEN pco2 < 30 THEN 9 WHEN pco2 < 40 THEN 6 WHEN pco2 < 50 THEN 3 ELSE 2 END
            WHEN ph < 7.35 THEN CASE WHEN pco2 < 30 THEN 9 WHEN pco2 < 45 THEN 0 ELSE 1 END
            WHEN ph < 7.45 THEN CASE WHEN pco2 < 30 THEN 5 WHEN pco2 < 45 THEN 0 ELSE 1 END
            WHEN ph < 7.50 THEN CASE WHEN pco2 < 30 THEN 5 WHEN pco2 < 35 THEN 0 WHEN pco2 < 45 THEN 2 ELSE 12 END
            WHEN ph < 7.60 THEN CASE WHEN pco2 < 40 THEN 3 ELSE 12 END
            ELSE CASE WHEN pco2 < 25 THEN 0 WHEN pco2 < 40 THEN 3 ELSE 12 END
        END) AS acidbase_score
    FROM gas
    WHERE ph IS NOT NULL AND pco2 IS NOT NULL
    GROUP BY stay_id
),
gases AS (
    SELECT ie.stay_id,
        CASE
            WHEN o.pao2 IS NOT NULL THEN CASE WHEN o.pao2 < 50 THEN 15 WHEN o.pao2 < 70 THEN 5 WHEN o.pao2 < 80 THEN 2 ELSE 0 END
            WHEN o.aado2 IS NOT NULL THEN CASE WHEN o.aado2 < 100 THEN 0 WHEN o.aado2 < 250 THEN 7 WHEN o.aado2 < 350 THEN 9 WHEN o.aado2 < 500 THEN 11 ELSE 14 END
        END AS pao2_aado2_score,
        ab.acidbase_score
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN oxygenation AS o ON o.stay_id = ie.stay_id
    LEFT JOIN acidbase AS ab ON ab.stay_id = ie.stay_id
)
SELECT stay_id, pao2_aado2_score, acidbase_score FROM gases
