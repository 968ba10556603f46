-- Concept: oasis_first_day
-- Definition: Oxford Acute Severity of Illness Score of an eICU unit stay over 6 hours before
--   to 24 hours after unit admission (offsets -360 to 1440 minutes), with the MIMIC OASIS
--   point tables: pre-ICU length of stay (minutes between hospital and unit admission), age
--   ('> 89' read as 90), lowest GCS (gcs_first_day), heart rate, MAP (invasive or
--   non-invasive), respiratory rate and temperature (periodic vitals, implausible values
--   dropped), urine output (summed urine cells of intakeOutput's output flowsheet, else
--   APACHE day-1 urine), mechanical ventilation (APACHE intubated flag, APACHE out-of-bed
--   intubation on day 1, or an airway or a set apnea tidal volume charted in respiratoryCare
--   in the window) and elective surgery (APACHE elective surgery flag, not from the emergency
--   department). Unmeasured components score 0.
-- Source: Johnson, Kramer, Clifford, Crit Care Med 2013; MIT-LCP eicu-code
--   concepts/pivoted/eICU-pivoted-OASIS (data sources and the imputed-with-0 score).
-- Grain: patientunitstayid
-- Deviations: the window starts 6 h before unit admission like every first-day score of the
--   benchmark (the public eICU code uses 0 to 1440 minutes); vitals come straight from
--   vitalPeriodic/vitalAperiodic with the plausibility limits of eicu-code's pivoted-vital.
--   The point tables, their order and their cut-offs are those of the MIMIC OASIS code
--   (one definition of OASIS across the benchmark): eicu-code orders its cases differently
--   (a heart rate < 33 scores 4 before a maximum > 125 is checked; a respiratory rate whose
--   minimum is 13-22 scores 0 whatever the maximum; invasive MAP is used before
--   non-invasive), scores exactly 24 h pre-ICU stay as 0 (here 2, as in MIMIC) and uses
--   671/2544/6896 mL urine cut-offs (here 671.09/2544.14/6896.80). GCS comes from nurse
--   charting only (gcs_first_day, components summed when no total), not first from
--   physicalExam as in eicu-code, so that it matches the eicu-gcs task. Ventilation does not
--   read eicu-code's derived ventilation_events table, which is not part of eicu_crd.
WITH pt AS (
    SELECT patientunitstayid, uniquepid, patienthealthsystemstayid, hospitaladmitoffset,
        unitadmitsource,
        CASE WHEN TRIM(age) = '> 89' THEN 90 ELSE TRY_CAST(age AS INTEGER) END AS age
    FROM eicu_crd.patient
),
vp AS (
    SELECT patientunitstayid,
        MIN(CASE WHEN heartrate >= 25 AND heartrate <= 225 THEN heartrate END) AS hr_min,
        MAX(CASE WHEN heartrate >= 25 AND heartrate <= 225 THEN heartrate END) AS hr_max,
        MIN(CASE WHEN respiration >= 0 AND respiration <= 60 THEN respiration END) AS rr_min,
        MAX(CASE WHEN respiration >= 0 AND respiration <= 60 THEN respiration END) AS rr_max,
        MIN(CASE WHEN temperature >= 25 AND temperature <= 46 THEN temperature END) AS temp_min,
        MAX(CASE WHEN temperature >= 25 AND temperature <= 46 THEN temperature END) AS temp_max,
        MIN(CASE WHEN systemicmean >= 1 AND systemicmean <= 250 THEN systemicmean END) AS ibp_min,
        MAX(CASE WHEN systemicmean >= 1 AND systemicmean <= 250 THEN systemicmean END) AS ibp_max
    FROM eicu_crd.vitalperiodic
    WHERE observationoffset >= -360 AND observationoffset <= 1440
    GROUP BY patientunitstayid
),
va AS (
    SELECT patientunitstayid,
        MIN(CASE WHEN noninvasivemean >= 1 AND noninvasivemean <= 250 THEN noninvasivemean END) AS nibp_min,
        MAX(CASE WHEN noninvasivemean >= 1 AND noninvasivemean <= 250 THEN noninvasivemean END) AS nibp_max
    FROM eicu_crd.vitalaperiodic
    WHERE observationoffset >= -360 AND observationoffset <= 1440
    GROUP BY patientunitstayid
),
uo AS (
    SELECT patientunitstayid, SUM(cellvaluenumeric) AS urineoutput
    FROM (
        SELECT patientunitstayid, intakeoutputoffset, cellvaluenumeric,
            LOWER(SUBSTR(cellpath, LENGTH('flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|') + 1)) AS cell
        FROM eicu_crd.intakeoutput
        WHERE cellpath LIKE 'flowsheet|Flowsheet Cell Labels|I&O|Output (ml)|%'
    ) AS io
    WHERE intakeoutputoffset >= -360 AND intakeoutputoffset <= 1440
        AND cellvaluenumeric > 0
        -- urine cells of the output flowsheet (eicu-code pivoted-uo): urine / urinary catheter,
        -- Foley (not the PACU or OR one), straight, condom and urethral catheters
        AND (cell LIKE '%urin%' OR cell LIKE '%uop%' OR cell LIKE '%straight%cath%'
            OR cell LIKE '%straightcath%' OR cell LIKE '%condom%' OR cell LIKE '%urethral%'
            OR cell LIKE '%urethal%'
            OR (cell LIKE '%foley%' AND cell NOT LIKE '%pacu%' AND cell NOT LIKE '%or%' AND cell NOT LIKE '%ir%'))
    GROUP BY patientunitstayid
),
aps AS (
    SELECT patientunitstayid, MAX(intubated) AS intubated,
        MAX(CASE WHEN urine > 0 THEN urine END) AS urine
    FROM eicu_crd.apacheapsvar
    GROUP BY patientunitstayid
),
pred AS (
    SELECT patientunitstayid, MAX(oobintubday1) AS oobintubday1, MAX(electivesurgery) AS electivesurgery
    FROM eicu_crd.apachepredvar
    GROUP BY patientunitstayid
),
airway AS (
    SELECT patientunitstayid, 1 AS airway
    FROM eicu_crd.respiratorycare
    WHERE respcarestatusoffset >= -360 AND respcarestatusoffset <= 1440
        -- a set apnea tidal volume is a ventilator setting, so it marks ventilation too
        AND (airwaytype IS NOT NULL OR airwaysize IS NOT NULL OR airwayposition IS NOT NULL
            OR cuffpressure IS NOT NULL OR setapneatv IS NOT NULL)
    GROUP BY patientunitstayid
),
cohort AS (
    SELECT pt.patientunitstayid, pt.uniquepid, pt.patienthealthsystemstayid, pt.age,
        -pt.hospitaladmitoffset AS preiculos,
        g.gcs_min,
        vp.hr_min, vp.hr_max, vp.rr_min, vp.rr_max, vp.temp_min, vp.temp_max,
        LEAST(vp.ibp_min, va.nibp_min) AS mbp_min,
        GREATEST(vp.ibp_max, va.nibp_max) AS mbp_max,
        COALESCE(uo.urineoutput, aps.urine) AS urineoutput,
        CASE WHEN aps.intubated = 1 OR pred.oobintubday1 = 1 OR airway.airway = 1 THEN 1 ELSE 0 END AS mechvent,
        CASE WHEN pred.electivesurgery = 1 AND COALESCE(pt.unitadmitsource, '') != 'Emergency Department'
            THEN 1 ELSE 0 END AS electivesurgery
    FROM pt
    LEFT JOIN eicu_derived.gcs_first_day AS g ON g.patientunitstayid = pt.patientunitstayid
    LEFT JOIN vp ON vp.patientunitstayid = pt.patientunitstayid
    LEFT JOIN va ON va.patientunitstayid = pt.patientunitstayid
    LEFT JOIN uo ON uo.patientunitstayid = pt.patientunitstayid
    LEFT JOIN aps ON aps.patientunitstayid = pt.patientunitstayid
    LEFT JOIN pred ON pred.patientunitstayid = pt.patientunitstayid
    LEFT JOIN airway ON airway.patientunitstayid = pt.patientunitstayid
),
scorecomp AS (
    SELECT patientunitstayid, uniquepid, patienthealthsystemstayid,
        CASE WHEN preiculos IS NULL THEN 0
            WHEN preiculos < 10.2 THEN 5 WHEN preiculos < 297 THEN 3 WHEN preiculos < 1440 THEN 0
            WHEN preiculos < 18708 THEN 2 ELSE 1 END AS preiculos_score,
        CASE WHEN age IS NULL THEN 0
            WHEN age < 24 THEN 0 WHEN age <= 53 THEN 3 WHEN age <= 77 THEN 6 WHEN age <= 89 THEN 9
            ELSE 7 END AS age_score,
        CASE WHEN gcs_min IS NULL THEN 0
            WHEN gcs_min <= 7 THEN 10 WHEN gcs_min < 14 THEN 4 WHEN gcs_min = 14 THEN 3 ELSE 0 END AS gcs_score,
        CASE WHEN hr_max IS NULL THEN 0
            WHEN hr_max > 125 THEN 6 WHEN hr_min < 33 THEN 4
            WHEN hr_max >= 107 THEN 3 WHEN hr_max >= 89 THEN 1 ELSE 0 END AS heart_rate_score,
        CASE WHEN mbp_min IS NULL THEN 0
            WHEN mbp_min < 20.65 THEN 4 WHEN mbp_min < 51 THEN 3 WHEN mbp_max > 143.44 THEN 3
            WHEN mbp_min < 61.33 THEN 2 ELSE 0 END AS mbp_score,
        CASE WHEN rr_min IS NULL THEN 0
            WHEN rr_min < 6 THEN 10 WHEN rr_max > 44 THEN 9 WHEN rr_max > 30 THEN 6
            WHEN rr_max > 22 THEN 1 WHEN rr_min < 13 THEN 1 ELSE 0 END AS resp_rate_score,
        CASE WHEN temp_max IS NULL THEN 0
            WHEN temp_max > 39.88 THEN 6
            WHEN temp_min >= 33.22 AND temp_min <= 35.93 THEN 4
            WHEN temp_max >= 33.22 AND temp_max <= 35.93 THEN 4
            WHEN temp_min < 33.22 THEN 3
            WHEN temp_min > 35.93 AND temp_min <= 36.39 THEN 2
            WHEN temp_max >= 36.89 AND temp_max <= 39.88 THEN 2
            ELSE 0 END AS temp_score,
        CASE WHEN urineoutput IS NULL THEN 0
            WHEN urineoutput < 671.09 THEN 10 WHEN urineoutput > 6896.80 THEN 8
            WHEN urineoutput <= 1426.99 THEN 5 WHEN urineoutput <= 2544.14 THEN 1 ELSE 0 END AS urineoutput_score,
        CASE WHEN mechvent = 1 THEN 9 ELSE 0 END AS mechvent_score,
        CASE WHEN electivesurgery = 1 THEN 0 ELSE 6 END AS electivesurgery_score
    FROM cohort
)
SELECT patientunitstayid, uniquepid, patienthealthsystemstayid,
    preiculos_score + age_score + gcs_score + heart_rate_score + mbp_score + resp_rate_score
        + temp_score + urineoutput_score + mechvent_score + electivesurgery_score AS oasis,
    preiculos_score, age_score, gcs_score, heart_rate_score, mbp_score, resp_rate_score,
    temp_score, urineoutput_score, mechvent_score, electivesurgery_score
FROM scorecomp
