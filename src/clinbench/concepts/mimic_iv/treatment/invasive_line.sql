-- Concept: invasive_line
-- Definition: Invasive lines and catheters placed in the ICU (procedureevents items for
--   arterial, central venous, PA, dialysis, PICC, IABP, introducer and similar lines), one row
--   per procedure, with the line type from d_items.label and the site from location, each
--   with spelling variants merged (e.g. 'A-Line' -> 'Arterial', 'Left Femoral.' -> 'Left
--   Femoral'), and the start and end times.
-- Source: mimic-code treatment/invasive_line (MIT-LCP, commit 8bcbd190, concepts_duckdb).
-- Grain: one row per procedureevents row (stay_id, starttime, line_type, line_site); not unique
-- Deviations: none.
WITH lines AS (
    SELECT
        pe.stay_id
        , di.label AS line_type
        , pe.location AS line_site
        , pe.starttime
        , pe.endtime
    FROM mimiciv_icu.procedureevents AS pe
    INNER JOIN mimiciv_icu.d_items AS di
        ON pe.itemid = di.itemid
    WHERE pe.itemid IN (227719, 225752, 224269, 224267, 224270, 224272, 226124, 228169, 225202, 228286, 225204, 224263, 224560, 224264, 225203, 224273, 225789, 225761, 228201, 228202, 224268, 225199, 225315, 225205)
)

SELECT
    stay_id
    , CASE
        WHEN line_type IN ('Arterial Line', 'A-Line') THEN 'Arterial'
        WHEN line_type IN ('CCO PA Line', 'CCO PAC') THEN 'Continuous Cardiac Output PA'
        WHEN line_type IN ('Dialysis Catheter', 'Dialysis Line') THEN 'Dialysis'
        WHEN line_type IN ('Hickman', 'Tunneled (Hickman) Line') THEN 'Hickman'
        WHEN line_type IN ('IABP', 'IABP line') THEN 'IABP'
        WHEN line_type IN ('Multi Lumen', 'Multi-lumen') THEN 'Multi Lumen'
        WHEN line_type IN ('PA Catheter', 'PA line') THEN 'PA'
        WHEN line_type IN ('PICC Line', 'PICC line') THEN 'PICC'
        WHEN line_type IN ('Pre-Sep Catheter', 'Presep Catheter') THEN 'Pre-Sep'
        WHEN line_type IN ('Trauma Line', 'Trauma line') THEN 'Trauma'
        WHEN line_type IN ('Triple Introducer', 'TripleIntroducer') THEN 'Triple Introducer'
        WHEN line_type IN ('Portacath', 'Indwelling Port (PortaCath)') THEN 'Portacath'
        ELSE line_type
    END AS line_type
    , CASE
        WHEN line_site IN ('Left Antecub', 'Left Antecube') THEN 'Left Antecube'
        WHEN line_site IN ('Left Axilla', 'Left Axilla.') THEN 'Left Axilla'
        WHEN line_site IN ('Left Brachial', 'Left Brachial.') THEN 'Left Brachial'
        WHEN line_site IN ('Left Femoral', 'Left Femoral.') THEN 'Left Femoral'
        WHEN line_site IN ('Right Antecub', 'Right Antecube') THEN 'Right Antecube'
        WHEN line_site IN ('Right Axilla', 'Right Axilla.') THEN 'Right Axilla'
        WHEN line_site IN ('Right Brachial', 'Right Brachial.') THEN 'Right Brachial'
        WHEN line_site IN ('Right Femoral', 'Right Femoral.') THEN 'Right Femoral'
        ELSE line_site
    END AS line_site
    , starttime
    , endtime
FROM lines
