-- Concept: urine-output-rate
-- Definition: reference output of task mimic-urine-output-rate: at each urine-output charting
--   time, the weight, the charted volume, the 6/12/24 h volumes, the hours they cover and the
--   mL/kg/h rates, each rate given only once that much ICU time has elapsed (ICU time bounded
--   by the first and last heart-rate charting); rates rounded to 4 places, hours to 2.
-- Source: measurement/urine_output_rate (mimic-code conventions).
-- Grain: stay_id, charttime
-- Deviations: none. (The elapsed-window rule and the rounding live in urine_output_rate.)
SELECT stay_id, charttime, weight, uo,
    urineoutput_6hr, urineoutput_12hr, urineoutput_24hr,
    uo_mlkghr_6hr, uo_mlkghr_12hr, uo_mlkghr_24hr,
    uo_tm_6hr, uo_tm_12hr, uo_tm_24hr
FROM mimiciv_derived.urine_output_rate
