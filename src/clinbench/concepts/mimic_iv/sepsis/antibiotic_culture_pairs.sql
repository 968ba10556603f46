-- Concept: antibiotic_culture_pairs
-- Definition: every systemic antibiotic of mimiciv_derived.antibiotic (ab_id = row number per
--   subject by start time, stop time, name, hadm_id, stay_id, missing values first) paired with
--   each culture (one micro_specimen_id) of the same subject that lies in its suspicion window,
--   one row per pair, and one row with empty culture columns for an antibiotic without any.
--   direction: 'before' when a timed culture is followed by the antibiotic within (0, 72 h], or
--   a date-only culture's day is 0-3 days before the antibiotic's day; 'after' when the
--   antibiotic precedes a timed culture by (0, 24 h], or a date-only culture's day is the
--   antibiotic's day or the next; 'same_minute' when a timed culture has the antibiotic's
--   start time. positive: an organism is named other than itemid 90856 (so 'CANCELLED'
--   counts); positive_not_cancelled: also not itemid 90760 nor the name 'CANCELLED'.
--   screening: a surveillance swab (MRSA, CRE, Staph aureus or infection-control yeast screen,
--   VRE rule-out), taken for carriage rather than because infection is suspected.
-- Source: Seymour et al., JAMA 2016 (suspected infection); windows of mimic-code
--   sepsis/suspicion_of_infection and M4Bench 0.5.3 benchmark/ground_truth/suspicion-infection.sql.
--   Read by target suspicion-infection and its variants, which choose among the pairs.
-- Grain: subject_id, ab_id, micro_specimen_id
-- Deviations: none (this table holds the candidates; the choice rules are the target's).
-- Helper: clinbench's own intermediate, read by target suspicion-infection and its variants (the candidate pairs they choose from); no anchor builds it.
WITH ab AS (
    SELECT subject_id, hadm_id, stay_id, antibiotic,
        starttime AS antibiotic_time,
        DATE_TRUNC('day', starttime) AS antibiotic_date,
        ROW_NUMBER() OVER (
            PARTITION BY subject_id
            ORDER BY starttime NULLS FIRST, stoptime NULLS FIRST, antibiotic NULLS FIRST,
                hadm_id NULLS FIRST, stay_id NULLS FIRST
        ) AS ab_id
    FROM mimiciv_derived.antibiotic
),
culture AS (
    SELECT micro_specimen_id,
        MAX(subject_id) AS subject_id,
        TRY_CAST(MAX(chartdate) AS DATE) AS chartdate,
        MAX(charttime) AS charttime,
        MAX(spec_type_desc) AS specimen,
        MAX(CASE WHEN org_name IS NOT NULL AND org_itemid <> 90856 AND org_name <> '' THEN 1 ELSE 0 END) AS positive,
        MAX(CASE WHEN org_name IS NOT NULL AND org_itemid NOT IN (90856, 90760) AND org_name <> ''
            AND org_name <> 'CANCELLED' THEN 1 ELSE 0 END) AS positive_not_cancelled,
        MAX(CASE
            WHEN UPPER(spec_type_desc) IN ('MRSA SCREEN', 'CRE SCREEN', 'STAPH AUREUS SWAB', 'INFECTION CONTROL YEAST') THEN 1
            WHEN UPPER(test_name) LIKE '%R/O VANCOMYCIN RESISTANT ENTEROCOCCUS%' THEN 1
            ELSE 0 END) = 1 AS screening
    FROM mimiciv_hosp.microbiologyevents
    GROUP BY micro_specimen_id
),
pairs AS (
    SELECT ab.subject_id, ab.ab_id, c.micro_specimen_id, c.chartdate, c.charttime,
        COALESCE(c.charttime, CAST(c.chartdate AS TIMESTAMP)) AS culture_time,
        c.specimen, c.positive, c.positive_not_cancelled, c.screening,
        CASE
            WHEN c.charttime IS NOT NULL AND ab.antibiotic_time = c.charttime THEN 'same_minute'
            WHEN c.charttime IS NOT NULL AND ab.antibiotic_time > c.charttime THEN 'before'
            WHEN c.charttime IS NOT NULL THEN 'after'
            WHEN ab.antibiotic_date >= c.chartdate THEN 'before'
            ELSE 'after'
        END AS direction,
        -- a date-only culture on the antibiotic's day is in both windows
        c.charttime IS NULL AND ab.antibiotic_date = c.chartdate AS also_after
    FROM ab
    INNER JOIN culture AS c ON c.subject_id = ab.subject_id
        AND ((c.charttime IS NOT NULL
                AND ab.antibiotic_time >= c.charttime - INTERVAL 24 HOUR
                AND ab.antibiotic_time <= c.charttime + INTERVAL 72 HOUR)
            OR (c.charttime IS NULL
                AND ab.antibiotic_date >= c.chartdate - INTERVAL 1 DAY
                AND ab.antibiotic_date <= c.chartdate + INTERVAL 3 DAY))
)
SELECT ab.subject_id, ab.stay_id, ab.hadm_id, ab.ab_id, ab.antibiotic, ab.antibiotic_time,
    p.micro_specimen_id, p.chartdate, p.charttime, p.culture_time, p.specimen, p.positive,
    p.positive_not_cancelled, p.screening, p.direction, p.also_after
FROM ab
LEFT JOIN pairs AS p ON p.subject_id = ab.subject_id AND p.ab_id = ab.ab_id
