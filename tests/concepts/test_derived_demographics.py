"""Demographic concepts on hand-made patients: age, the heart-rate anchored hourly grid,
stay details, weight intervals and height."""

from __future__ import annotations

import pytest


def test_age_counts_calendar_years_from_anchor_year(hand):
    hand.add_stay(anchor_age=60, anchor_year=2148)  # admitted 2150-01-01 -> 62
    hand.build("age")
    assert hand.one("SELECT age, anchor_age FROM mimiciv_derived.age") == {"age": 62, "anchor_age": 60}


@pytest.mark.slow
def test_hourly_grid_is_anchored_on_heart_rate_not_intime(hand):
    hand.add_stay()  # intime 10:00
    hand.add_stay(subject=2, hadm=20, stay=200)  # no heart rate charted
    hand.chart(220045, "2150-01-01 10:30", 90)
    hand.chart(220045, "2150-01-01 13:10", 95)
    hand.chart(220045, "2150-01-01 12:00", None)  # a row without a value still marks the time
    hand.build("icustay_hourly")
    times = hand.rows("SELECT * FROM mimiciv_derived.icustay_times ORDER BY stay_id")
    assert (str(times[0]["intime_hr"]), str(times[0]["outtime_hr"])) == ("2150-01-01 10:30:00", "2150-01-01 13:10:00")
    assert times[1]["intime_hr"] is None
    hours = hand.rows("SELECT stay_id, hr, endtime FROM mimiciv_derived.icustay_hourly ORDER BY hr")
    # hour 0 ends at 11:00 (10:30 rounded up); 13:10 is 3 hour boundaries after 10:30 -> hours -24 .. 3
    assert [h["hr"] for h in hours] == list(range(-24, 4))
    assert {h["stay_id"] for h in hours} == {100}
    assert str(hours[24]["endtime"]) == "2150-01-01 11:00:00"
    assert str(hours[0]["endtime"]) == "2149-12-31 11:00:00"
    assert str(hours[-1]["endtime"]) == "2150-01-01 14:00:00"


def test_icustay_detail_lengths_and_sequence(hand):
    hand.add_stay()
    hand.insert("mimiciv_icu.icustays", dict(subject_id=1, hadm_id=10, stay_id=101, intime="2150-01-07 09:00", outtime="2150-01-08 21:30", los=1.5))
    hand.build("icustay_detail")
    rows = {r["stay_id"]: r for r in hand.rows("SELECT * FROM mimiciv_derived.icustay_detail")}
    assert rows[100]["los_icu"] == 4.0 and rows[100]["icustay_seq"] == 1 and rows[100]["first_icu_stay"] is True
    assert rows[101]["los_icu"] == round(36 / 24, 2) and rows[101]["icustay_seq"] == 2 and rows[101]["first_icu_stay"] is False
    assert rows[100]["los_hospital"] == 10 and rows[100]["admission_age"] == 60 and rows[100]["race"] == "WHITE"


@pytest.mark.slow
def test_weight_durations_admission_weight_daily_weights_and_backfill(hand):
    hand.add_stay()  # 2150-01-01 10:00 .. 2150-01-05 10:00
    hand.chart(226512, "2150-01-01 12:00", 80.0)  # admission weight: from intime - 2 h
    hand.chart(224639, "2150-01-02 06:00", 78.0)
    hand.chart(224639, "2150-01-03 06:00", 76.0)
    hand.chart(224639, "2150-01-03 06:00", 77.0)  # two weights at one time: each kept, the last (77) applies
    hand.chart(224639, "2150-01-04 06:00", 1600.0)  # implausible: dropped
    hand.add_stay(subject=2, hadm=20, stay=200)
    hand.chart(224639, "2150-01-02 06:00", 60.0, subject=2, hadm=20, stay=200)  # first weight after intime: back-filled
    hand.build("weight_durations")
    got = [
        (r["stay_id"], str(r["starttime"])[5:16], str(r["endtime"])[5:16], r["weight"], r["weight_type"])
        for r in hand.rows("SELECT * FROM mimiciv_derived.weight_durations ORDER BY stay_id, starttime, weight")
    ]
    assert got == [
        (100, "01-01 08:00", "01-02 06:00", 80.0, "admit"),
        (100, "01-02 06:00", "01-03 06:00", 78.0, "daily"),
        (100, "01-03 06:00", "01-03 06:00", 76.0, "daily"),  # zero-length: 77 follows at the same instant
        (100, "01-03 06:00", "01-05 12:00", 77.0, "daily"),
        (200, "01-01 08:00", "01-02 06:00", 60.0, "daily"),
        (200, "01-02 06:00", "01-05 12:00", 60.0, "daily"),
    ]


@pytest.mark.slow
def test_height_inches_converted_and_implausible_dropped(hand):
    hand.add_stay()
    hand.chart(226707, "2150-01-01 11:00", 70.0)  # 70 in = 177.8 cm (no cm charted at that time)
    hand.chart(226730, "2150-01-01 12:00", 250.0)  # >= 230 cm: dropped
    hand.chart(226730, "2150-01-01 13:00", 165.0)
    hand.chart(226707, "2150-01-01 13:00", 70.0)  # cm wins when both are charted
    hand.chart(226730, "2150-01-02 10:01", 190.0)  # after the first-day window
    hand.build("height", "first_day_height")
    got = {str(r["charttime"])[5:16]: r["height"] for r in hand.rows("SELECT * FROM mimiciv_derived.height")}
    assert got == {"01-01 11:00": 177.8, "01-01 13:00": 165.0, "01-02 10:01": 190.0}
    assert hand.one("SELECT height FROM mimiciv_derived.first_day_height")["height"] == pytest.approx(round((177.8 + 165.0) / 2, 2))
