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
    WHERE bg.specimen = 'ART.'
),
vs AS (
    SELECT stay_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(mbp) AS meanbp_min
    FROM mimiciv_derived.vitalsign
    GROUP BY ALL
),
gcs AS (
    SELECT stay_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(gcs) AS gcs_min
    FROM mimiciv_derived.gcs
    GROUP BY ALL
),
bili AS (
    SELECT hadm_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MAX(bilirubin_total) AS bilirubin_max
    FROM mimiciv_derived.enzyme
    GROUP BY ALL
),
cr AS (
    SELECT hadm_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MAX(creatinine) AS creatinine_max
    FROM mimiciv_derived.chemistry
    GROUP BY ALL
),
plt AS (
    SELECT hadm_id, date_trunc('hour', charttime) + CASE WHEN date_trunc('hour', charttime) = charttime
            THEN INTERVAL 0 HOUR ELSE INTERVAL 1 HOUR END AS endtime,
        MIN(platelet) AS platelet_min
    FROM mimiciv_derived.complete_blood_count
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
        MAX(CASE WHEN uo_tm_24hr >= 22 AND uo_tm_24hr <= 30
            THEN urineoutput_24hr / uo_tm_24hr * 24 END) AS uo_24hr
    FROM mimiciv_derived.urine_output_rate
    GROUP BY ALL
),
vaso AS (
    -- an infusion counts for the hour whose end it spans
    SELECT co.stay_id, co.hr,
        MAX(CAST(epi.vaso_rate AS REAL)) AS rate_epinephrine,
        MAX(CAST(nor.vaso_rate AS REAL)) AS rate_norepinephrine,
        MAX(CAST(dop.vaso_rate AS REAL)) AS rate_dopamine,
        MAX(CAST(dob.vaso_rate AS REAL)) AS rate_dobutamine
    FROM co
    LEFT JOIN mimiciv_derived.epinephrine AS epi
        ON epi.stay_id = co.stay_id AND co.endtime > epi.starttime AND co.endtime <= epi.endtime
    LEFT JOIN mimiciv_derived.norepinephrine AS nor
        ON nor.stay_id = co.stay_id AND co.endtime > nor.starttime AND co.endtime <= nor.endtime
    LEFT JOIN mimiciv_derived.dopamine AS dop
        ON dop.stay_id = co.stay_id AND co.endtime > dop.starttime AND co.endtime <= dop.endtime
    LEFT JOIN mimiciv_derived.dobutamine AS dob
        ON dob.stay_id = co.stay_id AND co.endtime > dob.starttime AND co.endtime <= dob.endtime
    WHERE epi.stay_id IS NOT NULL OR nor.stay_id IS NOT NULL
        OR dop.stay_id IS NOT NULL OR dob.stay_id IS NOT NULL
    GROUP BY co.stay_id, co.hr
)
SELECT co.stay_id, co.hr, co.starttime, co.endtime,
    pf.pao2fio2ratio_novent, pf.pao2fio2ratio_vent,
    vaso.rate_epinephrine, vaso.rate_norepinephrine, vaso.rate_dopamine, vaso.rate_dobutamine,
    vs.meanbp_min, gcs.gcs_min, uo.uo_24hr,
    bili.bilirubin_max, cr.creatinine_max, plt.platelet_min
FROM co
LEFT JOIN vs ON vs.stay_id = co.stay_id AND vs.endtime = co.endtime
LEFT JOIN gcs ON gcs.stay_id = co.stay_id AND gcs.endtime = co.endtime
LEFT JOIN bili ON bili.hadm_id = co.hadm_id AND bili.endtime = co.endtime
LEFT JOIN cr ON cr.hadm_id = co.hadm_id AND cr.endtime = co.endtime
LEFT JOIN plt ON plt.hadm_id = co.hadm_id AND plt.endtime = co.endtime
LEFT JOIN pf ON pf.stay_id = co.stay_id AND pf.endtime = co.endtime
LEFT JOIN uo ON uo.stay_id = co.stay_id AND uo.endtime = co.endtime
LEFT JOIN vaso ON vaso.stay_id = co.stay_id AND vaso.hr = co.hr
