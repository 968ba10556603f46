-- Concept: suspicion-infection
-- Definition: reference output of task mimic-suspicion-infection: one row per systemic
--   antibiotic prescription of mimiciv_derived.antibiotic (ab_id = row number per subject by
--   start time, stop time, name, hadm_id, stay_id, missing values first) with whether a culture
--   was drawn within 72 h before or 24 h after it. A culture with a time counts before when the
--   antibiotic starts after it and at most 72 h later, after when the antibiotic starts at most
--   24 h before it; a culture charted the same minute as the antibiotic counts neither way. A
--   culture with only a date counts before when the antibiotic's day is that day to 3 days
--   later, after when it is the day before or that day. Of several cultures the one with the
--   earliest date is reported, a date-only culture before a timed one on the same day, then the
--   earliest time and the lowest specimen id. Suspected-infection time = the culture time
--   before, else the antibiotic time. A culture is positive when any organism is named other
--   than itemid 90856 (a cancelled culture naming 'CANCELLED' counts as positive).
-- Source: sepsis/antibiotic_culture_pairs (Seymour et al. 2016); the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/suspicion-infection.sql.
-- Grain: subject_id, ab_id
-- Deviations: from suspicion_of_infection (mimic-code), a date-only culture is ordered before a
--   timed culture of the same day (mimic-code: after), ties are not broken by a positive
--   culture first, and cultures named 'CANCELLED' or with organism itemid 90760 count as
--   positive (mimic-code: not). Variants: suspicion-infection__timed_cultures_first (mimic-code's
--   order), suspicion-infection__cancelled_not_positive, suspicion-infection__same_minute_before.
WITH pairs AS (
    SELECT * FROM mimiciv_derived.antibiotic_culture_pairs
),
ab AS (
    SELECT DISTINCT subject_id, stay_id, hadm_id, ab_id, antibiotic, antibiotic_time FROM pairs
),
first_before AS (
    SELECT * FROM pairs
    WHERE direction = 'before'
    QUALIFY ROW_NUMBER() OVER (PARTITION BY subject_id, ab_id
        ORDER BY chartdate NULLS FIRST, charttime NULLS FIRST, micro_specimen_id NULLS FIRST) = 1
),
first_after AS (
    SELECT * FROM pairs
    WHERE direction = 'after' OR also_after
    QUALIFY ROW_NUMBER() OVER (PARTITION BY subject_id, ab_id
        ORDER BY chartdate NULLS FIRST, charttime NULLS FIRST, micro_specimen_id NULLS FIRST) = 1
)
SELECT ab.subject_id, ab.stay_id, ab.hadm_id, ab.ab_id, ab.antibiotic, ab.antibiotic_time,
    CASE WHEN b.specimen IS NULL AND a.specimen IS NULL THEN 0 ELSE 1 END AS suspected_infection,
    CASE WHEN b.specimen IS NULL AND a.specimen IS NULL THEN NULL
        ELSE COALESCE(b.culture_time, ab.antibiotic_time) END AS suspected_infection_time,
    COALESCE(b.culture_time, a.culture_time) AS culture_time,
    COALESCE(b.specimen, a.specimen) AS specimen,
    COALESCE(b.positive, a.positive) AS positive_culture
FROM ab
LEFT JOIN first_after AS a ON a.subject_id = ab.subject_id AND a.ab_id = ab.ab_id
LEFT JOIN first_before AS b ON b.subject_id = ab.subject_id AND b.ab_id = ab.ab_id
