-- Concept: first_day_sofa
-- Definition: SOFA over the first ICU day (6 h before to 24 h after ICU admission): each organ
--   component from the worst value of the window (sofa_first_day_worst), scored by the SOFA
--   cut-offs in sofa_points. Components are NULL when unmeasured; sofa sums them with
--   missing = 0.
-- Source: Vincent et al., Intensive Care Med 1996; MIT-LCP mimic-code firstday/first_day_sofa.
-- Grain: stay_id
-- Deviations: (1) a ventilated P/F of 200-399 scores 1-2 (the public first-day code has no
--   ventilated < 400 / < 300 branch, so such patients score 0; the hourly sofa and the SOFA
--   paper score them). (2) A vasopressor infusion counts when it runs at any time in the window
--   (the public code needs it to start inside the window, so an infusion begun before
--   intime - 6 h and still running is missed; one that stopped exactly at intime - 6 h did not
--   run in the window and does not count). (3) Vasopressor rates are compared after
--   rounding to 6 places so a charted 0.1 mcg/kg/min scores 3 regardless of float width.
--   (4) A vasopressor rate of 0 is a paused infusion and does not score 3 (sofa_points).
SELECT w.subject_id, w.hadm_id, w.stay_id,
    COALESCE(p.respiration, 0) + COALESCE(p.coagulation, 0) + COALESCE(p.liver, 0)
        + COALESCE(p.cardiovascular, 0) + COALESCE(p.cns, 0) + COALESCE(p.renal, 0) AS sofa,
    p.respiration, p.coagulation, p.liver, p.cardiovascular, p.cns, p.renal
FROM mimiciv_derived.sofa_first_day_worst AS w
INNER JOIN mimiciv_derived.sofa_points AS p
    ON p.grain = 'first_day' AND p.stay_id = w.stay_id
