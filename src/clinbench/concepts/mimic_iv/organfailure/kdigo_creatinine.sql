-- Concept: kdigo_creatinine
-- Definition: every serum creatinine measured from 7 days before ICU admission to ICU discharge,
--   with the lowest creatinine of the previous 48 hours and of the previous 7 days (the two
--   KDIGO reference values).
-- Source: KDIGO Clinical Practice Guideline for Acute Kidney Injury (2012); MIT-LCP mimic-code
--   organfailure/kdigo_creatinine (lab item 50912, values above 150 mg/dL discarded).
-- Grain: stay_id, charttime; a stay without a creatinine in that window has one row with
--   charttime and every value NULL (mimic-code's LEFT JOIN), which kdigo_stages carries on.
-- Deviations: none. Labs are matched by subject (as in the public code), so outpatient
--   creatinine without an admission can serve as the reference value; simultaneous values are
--   averaged.
WITH cr AS (
    -- one value per stay and time: simultaneous measurements are averaged; a stay without any keeps one empty row
    SELECT ie.hadm_id, ie.stay_id, le.charttime, AVG(CAST(le.valuenum AS DECIMAL(38, 9))) AS creat
    FROM mimiciv_icu.icustays AS ie
    LEFT JOIN mimiciv_hosp.labevents AS le
        ON le.subject_id = ie.subject_id
        AND le.itemid = 50912
        AND le.valuenum IS NOT NULL
        AND le.valuenum <= 150
        AND le.charttime >= ie.intime - INTERVAL 7 DAY
        AND le.charttime <= ie.outtime
    GROUP BY ie.hadm_id, ie.stay_id, le.charttime
),
low_48h AS (
    SELECT cur.stay_id, cur.charttime, MIN(prev.creat) AS creat_low_past_48hr
    FROM cr AS cur
    LEFT JOIN cr AS prev
        ON prev.stay_id = cur.stay_id
        AND prev.charttime < cur.charttime
        AND prev.charttime >= cur.charttime - INTERVAL 48 HOUR
    GROUP BY cur.stay_id, cur.charttime
),
low_7d AS (
    SELECT cur.stay_id, cur.charttime, MIN(prev.creat) AS creat_low_past_7day
    FROM cr AS cur
    LEFT JOIN cr AS prev
        ON prev.stay_id = cur.stay_id
        AND prev.charttime < cur.charttime
        AND prev.charttime >= cur.charttime - INTERVAL 7 DAY
    GROUP BY cur.stay_id, cur.charttime
)
SELECT cr.hadm_id, cr.stay_id, cr.charttime, cr.creat,
    low_48h.creat_low_past_48hr, low_7d.creat_low_past_7day
FROM cr
LEFT JOIN low_48h ON low_48h.stay_id = cr.stay_id AND low_48h.charttime = cr.charttime
LEFT JOIN low_7d ON low_7d.stay_id = cr.stay_id AND low_7d.charttime = cr.charttime
