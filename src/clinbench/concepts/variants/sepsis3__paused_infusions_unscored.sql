-- Concept: sepsis3__paused_infusions_unscored
-- Definition: the Sepsis-3 onsets of task mimic-sepsis3-raw with the hourly SOFA's
--   cardiovascular component scored without paused infusions: norepinephrine or epinephrine at
--   a charted rate of 0 scores nothing (3 needs a rate above 0 and at most 0.1 mcg/kg/min);
--   dopamine > 15 or norepinephrine/epinephrine > 0.1 -> 4, dopamine > 5 or
--   norepinephrine/epinephrine above 0 -> 3, any dopamine or dobutamine above 0 -> 2, MAP < 70
--   -> 1. Everything else is the default: the other five components of the hour, the 24 h
--   rolling worst of each (hours before admission feed the first windows), a SOFA of 2 or more
--   whose window ends 48 h before to 24 h after the suspected infection, the first such pair per
--   stay by suspected-infection, antibiotic, culture and SOFA time (nulls first).
-- Source: target sepsis3 (M4Bench 0.5.3 ground_truth/sepsis3.sql = mimic-code sepsis/sepsis3
--   over mimic-code score/sofa); Vincent et al., Intensive Care Med 1996; Singer et al., JAMA
--   2016. Clinical reason: a rate of 0 is a paused infusion, which gives the patient no
--   vasopressor; mimic-code's "rate <= 0.1" scores it as 3 points, enough on its own to reach
--   SOFA >= 2 and call Sepsis-3. M4Bench's first-day SOFA reference (sofa-24h) already leaves
--   a rate of 0 unscored; this variant applies the same rule to the hourly SOFA of Sepsis-3.
-- Grain: stay_id
-- Deviations: a charted rate of 0 does not score cardiovascular 3 (default: it does, as
--   mimic-code's hourly SOFA).
WITH hourly AS (
    SELECT w.stay_id, w.hr, w.endtime,
        p.respiration, p.coagulation, p.liver, p.cns, p.renal,
        CASE
            WHEN w.rate_dopamine > 15 OR w.rate_epinephrine > 0.1 OR w.rate_norepinephrine > 0.1 THEN 4
            WHEN w.rate_dopamine > 5 OR w.rate_epinephrine > 0 OR w.rate_norepinephrine > 0 THEN 3
            WHEN w.rate_dopamine > 0 OR w.rate_dobutamine > 0 THEN 2
            WHEN w.meanbp_min < 70 THEN 1
            WHEN COALESCE(w.meanbp_min, w.rate_dopamine, w.rate_dobutamine, w.rate_epinephrine,
                          w.rate_norepinephrine) IS NULL THEN NULL
            ELSE 0
        END AS cardiovascular
    FROM mimiciv_derived.sofa_hourly_worst AS w
    INNER JOIN mimiciv_derived.sofa_points AS p
        ON p.grain = 'hourly' AND p.stay_id = w.stay_id AND p.hr = w.hr
),
rolling AS (
    SELECT stay_id, hr, endtime,
        COALESCE(MAX(respiration) OVER w, 0) AS respiration,
        COALESCE(MAX(coagulation) OVER w, 0) AS coagulation,
        COALESCE(MAX(liver) OVER w, 0) AS liver,
        COALESCE(MAX(cardiovascular) OVER w, 0) AS cardiovascular,
        COALESCE(MAX(cns) OVER w, 0) AS cns,
        COALESCE(MAX(renal) OVER w, 0) AS renal
    FROM hourly
    WINDOW w AS (PARTITION BY stay_id ORDER BY hr ROWS BETWEEN 23 PRECEDING AND CURRENT ROW)
),
sofa AS (
    SELECT stay_id, endtime, respiration, coagulation, liver, cardiovascular, cns, renal,
        respiration + coagulation + liver + cardiovascular + cns + renal AS sofa_score
    FROM rolling
    WHERE hr >= 0 AND respiration + coagulation + liver + cardiovascular + cns + renal >= 2
),
onsets AS (
    SELECT soi.subject_id, soi.stay_id, soi.antibiotic_time, soi.culture_time,
        soi.suspected_infection_time, sofa.endtime AS sofa_time, sofa.sofa_score,
        sofa.respiration, sofa.coagulation, sofa.liver, sofa.cardiovascular, sofa.cns, sofa.renal,
        ROW_NUMBER() OVER (
            PARTITION BY soi.stay_id
            ORDER BY soi.suspected_infection_time NULLS FIRST, soi.antibiotic_time NULLS FIRST,
                soi.culture_time NULLS FIRST, sofa.endtime NULLS FIRST
        ) AS rn
    FROM mimiciv_derived.suspicion_of_infection AS soi
    INNER JOIN sofa
        ON sofa.stay_id = soi.stay_id
        AND sofa.endtime >= soi.suspected_infection_time - INTERVAL 48 HOUR
        AND sofa.endtime <= soi.suspected_infection_time + INTERVAL 24 HOUR
    WHERE soi.stay_id IS NOT NULL AND soi.suspected_infection = 1
)
SELECT subject_id, stay_id, antibiotic_time, culture_time, suspected_infection_time, sofa_time,
    sofa_score, respiration, coagulation, liver, cardiovascular, cns, renal, 1 AS sepsis3
FROM onsets
WHERE rn = 1
