-- Concept: chemistry
-- Definition: Blood chemistry per lab specimen: albumin, globulin, total protein, anion gap,
--   bicarbonate, BUN, calcium, chloride, creatinine, glucose, sodium, potassium. Values
--   <= 0 are errors (except anion gap, which can be negative); implausible highs are dropped
--   (albumin/globulin > 10, total protein > 20, BUN > 300, creatinine > 150, sodium > 200,
--   potassium > 30, the rest > 10000). Blood gases are not included (see bg).
-- Source: mimic-code measurement/chemistry (MIT-LCP).
-- Grain: specimen_id
-- Deviations: none.
SELECT
    MAX(subject_id) AS subject_id
    , MAX(hadm_id) AS hadm_id
    , MAX(charttime) AS charttime
    , specimen_id
    , MAX(CASE WHEN itemid = 50862 AND valuenum <= 10 THEN valuenum END) AS albumin
    , MAX(CASE WHEN itemid = 50930 AND valuenum <= 10 THEN valuenum END) AS globulin
    , MAX(CASE WHEN itemid = 50976 AND valuenum <= 20 THEN valuenum END) AS total_protein
    , MAX(CASE WHEN itemid = 50868 AND valuenum <= 10000 THEN valuenum END) AS aniongap
    , MAX(CASE WHEN itemid = 50882 AND valuenum <= 10000 THEN valuenum END) AS bicarbonate
    , MAX(CASE WHEN itemid = 51006 AND valuenum <= 300 THEN valuenum END) AS bun
    , MAX(CASE WHEN itemid = 50893 AND valuenum <= 10000 THEN valuenum END) AS calcium
    , MAX(CASE WHEN itemid = 50902 AND valuenum <= 10000 THEN valuenum END) AS chloride
    , MAX(CASE WHEN itemid = 50912 AND valuenum <= 150 THEN valuenum END) AS creatinine
    , MAX(CASE WHEN itemid = 50931 AND valuenum <= 10000 THEN valuenum END) AS glucose
    , MAX(CASE WHEN itemid = 50983 AND valuenum <= 200 THEN valuenum END) AS sodium
    , MAX(CASE WHEN itemid = 50971 AND valuenum <= 30 THEN valuenum END) AS potassium
FROM mimiciv_hosp.labevents
WHERE itemid IN (
        50862 -- albumin
        , 50930 -- globulin
        , 50976 -- total protein
        , 50868 -- anion gap
        , 50882 -- bicarbonate
        , 50893 -- calcium
        , 50912 -- creatinine
        , 50902 -- chloride
        , 50931 -- glucose
        , 50971 -- potassium
        , 50983 -- sodium
        , 51006 -- urea nitrogen
    )
    AND valuenum IS NOT NULL
    AND (valuenum > 0 OR itemid = 50868) -- only anion gap may be zero or negative
GROUP BY specimen_id
