-- Concept: sepsis3
-- Definition: Sepsis-3 onset in the ICU: a suspected infection (antibiotic with a culture) and
--   an hourly SOFA of 2 or more whose 24 h window ends between 48 hours before and 24 hours
--   after the suspected-infection time. One row per ICU stay: the first matching pair ordered
--   by suspected-infection time, antibiotic time, culture time and SOFA time (nulls first). The
--   baseline SOFA is assumed to be 0.
-- Source: Singer et al., JAMA 2016 (Sepsis-3); Seymour et al., JAMA 2016; MIT-LCP mimic-code
--   sepsis/sepsis3.
-- Grain: stay_id
-- Deviations: none. Antibiotics given outside an ICU stay have no stay_id and cannot define
--   an ICU Sepsis-3 onset, as in the public code.
WITH sofa AS (
    SELECT stay_id, starttime, endtime,
        respiration_24hours AS respiration, coagulation_24hours AS coagulation,
        liver_24hours AS liver, cardiovascular_24hours AS cardiovascular,
        cns_24hours AS cns, renal_24hours AS renal, sofa_24hours AS sofa_score
    FROM mimiciv_derived.sofa
    WHERE sofa_24hours >= 2
),
s1 AS (
    SELECT soi.subject_id, soi.stay_id, soi.antibiotic_time, soi.culture_time,
        soi.suspected_infection_time, sofa.endtime AS sofa_time, sofa.sofa_score,
        sofa.respiration, sofa.coagulation, sofa.liver, sofa.cardiovascular, sofa.cns, sofa.renal,
        sofa.sofa_score >= 2 AND soi.suspected_infection = 1 AS sepsis3,
        ROW_NUMBER() OVER (
            PARTITION BY soi.stay_id
            ORDER BY soi.suspected_infection_time NULLS FIRST, soi.antibiotic_time NULLS FIRST,
                soi.culture_time NULLS FIRST, sofa.endtime NULLS FIRST
        ) AS rn_sus
    FROM mimiciv_derived.suspicion_of_infection AS soi
    INNER JOIN sofa
        ON sofa.stay_id = soi.stay_id
        AND sofa.endtime >= soi.suspected_infection_time - INTERVAL 48 HOUR
        AND sofa.endtime <= soi.suspected_infection_time + INTERVAL 24 HOUR
    WHERE soi.stay_id IS NOT NULL
)
SELECT subject_id, stay_id, antibiotic_time, culture_time, suspected_infection_time, sofa_time,
    sofa_score, respiration, coagulation, liver, cardiovascular, cns, renal, sepsis3
FROM s1
WHERE rn_sus = 1
