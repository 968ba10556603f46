-- Concept: suspicion-infection__same_minute_before
-- Definition: suspicion of infection as in task mimic-suspicion-infection, except that a timed
--   culture charted the same minute as the antibiotic start counts as a culture before it (its
--   time becomes the suspected-infection time); default: it counts neither before nor after.
-- Source: sepsis/antibiotic_culture_pairs (same rules otherwise); Seymour et al., JAMA 2016.
--   Clinical reason: a culture drawn and an antibiotic started in the same minute are one
--   clinical decision - the bundle "culture, then antibiotics" charted at once. Both anchors'
--   strict inequalities (antibiotic after the culture, or before it) drop exactly this case,
--   so a patient whose blood culture and first dose share a timestamp is not "suspected".
-- Grain: subject_id, ab_id
-- Deviations: a same-minute culture is a culture before the antibiotic (default target: not a
--   culture in either window).
WITH pairs AS (
    SELECT * FROM mimiciv_derived.antibiotic_culture_pairs
),
ab AS (
    SELECT DISTINCT subject_id, stay_id, hadm_id, ab_id, antibiotic, antibiotic_time FROM pairs
),
first_before AS (
    SELECT * FROM pairs
    WHERE direction IN ('before', 'same_minute')
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
