-- Concept: suspicion-infection__timed_cultures_first
-- Definition: suspicion of infection as in task mimic-suspicion-infection, except the order in
--   which the reported culture is chosen among several in a window: the earliest date, then a
--   timed culture before a date-only one of the same day, then the earliest time, then a
--   culture that grew an organism (cancelled and negative ones not) before one that did not,
--   then the lowest specimen id. Default: a date-only culture first (NULLS FIRST), no positive
--   tie-break.
-- Source: sepsis/suspicion_of_infection of mimic-code (`ORDER BY chartdate NULLS FIRST,
--   charttime, positiveculture DESC`); Seymour et al., JAMA 2016. Clinical reason: a culture
--   with a recorded time places the suspicion at a known moment, whereas a date-only culture
--   is placed at midnight - up to a day early; among same-time specimens the positive one is
--   the one that documents the infection.
-- Grain: subject_id, ab_id
-- Deviations: timed cultures first on a shared date, positive first on a shared time (default
--   target: date-only first, specimen id only).
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
        ORDER BY chartdate NULLS FIRST, charttime NULLS LAST, positive_not_cancelled DESC, micro_specimen_id NULLS FIRST) = 1
),
first_after AS (
    SELECT * FROM pairs
    WHERE direction = 'after' OR also_after
    QUALIFY ROW_NUMBER() OVER (PARTITION BY subject_id, ab_id
        ORDER BY chartdate NULLS FIRST, charttime NULLS LAST, positive_not_cancelled DESC, micro_specimen_id NULLS FIRST) = 1
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
