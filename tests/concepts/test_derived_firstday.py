"""First-day concepts: the [intime - 6 h, intime + 24 h] window (both ends included), lowest
GCS with its components, urine output from intime, first-day weight."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_first_day_lab_window_is_inclusive_at_both_ends(hand):
    hand.add_stay()  # intime 2150-01-01 10:00 -> window 04:00 .. 01-02 10:00
    hand.lab(1, 50912, "2150-01-01 03:59", 9.0)  # one minute too early
    hand.lab(2, 50912, "2150-01-01 04:00", 2.0)  # first instant of the window
    hand.lab(3, 50912, "2150-01-02 10:00", 0.5)  # last instant of the window
    hand.lab(4, 50912, "2150-01-02 10:01", 0.1)  # one minute too late
    hand.lab(5, 51265, "2150-01-01 09:00", 150.0, hadm=None)  # platelets without an admission: matched by patient
    hand.lab(6, 51237, "2150-01-01 11:00", 1.4)  # INR
    hand.lab(7, 50885, "2150-01-01 11:00", 3.2)  # bilirubin
    hand.build("first_day_lab")
    row = hand.one("SELECT * FROM mimiciv_derived.first_day_lab")
    assert (row["creatinine_min"], row["creatinine_max"]) == (0.5, 2.0)
    assert (row["platelets_min"], row["inr_max"], row["bilirubin_total_max"]) == (150.0, 1.4, 3.2)
    assert row["albumin_min"] is None


@pytest.mark.slow
def test_first_day_vitalsign_min_max_mean(hand):
    hand.add_stay()
    hand.chart(220045, "2150-01-01 04:00", 60)
    hand.chart(220045, "2150-01-01 12:00", 90)
    hand.chart(220045, "2150-01-02 10:00", 120)
    hand.chart(220045, "2150-01-02 10:01", 200)  # outside
    hand.chart(223761, "2150-01-01 12:00", 98.6)
    hand.build("first_day_vitalsign")
    row = hand.one("SELECT * FROM mimiciv_derived.first_day_vitalsign")
    assert (row["heart_rate_min"], row["heart_rate_max"], row["heart_rate_mean"]) == (60, 120, 90)
    assert row["temperature_max"] == 37.0 and row["sbp_min"] is None


@pytest.mark.slow
def test_first_day_gcs_lowest_with_latest_tie(hand):
    hand.add_stay()
    hand.add_stay(subject=2, hadm=20, stay=200)  # no GCS: a row of NULLs
    for itemid, value in ((223901, 4), (223900, 3), (220739, 3)):  # 11:00 -> 10
        hand.chart(itemid, "2150-01-01 11:00", value)
    for itemid, value in ((223901, 5), (223900, 2), (220739, 3)):  # 12:00 -> 10 as well
        hand.chart(itemid, "2150-01-01 12:00", value)
    for itemid, value in ((223901, 1), (223900, 1), (220739, 1)):  # 3, but after the window
        hand.chart(itemid, "2150-01-02 10:30", value)
    hand.build("first_day_gcs")
    rows = {r["stay_id"]: r for r in hand.rows("SELECT * FROM mimiciv_derived.first_day_gcs")}
    # a tie on the lowest GCS reports the latest charting (12:00), as the public DuckDB build
    assert (rows[100]["gcs_min"], rows[100]["gcs_motor"], rows[100]["gcs_verbal"], rows[100]["gcs_eyes"]) == (10, 5, 2, 3)
    assert rows[200]["gcs_min"] is None


def test_first_day_urine_output_starts_at_intime(hand):
    hand.add_stay()
    for time, value in (("2150-01-01 09:59", 500.0), ("2150-01-01 10:00", 100.0), ("2150-01-02 10:00", 50.0), ("2150-01-02 10:01", 700.0)):
        hand.insert("mimiciv_icu.outputevents", dict(subject_id=1, hadm_id=10, stay_id=100, charttime=time, itemid=226559, value=value))
    hand.build("first_day_urine_output")
    assert hand.one("SELECT urineoutput FROM mimiciv_derived.first_day_urine_output")["urineoutput"] == 150.0


@pytest.mark.slow
def test_first_day_weight_ignores_weights_after_day_one(hand):
    hand.add_stay()
    hand.chart(226512, "2150-01-01 12:00", 80.0)
    hand.chart(224639, "2150-01-02 06:00", 70.0)
    hand.chart(224639, "2150-01-03 06:00", 60.0)  # starts after intime + 24 h
    hand.build("first_day_weight")
    row = hand.one("SELECT * FROM mimiciv_derived.first_day_weight")
    assert (row["weight_admit"], row["weight"], row["weight_min"], row["weight_max"]) == (80.0, 75.0, 70.0, 80.0)
