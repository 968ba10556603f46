-- Concept: suspicion-infection__no_screening
-- Definition: suspicion of infection as in task mimic-suspicion-infection (one row per
--   systemic antibiotic, culture 72 h before / 24 h after), but surveillance screening
--   specimens - MRSA screen, CRE screen, Staph aureus swab, infection-control yeast and
--   VRE rule-out swabs - do not count as cultures, so a later diagnostic culture is
--   reported instead of the swab.
-- Source: sepsis/suspicion_of_infection (same rules otherwise, repeated here with the
--   screening filter); Seymour et al., JAMA 2016.
--   Clinical reason: screening swabs are taken on admission and weekly for infection control,
--   whatever the patient's state; pairing one with a prophylactic or empirical antibiotic
--   labels patients as "suspected infection" with no clinical suspicion behind it, and the
--   swab can also hide a later diagnostic culture because only the earliest one is reported.
-- Grain: subject_id, ab_id
-- Deviations: screening specimens excluded (default target: every specimen counts, as
--   mimic-code does).
WITH ab_tbl AS (
    SELECT abx.subject_id, abx.hadm_id, abx.stay_id, abx.antibiotic,
        abx.starttime AS antibiotic_time,
        DATE_TRUNC('DAY', CAST(abx.starttime AS TIMESTAMP)) AS antibiotic_date,
        abx.stoptime AS antibiotic_stoptime,
        ROW_NUMBER() OVER (
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
        -- surveillance swabs for carriage, not cultures sent because infection is suspected
        MAX(CASE
            WHEN UPPER(spec_type_desc) IN ('MRSA SCREEN', 'CRE SCREEN', 'STAPH AUREUS SWAB', 'INFECTION CONTROL YEAST') THEN 1
            WHEN UPPER(test_name) LIKE '%R/O VANCOMYCIN RESISTANT ENTEROCOCCUS%' THEN 1
            ELSE 0 END) AS screening,
        MAX(CASE WHEN org_name IS NOT NULL AND NOT org_itemid IN (90856, 90760)
                AND org_name <> '' AND org_name <> 'CANCELLED'
            THEN 1 ELSE 0 END) AS positiveculture
    FROM mimiciv_hosp.microbiologyevents
    GROUP BY micro_specimen_id
),
cultures AS (
    SELECT * FROM me WHERE screening = 0
),
me_then_ab AS (
    SELECT ab.subject_id, ab.ab_id,
        COALESCE(me72.charttime, CAST(me72.chartdate AS TIMESTAMP)) AS last72_charttime,
        me72.positiveculture AS last72_positiveculture,
        me72.spec_type_desc AS last72_specimen,
        ROW_NUMBER() OVER (
            PARTITION BY ab.subject_id, ab.ab_id
            ORDER BY me72.chartdate NULLS FIRST, me72.charttime NULLS LAST,
                me72.positiveculture DESC NULLS LAST, me72.micro_specimen_id NULLS FIRST
        ) AS micro_seq
    FROM ab_tbl AS ab
    INNER JOIN cultures AS me72
        ON me72.subject_id = ab.subject_id
        AND (
            (me72.charttime IS NOT NULL
                AND ab.antibiotic_time > me72.charttime
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
        ROW_NUMBER() OVER (
            PARTITION BY ab.subject_id, ab.ab_id
            ORDER BY me24.chartdate NULLS FIRST, me24.charttime NULLS LAST,
                me24.positiveculture DESC NULLS LAST, me24.micro_specimen_id NULLS FIRST
        ) AS micro_seq
    FROM ab_tbl AS ab
    INNER JOIN cultures AS me24
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
    COALESCE(me2ab.last72_positiveculture, ab2me.next24_positiveculture) AS positive_culture
FROM ab_tbl AS ab
LEFT JOIN ab_then_me AS ab2me
    ON ab2me.subject_id = ab.subject_id AND ab2me.ab_id = ab.ab_id AND ab2me.micro_seq = 1
LEFT JOIN me_then_ab AS me2ab
    ON me2ab.subject_id = ab.subject_id AND me2ab.ab_id = ab.ab_id AND me2ab.micro_seq = 1
