-- Concept: antibiotic
-- Definition: Systemic antibiotic prescriptions: prescriptions whose drug name matches a
--   list of antibacterial (and a few antifungal) generic and brand names, excluding base
--   solutions (drug_type BASE), eye/ear/topical routes (OU, OS, OD, AU, AS, AD, TP and any
--   route containing 'ear' or 'eye') and creams, gels, ophthalmic ointments and
--   desensitisation protocols. stay_id is the ICU stay of the admission in which the
--   prescription started (intime <= starttime < outtime), else NULL.
-- Source: mimic-code medication/antibiotic (MIT-LCP, commit 8bcbd190, concepts_duckdb); Seymour et al., JAMA 2016 (suspected
--   infection = antibiotics + cultures).
-- Grain: one row per prescription (not output, as in mimic-code); subject_id, antibiotic,
--   route, starttime, stoptime not unique: a drug can be prescribed twice at once
-- Deviations: none. Public behaviour kept: nasal route NU is not excluded; a NULL route never matches.
WITH name_patterns (pattern) AS (
    -- antibacterial / antifungal generic and brand names, matched anywhere in the drug name
    VALUES
    ('%adoxa%')
    , ('%ala-tet%')
    , ('%alodox%')
    , ('%amikacin%')
    , ('%amikin%')
    , ('%amoxicill%')
    , ('%amphotericin%')
    , ('%ampicillin%')
    , ('%ancef%')
    , ('%anidulafungin%')
    , ('%augmentin%')
    , ('%avelox%')
    , ('%avidoxy%')
    , ('%axetil%')
    , ('%azactam%')
    , ('%azithromycin%')
    , ('%aztreonam%')
    , ('%bactocill%')
    , ('%bactrim%')
    , ('%bactroban%')
    , ('%bethkis%')
    , ('%biaxin%')
    , ('%bicillin l-a%')
    , ('%cayston%')
    , ('%cedax%')
    , ('%cefaclor%')
    , ('%cefadroxil%')
    , ('%cefazolin%')
    , ('%cefdinir%')
    , ('%cefditoren%')
    , ('%cefepime%')
    , ('%cefotan%')
    , ('%cefotaxime%')
    , ('%cefotetan%')
    , ('%cefoxitin%')
    , ('%cefpirome%')
    , ('%cefpodoxime%')
    , ('%cefprozil%')
    , ('%ceftaroline%')
    , ('%ceftazidime%')
    , ('%ceftibuten%')
    , ('%ceftin%')
    , ('%ceftriaxone%')
    , ('%cefuroxime%')
    , ('%cephalexin%')
    , ('%cephalothin%')
    , ('%cephapririn%')
    , ('%chloramphenicol%')
    , ('%cipro%')
    , ('%ciprofloxacin%')
    , ('%claforan%')
    , ('%clarithromycin%')
    , ('%clavulanate%')
    , ('%cleocin%')
    , ('%clindamycin%')
    , ('%cubicin%')
    , ('%dicloxacillin%')
    , ('%dirithromycin%')
    , ('%doryx%')
    , ('%doxycy%')
    , ('%duricef%')
    , ('%dynacin%')
    , ('%ery-tab%')
    , ('%eryc%')
    , ('%eryped%')
    , ('%erythrocin%')
    , ('%erythromycin%')
    , ('%factive%')
    , ('%flagyl%')
    , ('%fortaz%')
    , ('%furadantin%')
    , ('%garamycin%')
    , ('%gentamicin%')
    , ('%kanamycin%')
    , ('%keflex%')
    , ('%kefzol%')
    , ('%ketek%')
    , ('%levaquin%')
    , ('%levofloxacin%')
    , ('%lincocin%')
    , ('%linezolid%')
    , ('%macrobid%')
    , ('%macrodantin%')
    , ('%maxipime%')
    , ('%mefoxin%')
    , ('%meropenem%')
    , ('%methicillin%')
    , ('%metronidazole%')
    , ('%minocin%')
    , ('%minocycline%')
    , ('%monodox%')
    , ('%monurol%')
    , ('%morgidox%')
    , ('%moxatag%')
    , ('%moxifloxacin%')
    , ('%mupirocin%')
    , ('%myrac%')
    , ('%nafcillin%')
    , ('%neomycin%')
    , ('%nicazel doxy 30%')
    , ('%nitrofurantoin%')
    , ('%norfloxacin%')
    , ('%noroxin%')
    , ('%ocudox%')
    , ('%ofloxacin%')
    , ('%omnicef%')
    , ('%oracea%')
    , ('%oraxyl%')
    , ('%oxacillin%')
    , ('%panixine%')
    , ('%pc pen vk%')
    , ('%pce dispertab%')
    , ('%pediazole%')
    , ('%penicillin%')
    , ('%periostat%')
    , ('%pfizerpen%')
    , ('%piperacillin%')
    , ('%primsol%')
    , ('%proquin%')
    , ('%raniclor%')
    , ('%rifadin%')
    , ('%rifampin%')
    , ('%rocephin%')
    , ('%septra%')
    , ('%smz-tmp%')
    , ('%solodyn%')
    , ('%spectracef%')
    , ('%streptomycin%')
    , ('%sulfadiazine%')
    , ('%sulfamethoxazole%')
    , ('%sulfatrim%')
    , ('%sulfisoxazole%')
    , ('%suprax%')
    , ('%synercid%')
    , ('%tazicef%')
    , ('%tazobactam%')
    , ('%tetracycline%')
    , ('%timentin%')
    , ('%tobramycin%')
    , ('%trimethoprim%')
    , ('%unasyn%')
    , ('%vancocin%')
    , ('%vancomycin%')
    , ('%vantin%')
    , ('%vibativ%')
    , ('%vibra-tabs%')
    , ('%vibramycin%')
    , ('%zinacef%')
    , ('%zithromax%')
    , ('%zosyn%')
    , ('%zyvox%')
)

, abx AS (
    SELECT DISTINCT drug, route
    FROM mimiciv_hosp.prescriptions
    WHERE drug_type NOT IN ('BASE')
        AND route NOT IN ('OU', 'OS', 'OD', 'AU', 'AS', 'AD', 'TP')
        AND lower(route) NOT LIKE '%ear%'
        AND lower(route) NOT LIKE '%eye%'
        AND lower(drug) NOT LIKE '%cream%'
        AND lower(drug) NOT LIKE '%desensitization%'
        AND lower(drug) NOT LIKE '%ophth oint%'
        AND lower(drug) NOT LIKE '%gel%'
        AND EXISTS (SELECT 1 FROM name_patterns AS np WHERE lower(drug) LIKE np.pattern)
)

SELECT
    pr.subject_id
    , pr.hadm_id
    , ie.stay_id
    , pr.drug AS antibiotic
    , pr.route
    , pr.starttime
    , pr.stoptime
FROM mimiciv_hosp.prescriptions AS pr
INNER JOIN abx
    ON pr.drug = abx.drug
        AND pr.route = abx.route
LEFT JOIN mimiciv_icu.icustays AS ie
    ON pr.hadm_id = ie.hadm_id
        AND pr.starttime >= ie.intime
        AND pr.starttime < ie.outtime
