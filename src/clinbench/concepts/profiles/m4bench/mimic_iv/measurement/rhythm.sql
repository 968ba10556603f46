-- Concept: rhythm
-- Definition: Heart rhythm and ectopy per subject and charting time: the heart rhythm
--   (220048; the alphabetically last of those charted at that time), and the ectopy
--   type / frequency (224650, 224651) and secondary ectopy type / frequency (226479, 226480).
--   Only chartings attached to an ICU stay count.
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   measurement/rhythm, as `m4 init-derived mimic-iv` builds it.
-- Grain: subject_id, charttime
-- Deviations: differs from the mimic-code profile in heart_rhythm: M4's copy keeps the
--   alphabetically last of the rhythms charted at one time (MAX), not all of them joined by '; '.
-- Rewritten for speed with identical rows (the 5 items as ranges the scan filters on, not an IN join; 0.0135 -> 0.0110 s CPU at 2,000 patients;
--   itemid is INTEGER, so each BETWEEN holds exactly the listed items, and NULL fails both forms).
SELECT
    subject_id
    , charttime
    , MAX(CASE WHEN itemid = 220048 THEN value END) AS heart_rhythm
    , MAX(CASE WHEN itemid = 224650 THEN value END) AS ectopy_type
    , MAX(CASE WHEN itemid = 224651 THEN value END) AS ectopy_frequency
    , MAX(CASE WHEN itemid = 226479 THEN value END) AS ectopy_type_secondary
    , MAX(CASE WHEN itemid = 226480 THEN value END) AS ectopy_frequency_secondary
FROM mimiciv_icu.chartevents
WHERE stay_id IS NOT NULL
    AND (itemid = 220048 OR itemid BETWEEN 224650 AND 224651 OR itemid BETWEEN 226479 AND 226480)
GROUP BY subject_id, charttime
