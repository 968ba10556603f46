-- Concept: eicu-gcs
-- Definition: reference output of task eicu-gcs: the lowest Glasgow Coma Scale of each eICU
--   unit stay from 6 hours before to 24 hours after unit admission (nurse charting offsets
--   -360 to 1440 minutes, both included), one row per unit stay. Charts come from nurse
--   charting categories 'Scores' and 'Other Vital Signs and Infusions' (labels 'Glasgow coma
--   score' GCS Total/Motor/Verbal/Eyes and 'Score (Glasgow Coma Scale)' Value), the lowest
--   value per offset. The total of a chart is the charted total when it lies within 3-15, else
--   eyes + motor + verbal with an uncharted component counted normal (4/6/5); the lowest
--   total wins, ties to the earliest offset. Its components are reported as charted, an
--   uncharted one as normal (motor 6, verbal 5, eyes 4); a stay without GCS is 15 (6/5/4).
-- Source: Teasdale & Jennett 1974; eicu-code pivoted-gcs; the anchor is M4Bench 0.5.3
--   benchmark/ground_truth/gcs.sql.
-- Grain: patientunitstayid
-- Deviations: from gcs_first_day (clinbench's eICU concept), only the two nurse-charting
--   categories above are read, components outside their scale are kept (as eicu-code), and a
--   component missing from the lowest chart is reported normal even when the chart's total
--   was charted (gcs_first_day leaves it empty).
WITH nc AS (
    SELECT patientunitstayid, nursingchartoffset AS chartoffset,
        MIN(CASE WHEN ((nursingchartcelltypevallabel = 'Glasgow coma score' AND nursingchartcelltypevalname = 'GCS Total')
                OR (nursingchartcelltypevallabel = 'Score (Glasgow Coma Scale)' AND nursingchartcelltypevalname = 'Value'))
            THEN TRY_CAST(nursingchartvalue AS DECIMAL(18, 3)) END) AS gcs,
        MIN(CASE WHEN nursingchartcelltypevallabel = 'Glasgow coma score' AND nursingchartcelltypevalname = 'Motor'
            THEN TRY_CAST(nursingchartvalue AS DECIMAL(18, 3)) END) AS gcsmotor,
        MIN(CASE WHEN nursingchartcelltypevallabel = 'Glasgow coma score' AND nursingchartcelltypevalname = 'Verbal'
            THEN TRY_CAST(nursingchartvalue AS DECIMAL(18, 3)) END) AS gcsverbal,
        MIN(CASE WHEN nursingchartcelltypevallabel = 'Glasgow coma score' AND nursingchartcelltypevalname = 'Eyes'
            THEN TRY_CAST(nursingchartvalue AS DECIMAL(18, 3)) END) AS gcseyes
    FROM eicu_crd.nursecharting
    WHERE nursingchartcelltypecat IN ('Scores', 'Other Vital Signs and Infusions')
    GROUP BY patientunitstayid, nursingchartoffset
),
charts AS (
    SELECT patientunitstayid, chartoffset, gcsmotor, gcsverbal, gcseyes,
        COALESCE(CASE WHEN gcs > 2 AND gcs < 16 THEN gcs END,
            COALESCE(gcseyes, 4) + COALESCE(gcsmotor, 6) + COALESCE(gcsverbal, 5)) AS gcs_total
    FROM nc
    WHERE (gcs IS NOT NULL OR gcsmotor IS NOT NULL OR gcsverbal IS NOT NULL OR gcseyes IS NOT NULL)
        AND chartoffset >= -360 AND chartoffset <= 1440
),
lowest AS (
    SELECT * FROM charts
    QUALIFY ROW_NUMBER() OVER (PARTITION BY patientunitstayid ORDER BY gcs_total, chartoffset) = 1
)
SELECT p.patientunitstayid, p.uniquepid, p.patienthealthsystemstayid,
    CAST(COALESCE(l.gcs_total, 15) AS INTEGER) AS gcs_min,
    CAST(COALESCE(l.gcsmotor, 6) AS INTEGER) AS gcs_motor,
    CAST(COALESCE(l.gcsverbal, 5) AS INTEGER) AS gcs_verbal,
    CAST(COALESCE(l.gcseyes, 4) AS INTEGER) AS gcs_eyes
FROM eicu_crd.patient AS p
LEFT JOIN lowest AS l ON l.patientunitstayid = p.patientunitstayid
