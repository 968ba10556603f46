-- Concept: suspicion-infection__cancelled_not_positive
-- Definition: suspicion of infection as in task mimic-suspicion-infection, except that a
--   culture is positive only when it names an organism other than itemids 90856 (negative) and
--   90760 (cancelled) and other than the name 'CANCELLED'; default: only 90856 is excluded, so
--   a cancelled culture is positive.
-- Source: sepsis/suspicion_of_infection of mimic-code (excludes 90856, 90760 and 'CANCELLED');
--   Seymour et al., JAMA 2016. Clinical reason: a cancelled specimen was never processed; it
--   grew nothing and cannot confirm an infection.
-- Grain: subject_id, ab_id
-- Deviations: cancelled cultures are not positive (default target: positive).
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
    COALESCE(b.positive_not_cancelled, a.positive_not_cancelled) AS positive_culture
FROM ab
LEFT JOIN first_after AS a ON a.subject_id = ab.subject_id AND a.ab_id = ab.ab_id
LEFT JOIN first_before AS b ON b.subject_id = ab.subject_id AND b.ab_id = ab.ab_id
