-- Concept: suspicion-infection__no_screening
-- Definition: suspicion of infection as in task mimic-suspicion-infection (one row per
--   systemic antibiotic, culture 72 h before / 24 h after), but surveillance screening
--   specimens - MRSA screen, CRE screen, Staph aureus swab, infection-control yeast and
--   VRE rule-out swabs - do not count as cultures.
-- Source: sepsis/suspicion_of_infection (same rules otherwise); Seymour et al., JAMA 2016.
--   Clinical reason: screening swabs are taken on admission and weekly for infection control,
--   whatever the patient's state; pairing one with a prophylactic or empirical antibiotic
--   labels patients as "suspected infection" with no clinical suspicion behind it, and the
--   swab can also hide a later diagnostic culture because only the earliest one is reported.
-- Grain: subject_id, ab_id
-- Deviations: screening specimens excluded (default target: every specimen counts). The
--   matching is the concept's own: suspicion_of_infection carries the screening-excluded
--   columns, so the two conventions cannot drift apart.
SELECT subject_id, stay_id, hadm_id, ab_id, antibiotic, antibiotic_time,
    screening_excluded_suspected_infection AS suspected_infection,
    screening_excluded_suspected_infection_time AS suspected_infection_time,
    screening_excluded_culture_time AS culture_time,
    screening_excluded_specimen AS specimen,
    screening_excluded_positive_culture AS positive_culture
FROM mimiciv_derived.suspicion_of_infection
