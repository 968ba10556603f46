-- Concept: sofa-24h
-- Definition: reference output of task mimic-sofa-24h (and its raw twin): the SOFA score and
--   its six organ components over 6 hours before to 24 hours after ICU admission, one row per
--   ICU stay, unmeasured components scored 0. Cardiovascular: dopamine > 15, epinephrine > 0.1
--   or norepinephrine > 0.1 mcg/kg/min 4; dopamine > 5, or epinephrine or norepinephrine above 0
--   and up to 0.1, 3; any dopamine or dobutamine 2; MAP < 70 1; else 0 (highest rate of each
--   infusion starting in the window).
-- Source: firstday/first_day_sofa (Vincent et al. 1996); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/sofa-24h.sql over M4's own derived tables (hannesill/m4 6ed55907).
-- Grain: stay_id
-- Deviations: differs from the mimic-code profile's copy of the reference in where respiration
--   comes from: computed here from arterial blood gases (M4Bench's SQL restricts PaO2/FiO2 to
--   specimen 'ART.' itself, while this profile's first_day_sofa reads every specimen; the
--   mimic-code profile's first_day_sofa is arterial already, so the rows are the same). From first_day_sofa (mimic-code), an
--   epinephrine or norepinephrine rate of 0 or less does not score cardiovascular 3; unmeasured
--   components are 0 instead of empty (variant sofa-24h__missing_as_null keeps them empty).
WITH infusions AS (
    SELECT ie.stay_id, 'norepinephrine' AS agent, mv.vaso_rate AS rate
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.norepinephrine AS mv ON mv.stay_id = ie.stay_id
        AND mv.starttime >= ie.intime - INTERVAL 6 HOUR AND mv.starttime <= ie.intime + INTERVAL 1 DAY
    UNION ALL
    SELECT ie.stay_id, 'epinephrine', mv.vaso_rate
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.epinephrine AS mv ON mv.stay_id = ie.stay_id
        AND mv.starttime >= ie.intime - INTERVAL 6 HOUR AND mv.starttime <= ie.intime + INTERVAL 1 DAY
    UNION ALL
    SELECT ie.stay_id, 'dobutamine', mv.vaso_rate
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.dobutamine AS mv ON mv.stay_id = ie.stay_id
        AND mv.starttime >= ie.intime - INTERVAL 6 HOUR AND mv.starttime <= ie.intime + INTERVAL 1 DAY
    UNION ALL
    SELECT ie.stay_id, 'dopamine', mv.vaso_rate
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.dopamine AS mv ON mv.stay_id = ie.stay_id
        AND mv.starttime >= ie.intime - INTERVAL 6 HOUR AND mv.starttime <= ie.intime + INTERVAL 1 DAY
),
rates AS (
    SELECT stay_id,
        MAX(rate) FILTER (WHERE agent = 'norepinephrine') AS norepinephrine,
        MAX(rate) FILTER (WHERE agent = 'epinephrine') AS epinephrine,
        MAX(rate) FILTER (WHERE agent = 'dopamine') AS dopamine,
        MAX(rate) FILTER (WHERE agent = 'dobutamine') AS dobutamine
    FROM infusions
    GROUP BY stay_id
),
-- respiration from arterial gases only (the benchmark's SOFA definition): this profile's
-- first_day_sofa, as M4's copy, reads every specimen
pafi AS (
    SELECT ie.stay_id,
        MIN(CASE WHEN vd.stay_id IS NULL THEN bg.pao2fio2ratio END) AS pao2fio2_novent_min,
        MIN(CASE WHEN vd.stay_id IS NOT NULL THEN bg.pao2fio2ratio END) AS pao2fio2_vent_min
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.bg AS bg
        ON bg.subject_id = ie.subject_id
        AND bg.charttime >= ie.intime - INTERVAL 6 HOUR AND bg.charttime <= ie.intime + INTERVAL 1 DAY
        AND bg.specimen = 'ART.'
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = ie.stay_id
        AND bg.charttime >= vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
    GROUP BY ie.stay_id
),
respiration AS (
    SELECT stay_id,
        CASE
            WHEN pao2fio2_vent_min < 100 THEN 4
            WHEN pao2fio2_vent_min < 200 THEN 3
            WHEN pao2fio2_novent_min < 300 THEN 2
            WHEN pao2fio2_novent_min < 400 THEN 1
            ELSE 0
        END AS respiration
    FROM pafi
),
cardio AS (
    SELECT ie.stay_id,
        CASE
            WHEN r.dopamine > 15 OR r.epinephrine > 0.1 OR r.norepinephrine > 0.1 THEN 4
            WHEN r.dopamine > 5 OR (r.epinephrine > 0 AND r.epinephrine <= 0.1)
                OR (r.norepinephrine > 0 AND r.norepinephrine <= 0.1) THEN 3
            WHEN r.dopamine > 0 OR r.dobutamine > 0 THEN 2
            WHEN v.mbp_min < 70 THEN 1
            WHEN COALESCE(v.mbp_min, r.dopamine, r.dobutamine, r.epinephrine, r.norepinephrine) IS NULL THEN NULL
            ELSE 0
        END AS cardiovascular
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN rates AS r ON r.stay_id = ie.stay_id
    LEFT JOIN mimiciv_derived.first_day_vitalsign AS v ON v.stay_id = ie.stay_id
),
components AS (
    SELECT s.subject_id, s.hadm_id, s.stay_id,
        COALESCE(p.respiration, 0) AS respiration,
        COALESCE(s.coagulation, 0) AS coagulation,
        COALESCE(s.liver, 0) AS liver,
        COALESCE(c.cardiovascular, 0) AS cardiovascular,
        COALESCE(s.cns, 0) AS cns,
        COALESCE(s.renal, 0) AS renal
    FROM mimiciv_derived.first_day_sofa AS s
    LEFT JOIN cardio AS c ON c.stay_id = s.stay_id
    LEFT JOIN respiration AS p ON p.stay_id = s.stay_id
)
SELECT subject_id, hadm_id, stay_id,
    respiration + coagulation + liver + cardiovascular + cns + renal AS sofa,
    respiration, coagulation, liver, cardiovascular, cns, renal
FROM components
