-- Concept: sofa
-- Definition: Sequential Organ Failure Assessment for every hour of an ICU stay: each organ
--   component (respiration, coagulation, liver, cardiovascular, cns, renal) scored from the
--   worst value charted in that hour, and the *_24hours columns holding the worst component of
--   the last 24 hourly rows (missing = 0), summed into sofa_24hours.
-- Source: Vincent et al., Intensive Care Med 1996; MIT-LCP mimic-code score/sofa (hourly grid
--   from icustay_hourly, P/F split by invasive ventilation, 24 h urine output only when 22-30 h
--   are covered, cardiovascular from norepinephrine, epinephrine, dopamine, dobutamine).
-- Grain: stay_id, hr
-- Deviations: vasopressor rates are compared after rounding to 6 decimal places, so a charted
--   norepinephrine of 0.1 mcg/kg/min scores 3 whether the source column was loaded as 32- or
--   64-bit (> 0.1 scores 4). Rows with hr < 0 are kept out of the output, as in the public
--   code, but still feed the first rolling window.
WITH co AS (
    SELECT ih.stay_id, ie.hadm_id, ih.hr,
        ih.endtime - INTERVAL 1 HOUR AS starttime, ih.endtime
    FROM mimiciv_derived.icustay_hourly AS ih
    INNER JOIN mimiciv_icu.icustays AS ie ON ie.stay_id = ih.stay_id
),
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
    SELECT co.stay_id, co.hr, MIN(v.mbp) AS meanbp_min
    FROM co LEFT JOIN mimiciv_derived.vitalsign AS v
        ON v.stay_id = co.stay_id AND v.charttime > co.starttime AND v.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
gcs AS (
    SELECT co.stay_id, co.hr, MIN(g.gcs) AS gcs_min
    FROM co LEFT JOIN mimiciv_derived.gcs AS g
        ON g.stay_id = co.stay_id AND g.charttime > co.starttime AND g.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
bili AS (
    SELECT co.stay_id, co.hr, MAX(enz.bilirubin_total) AS bilirubin_max
    FROM co LEFT JOIN mimiciv_derived.enzyme AS enz
        ON enz.hadm_id = co.hadm_id AND enz.charttime > co.starttime AND enz.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
cr AS (
    SELECT co.stay_id, co.hr, MAX(chem.creatinine) AS creatinine_max
    FROM co LEFT JOIN mimiciv_derived.chemistry AS chem
        ON chem.hadm_id = co.hadm_id AND chem.charttime > co.starttime AND chem.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
plt AS (
    SELECT co.stay_id, co.hr, MIN(cbc.platelet) AS platelet_min
    FROM co LEFT JOIN mimiciv_derived.complete_blood_count AS cbc
        ON cbc.hadm_id = co.hadm_id AND cbc.charttime > co.starttime AND cbc.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
pf AS (
    SELECT co.stay_id, co.hr,
        MIN(pafi.pao2fio2ratio_novent) AS pao2fio2ratio_novent,
        MIN(pafi.pao2fio2ratio_vent) AS pao2fio2ratio_vent
    FROM co LEFT JOIN pafi
        ON pafi.stay_id = co.stay_id AND pafi.charttime > co.starttime AND pafi.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
uo AS (
    SELECT co.stay_id, co.hr,
        MAX(CASE WHEN u.uo_tm_24hr >= 22 AND u.uo_tm_24hr <= 30
            THEN u.urineoutput_24hr / u.uo_tm_24hr * 24 END) AS uo_24hr
    FROM co LEFT JOIN mimiciv_derived.urine_output_rate AS u
        ON u.stay_id = co.stay_id AND u.charttime > co.starttime AND u.charttime <= co.endtime
    GROUP BY co.stay_id, co.hr
),
vaso AS (
    -- an infusion counts for the hour whose end it spans
    SELECT co.stay_id, co.hr,
        ROUND(MAX(epi.vaso_rate), 6) AS rate_epinephrine,
        ROUND(MAX(nor.vaso_rate), 6) AS rate_norepinephrine,
        ROUND(MAX(dop.vaso_rate), 6) AS rate_dopamine,
        ROUND(MAX(dob.vaso_rate), 6) AS rate_dobutamine
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
),
scorecomp AS (
    SELECT co.stay_id, co.hr, co.starttime, co.endtime,
        pf.pao2fio2ratio_novent, pf.pao2fio2ratio_vent,
        vaso.rate_epinephrine, vaso.rate_norepinephrine, vaso.rate_dopamine, vaso.rate_dobutamine,
        vs.meanbp_min, gcs.gcs_min, uo.uo_24hr,
        bili.bilirubin_max, cr.creatinine_max, plt.platelet_min
    FROM co
    LEFT JOIN vs ON vs.stay_id = co.stay_id AND vs.hr = co.hr
    LEFT JOIN gcs ON gcs.stay_id = co.stay_id AND gcs.hr = co.hr
    LEFT JOIN bili ON bili.stay_id = co.stay_id AND bili.hr = co.hr
    LEFT JOIN cr ON cr.stay_id = co.stay_id AND cr.hr = co.hr
    LEFT JOIN plt ON plt.stay_id = co.stay_id AND plt.hr = co.hr
    LEFT JOIN pf ON pf.stay_id = co.stay_id AND pf.hr = co.hr
    LEFT JOIN uo ON uo.stay_id = co.stay_id AND uo.hr = co.hr
    LEFT JOIN vaso ON vaso.stay_id = co.stay_id AND vaso.hr = co.hr
),
scorecalc AS (
    -- a component is NULL when none of its inputs was charted in the hour
    SELECT scorecomp.*,
        CASE
            WHEN pao2fio2ratio_vent < 100 THEN 4
            WHEN pao2fio2ratio_vent < 200 THEN 3
            WHEN pao2fio2ratio_novent < 300 THEN 2
            WHEN pao2fio2ratio_vent < 300 THEN 2
            WHEN pao2fio2ratio_novent < 400 THEN 1
            WHEN pao2fio2ratio_vent < 400 THEN 1
            WHEN COALESCE(pao2fio2ratio_vent, pao2fio2ratio_novent) IS NULL THEN NULL
            ELSE 0
        END AS respiration,
        CASE
            WHEN platelet_min < 20 THEN 4
            WHEN platelet_min < 50 THEN 3
            WHEN platelet_min < 100 THEN 2
            WHEN platelet_min < 150 THEN 1
            WHEN platelet_min IS NULL THEN NULL
            ELSE 0
        END AS coagulation,
        CASE
            WHEN bilirubin_max >= 12.0 THEN 4
            WHEN bilirubin_max >= 6.0 THEN 3
            WHEN bilirubin_max >= 2.0 THEN 2
            WHEN bilirubin_max >= 1.2 THEN 1
            WHEN bilirubin_max IS NULL THEN NULL
            ELSE 0
        END AS liver,
        CASE
            WHEN rate_dopamine > 15 OR rate_epinephrine > 0.1 OR rate_norepinephrine > 0.1 THEN 4
            -- a zero rate is a paused infusion, not a dose <= 0.1
            WHEN rate_dopamine > 5 OR (rate_epinephrine > 0 AND rate_epinephrine <= 0.1)
                OR (rate_norepinephrine > 0 AND rate_norepinephrine <= 0.1) THEN 3
            WHEN rate_dopamine > 0 OR rate_dobutamine > 0 THEN 2
            WHEN meanbp_min < 70 THEN 1
            WHEN COALESCE(meanbp_min, rate_dopamine, rate_dobutamine, rate_epinephrine, rate_norepinephrine) IS NULL THEN NULL
            ELSE 0
        END AS cardiovascular,
        CASE
            WHEN gcs_min >= 13 AND gcs_min <= 14 THEN 1
            WHEN gcs_min >= 10 AND gcs_min <= 12 THEN 2
            WHEN gcs_min >= 6 AND gcs_min <= 9 THEN 3
            WHEN gcs_min < 6 THEN 4
            WHEN gcs_min IS NULL THEN NULL
            ELSE 0
        END AS cns,
        CASE
            WHEN creatinine_max >= 5.0 THEN 4
            WHEN uo_24hr < 200 THEN 4
            WHEN creatinine_max >= 3.5 THEN 3
            WHEN uo_24hr < 500 THEN 3
            WHEN creatinine_max >= 2.0 THEN 2
            WHEN creatinine_max >= 1.2 THEN 1
            WHEN COALESCE(uo_24hr, creatinine_max) IS NULL THEN NULL
            ELSE 0
        END AS renal
    FROM scorecomp
),
score_final AS (
    SELECT s.*,
        COALESCE(MAX(respiration) OVER w, 0) AS respiration_24hours,
        COALESCE(MAX(coagulation) OVER w, 0) AS coagulation_24hours,
        COALESCE(MAX(liver) OVER w, 0) AS liver_24hours,
        COALESCE(MAX(cardiovascular) OVER w, 0) AS cardiovascular_24hours,
        COALESCE(MAX(cns) OVER w, 0) AS cns_24hours,
        COALESCE(MAX(renal) OVER w, 0) AS renal_24hours
    FROM scorecalc AS s
    WINDOW w AS (PARTITION BY stay_id ORDER BY hr ROWS BETWEEN 23 PRECEDING AND CURRENT ROW)
)
SELECT stay_id, hr, starttime, endtime,
    pao2fio2ratio_novent, pao2fio2ratio_vent,
    rate_epinephrine, rate_norepinephrine, rate_dopamine, rate_dobutamine,
    meanbp_min, gcs_min, uo_24hr, bilirubin_max, creatinine_max, platelet_min,
    respiration, coagulation, liver, cardiovascular, cns, renal,
    respiration_24hours, coagulation_24hours, liver_24hours, cardiovascular_24hours,
    cns_24hours, renal_24hours,
    respiration_24hours + coagulation_24hours + liver_24hours + cardiovascular_24hours
        + cns_24hours + renal_24hours AS sofa_24hours
FROM score_final
WHERE hr >= 0
