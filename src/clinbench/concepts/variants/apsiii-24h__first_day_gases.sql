-- Concept: apsiii-24h__first_day_gases
-- Definition: APS III and its 16 components as in task mimic-apsiii-24h, with the oxygenation
--   (PaO2 / A-aDO2) and acid-base components read from the arterial gases of the first-day
--   window (6 h before to 24 h after ICU admission, both ends included, by admission) instead
--   of ICU admission to 24 h later or discharge: the best PaO2 while not invasively ventilated with FiO2 < 50% (room
--   air when FiO2 is missing; < 50 -> 15, < 70 -> 5, < 80 -> 2, else 0), else the highest
--   A-aDO2 while ventilated with FiO2 >= 50% (< 100 -> 0, < 250 -> 7, < 350 -> 9, < 500 -> 11,
--   else 14); acid-base is the worst pH/PaCO2 pair. apsiii changes by the differences.
-- Source: score/apsiii (same point tables; every other component unchanged); Knaus et al.,
--   Chest 1991. Clinical reason: APS III is a first-day score, and every other variable of it
--   is read from the first 24 hours; the gases drawn in the emergency department or theatre
--   just before transfer describe the patient on arrival as much as the other first-day values.
-- Grain: stay_id
-- Deviations: blood gases from intime - 6 h to intime + 24 h (default target: intime <= t <
--   min(outtime, intime + 24 h), as M4Bench; mimic-code's apsiii: the whole ICU stay).
WITH bgw AS (
    SELECT ie.stay_id, bg.po2, bg.pco2, bg.ph, bg.aado2,
        COALESCE(bg.fio2, bg.fio2_chartevents) AS fio2,
        vd.stay_id IS NOT NULL AS vent
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.bg AS bg
        ON bg.hadm_id = ie.hadm_id AND bg.specimen = 'ART.'
        AND bg.charttime >= ie.intime - INTERVAL 6 HOUR AND bg.charttime <= ie.intime + INTERVAL 1 DAY
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = ie.stay_id AND bg.charttime >= vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
),
pa AS (
    SELECT stay_id, MAX(po2) AS pao2 FROM bgw
    WHERE NOT vent AND COALESCE(fio2, 21) < 50 AND po2 IS NOT NULL
    GROUP BY stay_id
),
aa AS (
    SELECT stay_id, MAX(aado2) AS aado2 FROM bgw
    WHERE vent AND fio2 >= 50 AND aado2 IS NOT NULL
    GROUP BY stay_id
),
acidbase AS (
    SELECT stay_id, MAX(CASE
        WHEN ph < 7.20 THEN CASE WHEN pco2 < 50 THEN 12 ELSE 4 END
        WHEN ph < 7.30 THEN CASE WHEN pco2 < 30 THEN 9 WHEN pco2 < 40 THEN 6 WHEN pco2 < 50 THEN 3 ELSE 2 END
        WHEN ph < 7.35 THEN CASE WHEN pco2 < 30 THEN 9 WHEN pco2 < 45 THEN 0 ELSE 1 END
        WHEN ph < 7.45 THEN CASE WHEN pco2 < 30 THEN 5 WHEN pco2 < 45 THEN 0 ELSE 1 END
        WHEN ph < 7.50 THEN CASE WHEN pco2 < 30 THEN 5 WHEN pco2 < 35 THEN 0 WHEN pco2 < 45 THEN 2 ELSE 12 END
        WHEN ph < 7.60 THEN CASE WHEN pco2 < 40 THEN 3 ELSE 12 END
        ELSE CASE WHEN pco2 < 25 THEN 0 WHEN pco2 < 40 THEN 3 ELSE 12 END
    END) AS acidbase_score
    FROM bgw
    WHERE ph IS NOT NULL AND pco2 IS NOT NULL
    GROUP BY stay_id
),
gases AS (
    SELECT ie.stay_id,
        CASE
            WHEN pa.pao2 IS NULL AND aa.aado2 IS NULL THEN NULL
            WHEN pa.pao2 IS NOT NULL THEN CASE WHEN pa.pao2 < 50 THEN 15 WHEN pa.pao2 < 70 THEN 5 WHEN pa.pao2 < 80 THEN 2 ELSE 0 END
            ELSE CASE WHEN aa.aado2 < 100 THEN 0 WHEN aa.aado2 < 250 THEN 7 WHEN aa.aado2 < 350 THEN 9 WHEN aa.aado2 < 500 THEN 11 ELSE 14 END
        END AS pao2_aado2_score,
        ab.acidbase_score
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN pa ON pa.stay_id = ie.stay_id
    LEFT JOIN aa ON aa.stay_id = ie.stay_id
    LEFT JOIN acidbase AS ab ON ab.stay_id = ie.stay_id
)
SELECT a.subject_id, a.hadm_id, a.stay_id,
    a.apsiii - a.pao2_aado2_score - a.acidbase_score
        + COALESCE(g.pao2_aado2_score, 0) + COALESCE(g.acidbase_score, 0) AS apsiii,
    a.hr_score, a.mbp_score, a.temp_score, a.resp_rate_score, COALESCE(g.pao2_aado2_score, 0) AS pao2_aado2_score,
    a.hematocrit_score, a.wbc_score, a.creatinine_score, a.uo_score, a.bun_score,
    a.sodium_score, a.albumin_score, a.bilirubin_score, a.glucose_score, COALESCE(g.acidbase_score, 0) AS acidbase_score,
    a.gcs_score
FROM mimiciv_derived.target_apsiii_24h AS a
LEFT JOIN gases AS g ON g.stay_id = a.stay_id
