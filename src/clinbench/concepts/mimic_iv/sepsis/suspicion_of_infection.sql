-- Concept: suspicion_of_infection
-- Definition: for every systemic antibiotic prescription, whether a microbiology culture was
--   drawn in the 72 hours before it or the 24 hours after it (suspected infection). The
--   suspected-infection time is the culture time when the culture came first, else the
--   antibiotic time. ab_id numbers a subject's antibiotics by start time, stop time (missing
--   first, as the public code) and name.
--   Cultures with only a date are compared by calendar day (up to 3 days before, 1 day after).
-- Source: Seymour et al., JAMA 2016 (Sepsis-3 suspected-infection criterion); MIT-LCP
--   mimic-code sepsis/suspicion_of_infection (earliest matching culture reported; a culture is
--   positive when it grew an organism other than item 90856).
-- Grain: subject_id, ab_id
-- Extra columns: screening_excluded_* repeat suspected_infection, suspected_infection_time,
--   culture_time, specimen and positive_culture with surveillance screening swabs (MRSA, CRE,
--   Staph aureus and infection-control yeast screens, VRE rule-out) not counted as cultures,
--   so a later diagnostic culture is reported instead; variant
--   suspicion-infection__no_screening reads them. The public columns count every specimen.
-- Deviations: a culture charted in the same minute as the antibiotic counts as drawn before it
--   (the public code matches it to neither window, although drawing cultures then giving the
--   first dose at once is the recommended sequence). A specimen whose only result is
--   CANCELLED (org_itemid 90760) is not positive (the convention commit counts it positive;
--   a cancelled test grew nothing, and later public code excludes it too). Specimens drawn in
--   the same minute report a positive one first, then the lowest specimen id (the convention
--   commit leaves that choice undefined).
WITH ab_tbl AS (
    SELECT abx.subject_id, abx.hadm_id, abx.stay_id, abx.antibiotic,
        abx.starttime AS antibiotic_time,
        CAST(abx.starttime AS DATE) AS antibiotic_date,
        abx.stoptime AS antibiotic_stoptime,
        ROW_NUMBER() OVER (
            -- nulls first as the public code; admission and stay break exact ties
            PARTITION BY abx.subject_id
            ORDER BY abx.starttime NULLS FIRST, abx.stoptime NULLS FIRST, abx.antibiotic NULLS FIRST,
                abx.hadm_id NULLS FIRST, abx.stay_id NULLS FIRST
        ) AS ab_id
    FROM mimiciv_derived.antibiotic AS abx
),
me AS (
    -- one row per specimen: the columns are repeated on every organism/antibiotic row
    SELECT micro_specimen_id,
        MAX(subject_id) AS subject_id,
        MAX(hadm_id) AS hadm_id,
        CAST(MAX(chartdate) AS DATE) AS chartdate,
        MAX(charttime) AS charttime,
        MAX(spec_type_desc) AS spec_type_desc,
        -- 90856 = negative, 90760 = cancelled: neither grew an organism
        MAX(CASE WHEN org_name IS NOT NULL AND org_name != '' AND org_name != 'CANCELLED'
                AND COALESCE(org_itemid, 0) NOT IN (90856, 90760)
            THEN 1 ELSE 0 END) AS positiveculture,
        -- surveillance swabs for carriage, not cultures sent because infection is suspected
        MAX(CASE
            WHEN UPPER(spec_type_desc) IN ('MRSA SCREEN', 'CRE SCREEN', 'STAPH AUREUS SWAB', 'INFECTION CONTROL YEAST') THEN 1
            WHEN UPPER(test_name) LIKE '%R/O VANCOMYCIN RESISTANT ENTEROCOCCUS%' THEN 1
            ELSE 0 END) AS screening
    FROM mimiciv_hosp.microbiologyevents
    GROUP BY micro_specimen_id
),
me_then_ab AS (
    SELECT ab.subject_id, ab.ab_id,
        COALESCE(me72.charttime, CAST(me72.chartdate AS TIMESTAMP)) AS last72_charttime,
        me72.positiveculture AS last72_positiveculture,
        me72.spec_type_desc AS last72_specimen,
        me72.screening,
        ROW_NUMBER() OVER (
            -- same-time specimens: a positive one first, then by specimen id
            PARTITION BY ab.subject_id, ab.ab_id
            ORDER BY me72.chartdate, me72.charttime NULLS LAST, me72.positiveculture DESC,
                me72.micro_specimen_id
        ) AS micro_seq,
        -- the same order among screening swabs and among the other specimens
        ROW_NUMBER() OVER (
            PARTITION BY ab.subject_id, ab.ab_id, me72.screening
            ORDER BY me72.chartdate, me72.charttime NULLS LAST, me72.positiveculture DESC,
                me72.micro_specimen_id
        ) AS micro_seq_by_screening
    FROM ab_tbl AS ab
    INNER JOIN me AS me72
        ON me72.subject_id = ab.subject_id
        AND (
            (me72.charttime IS NOT NULL
                AND ab.antibiotic_time >= me72.charttime
                AND ab.antibiotic_time <= me72.charttime + INTERVAL 72 HOUR)
            OR (me72.charttime IS NULL
                AND ab.antibiotic_date >= me72.chartdate
                AND ab.antibiotic_date <= me72.chartdate + INTERVAL 3 DAY)
        )
),
ab_then_me AS (
    SELECT ab.subject_id, ab.ab_id,
        COALESCE(me24.charttime, CAST(me24.chartdate AS TIMESTAMP)) AS next24_charttime,
        me24.positiveculture AS next24_positiveculture,
        me24.spec_type_desc AS next24_specimen,
        me24.screening,
        ROW_NUMBER() OVER (
            PARTITION BY ab.subject_id, ab.ab_id
            ORDER BY me24.chartdate, me24.charttime NULLS LAST, me24.positiveculture DESC,
                me24.micro_specimen_id
        ) AS micro_seq,
        ROW_NUMBER() OVER (
            PARTITION BY ab.subject_id, ab.ab_id, me24.screening
            ORDER BY me24.chartdate, me24.charttime NULLS LAST, me24.positiveculture DESC,
                me24.micro_specimen_id
        ) AS micro_seq_by_screening
    FROM ab_tbl AS ab
    INNER JOIN me AS me24
        ON me24.subject_id = ab.subject_id
        AND (
            (me24.charttime IS NOT NULL
                AND ab.antibiotic_time >= me24.charttime - INTERVAL 24 HOUR
                AND ab.antibiotic_time < me24.charttime)
            OR (me24.charttime IS NULL
                AND ab.antibiotic_date >= me24.chartdate - INTERVAL 1 DAY
                AND ab.antibiotic_date <= me24.chartdate)
        )
)
SELECT ab.subject_id, ab.stay_id, ab.hadm_id, ab.ab_id, ab.antibiotic, ab.antibiotic_time,
    CASE WHEN me2ab.last72_specimen IS NULL AND ab2me.next24_specimen IS NULL THEN 0 ELSE 1 END
        AS suspected_infection,
    CASE WHEN me2ab.last72_specimen IS NULL AND ab2me.next24_specimen IS NULL THEN NULL
        ELSE COALESCE(me2ab.last72_charttime, ab.antibiotic_time) END AS suspected_infection_time,
    COALESCE(me2ab.last72_charttime, ab2me.next24_charttime) AS culture_time,
    COALESCE(me2ab.last72_specimen, ab2me.next24_specimen) AS specimen,
    COALESCE(me2ab.last72_positiveculture, ab2me.next24_positiveculture) AS positive_culture,
    CASE WHEN me2ab_x.last72_specimen IS NULL AND ab2me_x.next24_specimen IS NULL THEN 0 ELSE 1 END
        AS screening_excluded_suspected_infection,
    CASE WHEN me2ab_x.last72_specimen IS NULL AND ab2me_x.next24_specimen IS NULL THEN NULL
        ELSE COALESCE(me2ab_x.last72_charttime, ab.antibiotic_time) END AS screening_excluded_suspected_infection_time,
    COALESCE(me2ab_x.last72_charttime, ab2me_x.next24_charttime) AS screening_excluded_culture_time,
    COALESCE(me2ab_x.last72_specimen, ab2me_x.next24_specimen) AS screening_excluded_specimen,
    COALESCE(me2ab_x.last72_positiveculture, ab2me_x.next24_positiveculture) AS screening_excluded_positive_culture
FROM ab_tbl AS ab
LEFT JOIN ab_then_me AS ab2me
    ON ab2me.subject_id = ab.subject_id AND ab2me.ab_id = ab.ab_id AND ab2me.micro_seq = 1
LEFT JOIN me_then_ab AS me2ab
    ON me2ab.subject_id = ab.subject_id AND me2ab.ab_id = ab.ab_id AND me2ab.micro_seq = 1
-- the earliest matching specimen that is not a screening swab
LEFT JOIN ab_then_me AS ab2me_x
    ON ab2me_x.subject_id = ab.subject_id AND ab2me_x.ab_id = ab.ab_id
    AND ab2me_x.screening = 0 AND ab2me_x.micro_seq_by_screening = 1
LEFT JOIN me_then_ab AS me2ab_x
    ON me2ab_x.subject_id = ab.subject_id AND me2ab_x.ab_id = ab.ab_id
    AND me2ab_x.screening = 0 AND me2ab_x.micro_seq_by_screening = 1
