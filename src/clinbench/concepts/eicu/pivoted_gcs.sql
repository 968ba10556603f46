-- Concept: pivoted_gcs
-- Definition: Glasgow Coma Scale charted by nurses in eICU, one row per unit stay and charting
--   offset (minutes from unit admission): the charted total (kept only within 3-15) and the
--   motor (1-6), verbal (1-5) and eye (1-4) components (out-of-range values dropped);
--   simultaneous charts keep the lowest value.
-- Source: Teasdale & Jennett, Lancet 1974; MIT-LCP eicu-code concepts/pivoted/pivoted-gcs
--   (nurseCharting labels 'Glasgow coma score' GCS Total/Motor/Verbal/Eyes and
--   'Score (Glasgow Coma Scale)' Value).
-- Grain: patientunitstayid, chartoffset
-- Deviations: components outside their scale are dropped (the public code keeps them).
WITH nc AS (
    SELECT patientunitstayid, nursingchartoffset AS chartoffset,
        nursingchartcelltypevallabel AS label, nursingchartcelltypevalname AS name,
        TRY_CAST(nursingchartvalue AS DOUBLE) AS value
    FROM eicu_crd.nursecharting
    WHERE nursingchartcelltypevallabel IN ('Glasgow coma score', 'Score (Glasgow Coma Scale)')
),
pivoted AS (
    SELECT patientunitstayid, chartoffset,
        MIN(CASE WHEN (label = 'Glasgow coma score' AND name = 'GCS Total')
            OR (label = 'Score (Glasgow Coma Scale)' AND name = 'Value') THEN value END) AS gcs,
        MIN(CASE WHEN label = 'Glasgow coma score' AND name = 'Motor' THEN value END) AS gcsmotor,
        MIN(CASE WHEN label = 'Glasgow coma score' AND name = 'Verbal' THEN value END) AS gcsverbal,
        MIN(CASE WHEN label = 'Glasgow coma score' AND name = 'Eyes' THEN value END) AS gcseyes
    FROM nc
    GROUP BY patientunitstayid, chartoffset
),
checked AS (
    SELECT patientunitstayid, chartoffset,
        CASE WHEN gcs >= 3 AND gcs <= 15 THEN gcs END AS gcs,
        CASE WHEN gcsmotor >= 1 AND gcsmotor <= 6 THEN gcsmotor END AS gcsmotor,
        CASE WHEN gcsverbal >= 1 AND gcsverbal <= 5 THEN gcsverbal END AS gcsverbal,
        CASE WHEN gcseyes >= 1 AND gcseyes <= 4 THEN gcseyes END AS gcseyes
    FROM pivoted
)
SELECT patientunitstayid, chartoffset, gcs, gcsmotor, gcsverbal, gcseyes
FROM checked
WHERE gcs IS NOT NULL OR gcsmotor IS NOT NULL OR gcsverbal IS NOT NULL OR gcseyes IS NOT NULL
