-- Concept: urine-output-rate
-- Definition: reference output of task mimic-urine-output-rate: at each urine-output charting
--   time, the weight, the charted volume, the 6/12/24 h volumes, the hours they cover and the
--   mL/kg/h rates, each rate given only once that much ICU time has elapsed (ICU time bounded
--   by the first and last heart-rate charting); rates rounded to 4 places, hours to 2.
-- Source: measurement/urine_output_rate (mimic-code conventions).
-- Grain: stay_id, charttime
-- Deviations: none.
SELECT stay_id, charttime, weight, uo,
    urineoutput_6hr, urineoutput_12hr, urineoutput_24hr,
    ROUND(uo_mlkghr_6hr, 4) AS uo_mlkghr_6hr,
    ROUND(uo_mlkghr_12hr, 4) AS uo_mlkghr_12hr,
    ROUND(uo_mlkghr_24hr, 4) AS uo_mlkghr_24hr,
    ROUND(uo_tm_6hr, 2) AS uo_tm_6hr,
    ROUND(uo_tm_12hr, 2) AS uo_tm_12hr,
    ROUND(uo_tm_24hr, 2) AS uo_tm_24hr
FROM mimiciv_derived.urine_output_rate
