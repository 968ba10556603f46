-- Concept: sofa_hourly_worst
-- Definition: the worst value of each SOFA input in every hour of an ICU stay, the input of the
--   hourly sofa: lowest PaO2/FiO2 (split by invasive ventilation), highest rate of each
--   vasopressor whose infusion spans the hour's end, lowest MAP, lowest GCS, 24 h urine output
--   scaled to a day, highest bilirubin and creatinine, lowest platelets. NULL when unmeasured.
-- Source: Vincent et al., Intensive Care Med 1996; mimic-code score/sofa (MIT-LCP, commit
--   8bcbd190, concepts_duckdb; hourly grid
--   from icustay_hourly, P/F split by invasive ventilation, 24 h urine output only when 22-30 h
--   are covered, cardiovascular from norepinephrine, epinephrine, dopamine, dobutamine).
-- Grain: stay_id, hr (every hour of icustay_hourly, hr < 0 included)
-- Deviations: none. Rates are 32-bit REAL, the type of mimic-code's DuckDB columns, so a charted
--   0.1 mcg/kg/min compares equal to 0.1 as it does there.
--   Rewritten for speed with identical rows (with sofa_points' NULL-first CASEs, the sofa
--   statement 0.186 -> 0.169 s CPU at 2,000 patients, m4bench; 0.186 -> 0.165 s, mimic-code):
--   rows without the measured value are dropped before each hourly MIN/MAX (a group left empty
--   would only have given the NULL that the LEFT JOIN gives), the hourly labs and the sparse stay
--   inputs are joined to each other (FULL JOIN, each keyed once) before one join to the hours, and
--   the four vasopressors are one range join (the MAX of each over the rows spanning an hour end,
--   as over the product of four LEFT JOINs). Checked: row hashes and types of every table before
--   and after on synthetic patients (seeds 0 and 7 at 2,000, seed 1 at 200; all profiles), and
--   the demo anchor tests.
-- Helper: clinbench's own intermediate, read by sofa_points, sofa and variant sepsis3__paused_infusions_unscored; no anchor builds it.
WITH co AS (
    SELECT ih.stay_id, ie.hadm_id, ih.hr,
        ih.endtime - INTERVAL 1 HOUR AS starttime, ih.endtime
    FROM mimiciv_derived.icustay_hourly AS ih
    INNER JOIN mimiciv_icu.icustays AS ie ON ie.stay_id = ih.stay_id
),
-- Every hour of icustay_hourly ends on a clock hour, so the hour (endtime - 1 h, endtime] holding
-- a charting is the one ending at the charting rounded up to the hour: each measurement is
-- grouped by that end once, instead of joining every hour of a stay to every charting of it.
-- Chartings without the value are left out first: MIN/MAX skip NULLs, and an hour with no value
-- is NULL through the LEFT JOIN as it was through an all-NULL group.
pafi AS (
    -- a blood gas during invasive ventilation feeds the ventilated ratio
    SELECT ie.stay_id, bg.charttime,
        CASE WHEN vd.stay_id IS NULL THEN bg.pao2fio2ratio END AS pao2fio2ratio_novent,
        CASE WHEN vd.stay_id IS NOT NULL THEN bg.pao2fio2ratio END AS pao2fio2ratio_vent
    FROM mimiciv_icu.icustays AS ie
    INNER JOIN mimiciv_derived.bg AS bg ON bg.subject_id = ie.subject_id
    LEFT JOIN mimiciv_derived.ventilation AS vd
        ON vd.stay_id = ie.stay_id
        AND bg.charttime >= vd.starttime AND bg.charttime <= vd.endtime
        AND vd.ventilation_status = 'InvasiveVent'
    WHERE bg.specimen = 'ART.' AND bg.pao2fio2ratio IS NOT NULL
),
vs AS (
    SELECT stay_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(mbp) AS meanbp_min
    FROM mimiciv_derived.vitalsign
    WHERE mbp IS NOT NULL
    GROUP BY ALL
),
gcs AS (
    SELECT stay_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(gcs) AS gcs_min
    FROM mimiciv_derived.gcs
    WHERE gcs IS NOT NULL
    GROUP BY ALL
),
bili AS (
    SELECT hadm_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MAX(bilirubin_total) AS bilirubin_max
    FROM mimiciv_derived.enzyme
    WHERE bilirubin_total IS NOT NULL
    GROUP BY ALL
),
cr AS (
    SELECT hadm_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MAX(creatinine) AS creatinine_max
    FROM mimiciv_derived.chemistry
    WHERE creatinine IS NOT NULL
    GROUP BY ALL
),
plt AS (
    SELECT hadm_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(platelet) AS platelet_min
    FROM mimiciv_derived.complete_blood_count
    WHERE platelet IS NOT NULL
    GROUP BY ALL
),
pf AS (
    SELECT stay_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(pao2fio2ratio_novent) AS pao2fio2ratio_novent,
        MIN(pao2fio2ratio_vent) AS pao2fio2ratio_vent
    FROM pafi
    GROUP BY ALL
),
uo AS (
    SELECT stay_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MAX(urineoutput_24hr / uo_tm_24hr * 24) AS uo_24hr
    FROM mimiciv_derived.urine_output_rate
    WHERE uo_tm_24hr >= 22 AND uo_tm_24hr <= 30
    GROUP BY ALL
),
-- the hourly groups keyed by (hadm_id, endtime), then those keyed by (stay_id, endtime), joined to
-- each other first (each key once per group, so each value stays on its own key) and to the hours
-- once: fewer joins over every hour of every stay
labs AS (
    SELECT COALESCE(bili.hadm_id, cr.hadm_id, plt.hadm_id) AS hadm_id,
        COALESCE(bili.endtime, cr.endtime, plt.endtime) AS endtime,
        bili.bilirubin_max, cr.creatinine_max, plt.platelet_min
    FROM bili
    FULL JOIN cr ON cr.hadm_id = bili.hadm_id AND cr.endtime = bili.endtime
    FULL JOIN plt ON plt.hadm_id = COALESCE(bili.hadm_id, cr.hadm_id) AND plt.endtime = COALESCE(bili.endtime, cr.endtime)
),
sparse AS (
    SELECT COALESCE(pf.stay_id, gcs.stay_id) AS stay_id, COALESCE(pf.endtime, gcs.endtime) AS endtime,
        pf.pao2fio2ratio_novent, pf.pao2fio2ratio_vent, gcs.gcs_min
    FROM pf
    FULL JOIN gcs ON gcs.stay_id = pf.stay_id AND gcs.endtime = pf.endtime
),
vaso AS (
    -- an infusion counts for the hour whose end it spans; one range join over the four drugs' rows
    -- (the highest rate of each drug over its rows spanning the hour end, as the MAX over the
    -- product of one LEFT JOIN per drug was), infusions without a rate left out as above
    SELECT co.stay_id, co.hr,
        MAX(CAST(v.epi AS REAL)) AS rate_epinephrine,
        MAX(CAST(v.nor AS REAL)) AS rate_norepinephrine,
        MAX(CAST(v.dop AS REAL)) AS rate_dopamine,
        MAX(CAST(v.dob AS REAL)) AS rate_dobutamine
    FROM co
    INNER JOIN (
        SELECT stay_id, starttime, endtime, vaso_rate AS epi, NULL AS nor, NULL AS dop, NULL AS dob
        FROM mimiciv_derived.epinephrine WHERE vaso_rate IS NOT NULL
        UNION ALL
        SELECT stay_id, starttime, endtime, NULL, vaso_rate, NULL, NULL
        FROM mimiciv_derived.norepinephrine WHERE vaso_rate IS NOT NULL
        UNION ALL
        SELECT stay_id, starttime, endtime, NULL, NULL, vaso_rate, NULL
        FROM mimiciv_derived.dopamine WHERE vaso_rate IS NOT NULL
        UNION ALL
        SELECT stay_id, starttime, endtime, NULL, NULL, NULL, vaso_rate
        FROM mimiciv_derived.dobutamine WHERE vaso_rate IS NOT NULL
    ) AS v
        ON v.stay_id = co.stay_id AND co.endtime > v.starttime AND co.endtime <= v.endtime
    GROUP BY co.stay_id, co.hr
)
SELECT co.stay_id, co.hr, co.starttime, co.endtime,
    sparse.pao2fio2ratio_novent, sparse.pao2fio2ratio_vent,
    vaso.rate_epinephrine, vaso.rate_norepinephrine, vaso.rate_dopamine, vaso.rate_dobutamine,
    vs.meanbp_min, sparse.gcs_min, uo.uo_24hr,
    labs.bilirubin_max, labs.creatinine_max, labs.platelet_min
FROM co
LEFT JOIN vs ON vs.stay_id = co.stay_id AND vs.endtime = co.endtime
LEFT JOIN uo ON uo.stay_id = co.stay_id AND uo.endtime = co.endtime
LEFT JOIN sparse ON sparse.stay_id = co.stay_id AND sparse.endtime = co.endtime
LEFT JOIN labs ON labs.hadm_id = co.hadm_id AND labs.endtime = co.endtime
LEFT JOIN vaso ON vaso.stay_id = co.stay_id AND vaso.hr = co.hr
