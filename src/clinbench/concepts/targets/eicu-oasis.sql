-- Concept: eicu-oasis
-- Definition: reference output of task eicu-oasis: OASIS and its 10 components over the first
--   24 hours of the eICU unit stay (offsets above 0 up to 1440 minutes), unmeasured components
--   scored 0, one row per unit stay. Pre-ICU stay from hospitaladmitoffset (minutes): above
--   -10.2 5; -296.4 to -10.2 3; -1440 to -296.4 0; -18708 to -1440 2; below 1. Age ('> 89' =
--   91): < 24 0; 24-53 3; 54-77 6; 78-89 9; > 89 7. GCS: the lowest charted total (3-15) in
--   nurse charting (categories 'Scores', 'Other Vital Signs and Infusions'), else the lowest
--   GCS of the physical exam: < 8 10; 8-13 4; 14 3; 15 0. Heart rate, respiratory rate,
--   temperature (C) and mean pressure (invasive first, else non-invasive) from nurse charting
--   (categories 'Vital Signs', 'Scores', 'Other Vital Signs and Infusions'), plausible ranges
--   only, scored by the first band that applies, as eicu-code's pivoted-oasis. Urine: the sum
--   of urine outputs of intakeoutput (the eicu-code cell paths), else APACHE day-1 urine.
--   Ventilation: APACHE intubated or out-of-bed intubated flags, or an airway or ventilator
--   setting charted in respiratorycare. Elective surgery: APACHE elective surgery not from the
--   emergency department 0, else 6.
-- Source: Johnson et al. 2013; eicu-code pivoted-oasis; the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/oasis.sql.
-- Grain: patientunitstayid
-- Deviations: from oasis_first_day (clinbench's eICU concept, which reads vitalperiodic over
--   -6 h to +24 h), vital signs and GCS come from nurse charting over the first 24 hours, a
--   band boundary follows eicu-code's BETWEEN bands (a value between two bands, such as a
--   heart rate of 88.5, scores 0), and urine output comes from the eicu-code cell paths.
WITH pre_icu AS (
    SELECT patientunitstayid,
        CASE
            WHEN hospitaladmitoffset > -10.2 THEN 5
            WHEN hospitaladmitoffset BETWEEN -296.4 AND -10.2 THEN 3
            WHEN hospitaladmitoffset BETWEEN -1440 AND -296.4 THEN 0
            WHEN hospitaladmitoffset BETWEEN -18708 AND -1440 THEN 2
            WHEN hospitaladmitoffset < -18708 THEN 1
        END AS preiculos_score
    FROM eicu_crd.patient
),
age AS (
    SELECT patientunitstayid,
        CASE
            WHEN a < 24 THEN 0 WHEN a BETWEEN 24 AND 53 THEN 3 WHEN a BETWEEN 54 AND 77 THEN 6
            WHEN a BETWEEN 78 AND 89 THEN 9 WHEN a > 89 THEN 7
        END AS age_score
    FROM (
        SELECT patientunitstayid, MAX(CASE WHEN age = '> 89' THEN 91 ELSE TRY_CAST(age AS INTEGER) END) AS a
        FROM eicu_crd.patient
        GROUP BY patientunitstayid
    )
),
nc_gcs AS (
    SELECT patientunitstayid, nursingchartoffset AS chartoffset,
        MIN(CASE WHEN (nursingchartcelltypevallabel = 'Glasgow coma score' AND nursingchartcelltypevalname = 'GCS Total')
                OR (nursingchartcelltypevallabel = 'Score (Glasgow Coma Scale)' AND nursingchartcelltypevalname = 'Value')
            THEN TRY_CAST(nursingchartvalue AS DECIMAL(18, 3)) END) AS gcs
    FROM eicu_crd.nursecharting
    WHERE nursingchartcelltypecat IN ('Scores', 'Other Vital Signs and Infusions')
    GROUP BY patientunitstayid, nursingchartoffset
),
exam_gcs AS (
    SELECT patientunitstayid, MIN(TRY_CAST(physicalexamvalue AS DECIMAL(18, 3))) AS gcs
    FROM eicu_crd.physicalexam
    WHERE (physicalexampath LIKE 'notes/Progress Notes/Physical Exam/Physical Exam/Neurologic/GCS/_'
            OR physicalexampath LIKE 'notes/Progress Notes/Physical Exam/Physical Exam/Neurologic/GCS/__')
        AND physicalexamoffset > 0 AND physicalexamoffset <= 1440 AND physicalexamvalue IS NOT NULL
    GROUP BY patientunitstayid
),
gcs AS (
    SELECT p.patientunitstayid,
        CASE WHEN g < 8 THEN 10 WHEN g BETWEEN 8 AND 13 THEN 4 WHEN g = 14 THEN 3 WHEN g = 15 THEN 0 END AS gcs_score
    FROM (
        SELECT p.patientunitstayid, COALESCE(
            (SELECT MIN(CASE WHEN n.gcs > 2 AND n.gcs < 16 THEN n.gcs END) FROM nc_gcs AS n
             WHERE n.patientunitstayid = p.patientunitstayid AND n.chartoffset > 0 AND n.chartoffset <= 1440),
            e.gcs) AS g
        FROM eicu_crd.patient AS p
        LEFT JOIN exam_gcs AS e ON e.patientunitstayid = p.patientunitstayid
    ) AS p
),
nc_vitals AS (
    SELECT patientunitstayid, nursingchartoffset AS chartoffset,
        nursingchartcelltypevallabel AS label, nursingchartcelltypevalname AS name,
        TRY_CAST(nursingchartvalue AS DECIMAL(18, 3)) AS value
    FROM eicu_crd.nursecharting
    WHERE nursingchartcelltypecat IN ('Vital Signs', 'Scores', 'Other Vital Signs and Infusions')
        AND nursingchartoffset > 0 AND nursingchartoffset <= 1440
),
vitals AS (
    SELECT patientunitstayid,
        MIN(value) FILTER (WHERE label = 'Heart Rate' AND name = 'Heart Rate' AND value >= 25 AND value <= 225) AS hr_min,
        MAX(value) FILTER (WHERE label = 'Heart Rate' AND name = 'Heart Rate' AND value >= 25 AND value <= 225) AS hr_max,
        MIN(value) FILTER (WHERE label = 'Respiratory Rate' AND name = 'Respiratory Rate' AND value > 0 AND value <= 60) AS rr_min,
        MAX(value) FILTER (WHERE label = 'Respiratory Rate' AND name = 'Respiratory Rate' AND value >= 0 AND value <= 60) AS rr_max,
        MIN(value) FILTER (WHERE label = 'Temperature' AND name = 'Temperature (C)' AND value >= 25 AND value <= 46) AS temp_min,
        MAX(value) FILTER (WHERE label = 'Temperature' AND name = 'Temperature (C)' AND value >= 25 AND value <= 46) AS temp_max,
        MIN(value) FILTER (WHERE ((label = 'Invasive BP' AND name = 'Invasive BP Mean') OR (label = 'MAP (mmHg)' AND name = 'Value')
            OR (label = 'Arterial Line MAP (mmHg)' AND name = 'Value')) AND value >= 1 AND value <= 250) AS ibp_min,
        MAX(value) FILTER (WHERE ((label = 'Invasive BP' AND name = 'Invasive BP Mean') OR (label = 'MAP (mmHg)' AND name = 'Value')
            OR (label = 'Arterial Line MAP (mmHg)' AND name = 'Value')) AND value >= 1 AND value <= 250) AS ibp_max,
        MIN(value) FILTER (WHERE label = 'Non-Invasive BP' AND name = 'Non-Invasive BP Mean' AND value >= 1 AND value <= 250) AS nibp_min,
        MAX(value) FILTER (WHERE label = 'Non-Invasive BP' AND name = 'Non-Invasive BP Mean' AND value >= 1 AND value <= 250) AS nibp_max
    FROM nc_vitals
    GROUP BY patientunitstayid
),
vital_scores AS (
    SELECT patientunitstayid,
        CASE WHEN hr_min < 33 THEN 4 WHEN hr_max BETWEEN 33 AND 88 THEN 0 WHEN hr_max BETWEEN 89 AND 106 THEN 1
            WHEN hr_max BETWEEN 107 AND 125 THEN 3 WHEN hr_max > 125 THEN 6 END AS heart_rate_score,
        CASE WHEN ibp_min < 20.65 THEN 4 WHEN ibp_min BETWEEN 20.65 AND 50.99 THEN 3
            WHEN ibp_min BETWEEN 51 AND 61.32 THEN 2 WHEN ibp_min BETWEEN 61.33 AND 143.44 THEN 0
            WHEN ibp_max > 143.44 THEN 3
            WHEN nibp_min < 20.65 THEN 4 WHEN nibp_min BETWEEN 20.65 AND 50.99 THEN 3
            WHEN nibp_min BETWEEN 51 AND 61.32 THEN 2 WHEN nibp_min BETWEEN 61.33 AND 143.44 THEN 0
            WHEN nibp_max > 143.44 THEN 3 END AS mbp_score,
        CASE WHEN rr_min < 6 THEN 10 WHEN rr_min BETWEEN 6 AND 12 THEN 1 WHEN rr_min BETWEEN 13 AND 22 THEN 0
            WHEN rr_max BETWEEN 23 AND 30 THEN 1 WHEN rr_max BETWEEN 31 AND 44 THEN 6 WHEN rr_max > 44 THEN 9
        END AS resp_rate_score,
        CASE WHEN temp_min < 33.22 THEN 3 WHEN temp_min BETWEEN 33.22 AND 35.93 THEN 4
            WHEN temp_max BETWEEN 33.22 AND 35.93 THEN 4 WHEN temp_min BETWEEN 35.94 AND 36.39 THEN 2
            WHEN temp_max BETWEEN 36.40 AND 36.88 THEN 0 WHEN temp_max BETWEEN 36.89 AND 39.88 THEN 2
            WHEN temp_max > 39.88 THEN 6 END AS temp_score
    FROM vitals
),
urine AS (
    SELECT patientunitstayid, SUM(cellvaluenumeric) AS urineoutput
    FROM eicu_crd.intakeoutput
    WHERE cellvaluenumeric IS NOT NULL AND intakeoutputoffset > 0 AND intakeoutputoffset <= 1440
        AND cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|%'
        AND (
            SUBSTR(cellpath, LENGTH('flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|') + 1) IN (
        'Urine', '3 way foley', '3 Way Foley', 'Actual Urine', 'Adjusted total UO NOC end shift',
        'BRP (urine)', 'BRP (Urine)', 'condome cath urine', 'diaper urine', 'inc of urine',
        'incontient urine', 'Incontient urine', 'Incontient Urine', 'incontinence of urine',
        'Incontinence-urine', 'incontinence/ voids urine', 'incontinent of urine',
        'INCONTINENT OF URINE', 'Incontinent UOP', 'incontinent urine', 'Incontinent (urine)',
        'Incontinent Urine', 'incontinent urine counts', 'incont of urine', 'incont. of urine',
        'incont. of urine count', 'incont urine', 'incont. urine', 'Incont. urine',
        'Incont. Urine', 'inc urine', 'inc. urine', 'Inc. urine', 'Inc Urine', 'indwelling foley',
        'Indwelling Foley', 'Straight Catheter-Foley', 'Straight Catheterization Urine',
        'Straight Cath UOP', 'straight cath urine', 'Straight Cath Urine', 'strait cath Urine',
        'Suprapubic Urine Output', 'true urine', 'True Urine', 'True Urine out',
        'unmeasured urine', 'Unmeasured Urine', 'unmeasured urine output', 'Urethal Catheter',
        'Urethral Catheter', 'urinary output 7AM - 7 PM', 'urinary output 7AM-7PM', 'urine',
        'URINE', 'URINE CATHETER', 'Intermittent/Straight Cath (mL)', 'straightcath',
        'straight cath', 'Straight cath', 'Straight  cath', 'Straight Cath', 'Straight  Cath',
        'Straight Cath''d', 'straight cath daily', 'straight cathed', 'Straight Cathed',
        'Straight catheterization', 'Straight Catheter Output',
        'Straight Catheter-Straight Catheter', 'straight cath ml''s', 'Straight cath ml''s',
        'Straight Cath Q6hrs', 'Straight caths', 'Urine Output-straight cath',
        'Urine-straight cath', 'Urine Straight Cath', 'Condom Catheter', 'condom catheter',
        'condom cath', 'Condom Cath', 'CONDOM CATHETER OUTPUT', 'Urine via condom catheter',
        'Urine-foley', 'Urine- foley', 'Urine- Foley', 'Urine foley catheter', 'Urine, L neph:',
        'Urine (measured)', 'urine output', 'Urine Output-external catheter', 'Urine Output-foley',
        'Urine Output-Foley', 'Urine Output-FOLEY', 'Urine Output-Foley cath',
        'Urine Output-FOLEY CATH', 'Urine Output-foley catheter', 'Urine Output-Foley Catheter',
        'Urine Output-FOLEY CATHETER', 'Urine Output-Foley Output', 'Urine Output-Fpley',
        'Urine Output-Ileoconduit', 'Urine Output-left nephrostomy',
        'Urine Output-Left Nephrostomy', 'Urine Output-Left Nephrostomy Tube',
        'Urine Output-LEFT PCN TUBE', 'Urine Output-L Nephrostomy',
        'Urine Output-L Nephrostomy Tube', 'Urine Output-Nephrostomy',
        'Urine Output-right nephrostomy', 'Urine Output-RIGHT Nephrouretero Stent Urine Output',
        'Urine Output-R nephrostomy', 'Urine Output-R Nephrostomy', 'Urine Output-R. Nephrostomy',
        'Urine Output-R Nephrostomy Tube', 'Urine Output-Rt Nephrectomy', 'Urine Output-stent',
        'Urine Output-suprapubic', 'Urine Output-Texas Cath', 'Urine Output-Urine',
        'Urine Output-Urine Output', 'Urine, R neph:', 'urine (void)', 'Urine- void',
        'Urine, void:'
            )
            OR (cellpath ILIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|foley%'
                AND LOWER(cellpath) NOT LIKE '%pacu%' AND LOWER(cellpath) NOT LIKE '%or%'
                AND LOWER(cellpath) NOT LIKE '%ir%')
            OR cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Output%Urinary Catheter%'
            OR cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Output%Urethral Catheter%'
            OR cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Urine Output (mL)%'
            OR cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Output%External Urethral%'
            OR cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|Urinary Catheter Output%'
        )
    GROUP BY patientunitstayid
),
urine_score AS (
    SELECT p.patientunitstayid,
        CASE WHEN uo < 671 THEN 10 WHEN uo BETWEEN 671 AND 1426.99 THEN 5 WHEN uo BETWEEN 1427 AND 2543.99 THEN 1
            WHEN uo BETWEEN 2544 AND 6896 THEN 0 WHEN uo > 6896 THEN 8 END AS urineoutput_score
    FROM (
        SELECT p.patientunitstayid, COALESCE(u.urineoutput, (
            SELECT MAX(a.urine) FROM eicu_crd.apacheapsvar AS a
            WHERE a.patientunitstayid = p.patientunitstayid AND a.urine > 0)) AS uo
        FROM eicu_crd.patient AS p
        LEFT JOIN urine AS u ON u.patientunitstayid = p.patientunitstayid
    ) AS p
),
vent AS (
    SELECT p.patientunitstayid,
        CASE WHEN EXISTS (SELECT 1 FROM eicu_crd.apacheapsvar AS a WHERE a.patientunitstayid = p.patientunitstayid AND a.intubated = 1)
                OR EXISTS (SELECT 1 FROM eicu_crd.apachepredvar AS a WHERE a.patientunitstayid = p.patientunitstayid AND a.oobintubday1 = 1)
                OR EXISTS (SELECT 1 FROM eicu_crd.respiratorycare AS r WHERE r.patientunitstayid = p.patientunitstayid
                    AND r.respcarestatusoffset > 0 AND r.respcarestatusoffset <= 1440
                    AND (r.airwaytype IS NOT NULL OR r.airwaysize IS NOT NULL OR r.airwayposition IS NOT NULL
                        OR r.cuffpressure IS NOT NULL OR r.setapneatv IS NOT NULL))
            THEN 9 ELSE 0 END AS mechvent_score
    FROM eicu_crd.patient AS p
),
elective AS (
    SELECT p.patientunitstayid,
        CASE WHEN a.electivesurgery = 0 OR a.electivesurgery IS NULL THEN 6
            WHEN p.unitadmitsource = 'Emergency Department' THEN 6 ELSE 0 END AS electivesurgery_score
    FROM eicu_crd.patient AS p
    LEFT JOIN eicu_crd.apachepredvar AS a ON a.patientunitstayid = p.patientunitstayid
),
components AS (
    SELECT p.patientunitstayid, p.uniquepid, p.patienthealthsystemstayid,
        COALESCE(pi.preiculos_score, 0) AS preiculos_score,
        COALESCE(ag.age_score, 0) AS age_score,
        COALESCE(g.gcs_score, 0) AS gcs_score,
        COALESCE(v.heart_rate_score, 0) AS heart_rate_score,
        COALESCE(v.mbp_score, 0) AS mbp_score,
        COALESCE(v.resp_rate_score, 0) AS resp_rate_score,
        COALESCE(v.temp_score, 0) AS temp_score,
        COALESCE(u.urineoutput_score, 0) AS urineoutput_score,
        COALESCE(ve.mechvent_score, 0) AS mechvent_score,
        COALESCE(e.electivesurgery_score, 0) AS electivesurgery_score
    FROM eicu_crd.patient AS p
    LEFT JOIN pre_icu AS pi ON pi.patientunitstayid = p.patientunitstayid
    LEFT JOIN age AS ag ON ag.patientunitstayid = p.patientunitstayid
    LEFT JOIN gcs AS g ON g.patientunitstayid = p.patientunitstayid
    LEFT JOIN vital_scores AS v ON v.patientunitstayid = p.patientunitstayid
    LEFT JOIN urine_score AS u ON u.patientunitstayid = p.patientunitstayid
    LEFT JOIN vent AS ve ON ve.patientunitstayid = p.patientunitstayid
    LEFT JOIN elective AS e ON e.patientunitstayid = p.patientunitstayid
)
SELECT patientunitstayid, uniquepid, patienthealthsystemstayid,
    preiculos_score + age_score + gcs_score + heart_rate_score + mbp_score + resp_rate_score + temp_score
        + urineoutput_score + mechvent_score + electivesurgery_score AS oasis,
    preiculos_score, age_score, gcs_score, heart_rate_score, mbp_score, resp_rate_score, temp_score,
    urineoutput_score, mechvent_score, electivesurgery_score
FROM components
