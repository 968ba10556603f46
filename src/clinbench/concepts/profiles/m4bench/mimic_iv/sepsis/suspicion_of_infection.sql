-- Concept: suspicion_of_infection
-- Definition: for every systemic antibiotic prescription, whether a microbiology culture was
--   drawn in the 72 hours before it (culture time strictly before the antibiotic) or the 24
--   hours after it (strictly after). The suspected-infection time is the culture time when
--   the culture came first, else the antibiotic time. ab_id numbers a subject's antibiotics
--   by start time, stop time, name, admission and stay (missing values first). Cultures with
--   only a date are compared by calendar day (up to 3 days before, 1 day after). The
--   earliest matching specimen is reported; same-time specimens report a positive one first,
--   then the lowest specimen id. A specimen is positive when an organism other than item
--   90856 (negative) is charted; an organism row without an org_itemid is not
--   positive. A culture charted in the same minute as the antibiotic matches neither window.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   sepsis/suspicion_of_infection, as `m4 init-derived mimic-iv` builds it.
-- Grain: subject_id, ab_id
-- Deviations: differs from the mimic-code profile in what is a positive culture: M4's copy excludes
--   only item 90856 (negative), so a cancelled specimen (item 90760, or organism 'CANCELLED')
--   counts as positive. M4's copy leaves ties to the engine (antibiotics with the same start, stop
--   and name; specimens at the same time); clinbench breaks them as the mimic-code profile does.
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
        MAX(CASE WHEN org_name IS NOT NULL AND org_itemid <> 90856 AND org_name <> ''
            THEN 1 ELSE 0 END) AS positiveculture
    FROM mimiciv_hosp.microbiologyevents
    GROUP BY micro_specimen_id
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
    INNER JOIN me AS me72
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
    COALESCE(me2ab.last72_positiveculture, ab2me.next24_positiveculture) AS positive_culture
FROM ab_tbl AS ab
LEFT JOIN ab_then_me AS ab2me
    ON ab2me.subject_id = ab.subject_id AND ab2me.ab_id = ab.ab_id AND ab2me.micro_seq = 1
LEFT JOIN me_then_ab AS me2ab
    ON me2ab.subject_id = ab.subject_id AND me2ab.ab_id = ab.ab_id AND me2ab.micro_seq = 1
