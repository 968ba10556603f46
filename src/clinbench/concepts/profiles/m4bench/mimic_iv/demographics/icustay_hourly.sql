-- Concept: icustay_hourly
-- Definition: One row per clock hour of each ICU stay. Hour 0 ends at the first heart-rate
--   charting rounded up to the hour; the grid starts at hour -24 (to catch labs drawn before
--   ICU admission) and runs to the number of hour boundaries between first and last
--   heart-rate charting. Join data on stay_id and (endtime - 1 hour, endtime].
-- Source: M4Bench 0.5.3's pipeline: hannesill/m4 6ed55907, its vendored mimic-code copy's
--   demographics/icustay_hourly, as `m4 init-derived mimic-iv` builds it.
-- Grain: stay_id, hr
-- Deviations: differs from the mimic-code profile, which ends the grid at the number of hour
--   boundaries between first and last heart-rate charting: here it is the hours between them
--   rounded up (1:10 to 3:20 is 3, there 2).
WITH bounds AS (
    SELECT
        stay_id
        , CASE
            WHEN date_trunc('hour', intime_hr) = intime_hr THEN intime_hr
            ELSE date_trunc('hour', intime_hr) + INTERVAL 1 HOUR
        END AS hour0_end
        , TRY_CAST(CEIL(date_diff('microseconds', intime_hr, outtime_hr) / 3600000000.0) AS INT) AS last_hr
    FROM mimiciv_derived.icustay_times
    WHERE intime_hr IS NOT NULL
)

, hours AS (
    SELECT
        stay_id
        , hour0_end
        , UNNEST(generate_series(-24, last_hr)) AS hr
    FROM bounds
)

SELECT
    stay_id
    , CAST(hr AS BIGINT) AS hr
    , hour0_end + to_hours(CAST(hr AS BIGINT)) AS endtime
FROM hours
