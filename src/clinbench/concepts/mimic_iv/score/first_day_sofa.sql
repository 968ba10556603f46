-- Concept: first_day_sofa
-- Definition: SOFA over the first ICU day (6 h before to 24 h after ICU admission): each organ
--   component from the worst value of the window (sofa_first_day_worst), scored by the SOFA
--   cut-offs in sofa_points. Components are NULL when unmeasured; sofa sums them with
--   missing = 0.
-- Source: Vincent et al., Intensive Care Med 1996; mimic-code firstday/first_day_sofa (MIT-LCP,
--   commit 8bcbd190, concepts_duckdb).
-- Grain: stay_id
-- Deviations: none (see sofa_first_day_worst and sofa_points). Variants sofa-24h__ventilated_pf
--   and sofa-24h__running_infusions carry clinbench's former conventions.
SELECT w.subject_id, w.hadm_id, w.stay_id,
    COALESCE(p.respiration, 0) + COALESCE(p.coagulation, 0) + COALESCE(p.liver, 0)
        + COALESCE(p.cardiovascular, 0) + COALESCE(p.cns, 0) + COALESCE(p.renal, 0) AS sofa,
    p.respiration, p.coagulation, p.liver, p.cardiovascular, p.cns, p.renal
FROM mimiciv_derived.sofa_first_day_worst AS w
INNER JOIN mimiciv_derived.sofa_points AS p
    ON p.grain = 'first_day' AND p.stay_id = w.stay_id
