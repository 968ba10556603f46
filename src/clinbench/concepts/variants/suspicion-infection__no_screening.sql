-- Concept: suspicion-infection__no_screening
-- Definition: suspicion of infection as in task mimic-suspicion-infection (one row per
--   systemic antibiotic, culture 72 h before / 24 h after), but surveillance screening
--   specimens - MRSA screen, CRE screen, Staph aureus swab, infection-control yeast and
--   VRE rule-out swabs - do not count as cultures.
-- Source: sepsis/antibiotic_culture_pairs (same rules otherwise); Seymour et al., JAMA 2016.
--   Clinical reason: screening swabs are taken on admission and weekly for infection control,
--   whatever the patient's state; pairing one with a prophylactic or empirical antibiotic
--   labels patients as "suspected infection" with no clinical suspicion behind it, and the
--   swab can also hide a later diagnostic culture because only the earliest one is reported.
-- Grain: subject_id, ab_id
-- Deviations: screening specimens excluded (default target: every specimen counts); the
--   screening flag is antibiotic_culture_pairs', so the two conventions cannot drift apart.
WITH all_pairs AS (
    SELECT * FROM mimiciv_derived.antibiotic_culture_pairs
),
ab AS (
    SELECT DISTINCT subject_id, stay_id, hadm_id, ab_id, antibiotic, antibiotic_time FROM all_pairs
),
pairs AS (
    SELECT * FROM all_pairs WHERE NOT screening
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
