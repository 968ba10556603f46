"""Measurement concepts on hand-made patients: values computed by hand at the edges that matter."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

IN = "2150-01-01 10:00:00"  # ICU intime used by hand.add_stay


def test_vitalsign_fahrenheit_celsius_and_error_values(hand):
    hand.add_stay()
    hand.chart(223761, "2150-01-01 11:00:00", 98.6)  # 98.6 F -> 37.00 C
    hand.chart(223761, "2150-01-01 12:00:00", 100.4)  # 38.0 C, averaged with
    hand.chart(223762, "2150-01-01 12:00:00", 37.0)  # a Celsius charting at the same time -> 37.5
    hand.chart(223762, "2150-01-01 13:00:00", 98.6)  # Fahrenheit typed into the Celsius item -> NULL
    hand.chart(223761, "2150-01-01 14:00:00", 120.0)  # exclusive upper bound -> NULL
    hand.chart(223762, "2150-01-01 15:00:00", 10.0)  # exclusive lower bound -> NULL
    hand.chart(223761, "2150-01-01 16:00:00", 70.1)  # just inside: (70.1-32)/1.8 = 21.166.. -> 21.17
    hand.chart(220045, "2150-01-01 11:00:00", 300.0)  # heart rate 300 is an error
    hand.chart(220045, "2150-01-01 12:00:00", 88.0)
    hand.chart(220179, "2150-01-01 12:00:00", 120.0)  # NIBP systolic
    hand.chart(220050, "2150-01-01 12:00:00", 110.0)  # arterial systolic: sbp averages both
    hand.build("vitalsign")
    rows = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.vitalsign")}
    assert rows["11:00"]["temperature"] == 37.0
    assert rows["12:00"]["temperature"] == 37.5
    assert rows["13:00"]["temperature"] is None
    assert rows["14:00"]["temperature"] is None
    assert rows["15:00"]["temperature"] is None
    assert rows["16:00"]["temperature"] == 21.17
    assert rows["11:00"]["heart_rate"] is None and rows["12:00"]["heart_rate"] == 88.0
    assert rows["12:00"]["sbp"] == 115.0 and rows["12:00"]["sbp_ni"] == 120.0


def test_gcs_intubated_verbal_carry_forward_and_six_hour_limit(hand):
    hand.add_stay()
    # 10:00 full charting: 4 + 5 + 3 = 12
    hand.chart(223901, "2150-01-01 10:00:00", 4)
    hand.chart(223900, "2150-01-01 10:00:00", 5)
    hand.chart(220739, "2150-01-01 10:00:00", 3)
    # 12:00 only motor: verbal and eyes carried from 10:00 (< 6 h) -> 2 + 5 + 3 = 10
    hand.chart(223901, "2150-01-01 12:00:00", 2)
    # 18:00 only eyes, exactly 6 h after 12:00: nothing carried, defaults 6 + 5 -> 6 + 5 + 2 = 13
    hand.chart(220739, "2150-01-01 18:00:00", 2)
    # 20:00 intubated: verbal 'No Response-ETT' -> GCS 15, verbal 0, unable 1
    hand.chart(223901, "2150-01-01 20:00:00", 1)
    hand.chart(223900, "2150-01-01 20:00:00", 1, value="No Response-ETT")
    hand.chart(220739, "2150-01-01 20:00:00", 1)
    # 21:00 no verbal, previous intubated (< 6 h) -> 15 again
    hand.chart(223901, "2150-01-01 21:00:00", 3)
    # 22:00 verbal charted again after the intubated row: components not carried -> 6 + 4 + 4... motor default 6
    hand.chart(223900, "2150-01-01 22:00:00", 4)
    hand.build("gcs")
    rows = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.gcs")}
    assert rows["10:00"]["gcs"] == 12
    assert (rows["12:00"]["gcs"], rows["12:00"]["gcs_verbal"], rows["12:00"]["gcs_eyes"]) == (10, 5, 3)
    assert rows["18:00"]["gcs"] == 13 and rows["18:00"]["gcs_motor"] is None
    assert (rows["20:00"]["gcs"], rows["20:00"]["gcs_verbal"], rows["20:00"]["gcs_unable"]) == (15, 0, 1)
    assert (rows["21:00"]["gcs"], rows["21:00"]["gcs_unable"]) == (15, 0)
    # 22:00: previous row (21:00) has no verbal, so the ordinary carry applies: motor 3 from 21:00, eyes none -> 3 + 4 + 4
    assert rows["22:00"]["gcs"] == 11


def test_bg_arterial_venous_fio2_and_derived_ratios(hand):
    hand.add_stay()
    # arterial gas at 12:00 with lab FiO2 50 %: P/F = 100*80/50 = 160; A-a = 0.5*713 - 40/0.8 - 80 = 226.5
    hand.lab(1, 52033, "2150-01-01 12:00:00", None, value="ART.")
    hand.lab(1, 50821, "2150-01-01 12:00:00", 80.0)
    hand.lab(1, 50818, "2150-01-01 12:00:00", 40.0)
    hand.lab(1, 50816, "2150-01-01 12:00:00", 50.0)
    hand.lab(1, 50813, "2150-01-01 12:00:00", 2.1)
    # venous gas at 14:00 without lab FiO2: charted FiO2 0.4 (fraction -> 40 %) at 11:00 (3 h before) is used
    hand.lab(2, 52033, "2150-01-01 14:00:00", None, value="VEN.")
    hand.lab(2, 50821, "2150-01-01 14:00:00", 40.0)
    hand.lab(2, 50818, "2150-01-01 14:00:00", 50.0)
    hand.lab(2, 50813, "2150-01-01 14:00:00", 4.0)
    hand.chart(223835, "2150-01-01 09:30:00", 0.6)  # 4.5 h before the venous gas: too old
    hand.chart(223835, "2150-01-01 11:00:00", 0.4)
    # lactate-only specimen: no PaO2, not a blood gas row
    hand.lab(3, 50813, "2150-01-01 15:00:00", 9.9)
    hand.build("first_day_bg", "first_day_bg_art")
    # mimic-code's bg has no specimen_id column: one row per specimen, told apart by time here
    bg = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.bg")}
    assert set(bg) == {"12:00", "14:00"}
    bg[1], bg[2] = bg.pop("12:00"), bg.pop("14:00")
    assert bg[1]["specimen"] == "ART." and bg[1]["pao2fio2ratio"] == pytest.approx(160.0)
    assert bg[1]["aado2_calc"] == pytest.approx(0.5 * 713 - 40 / 0.8 - 80)
    assert bg[2]["fio2"] is None and bg[2]["fio2_chartevents"] == pytest.approx(40.0)
    assert bg[2]["pao2fio2ratio"] == pytest.approx(100.0)
    art = hand.one("SELECT * FROM mimiciv_derived.first_day_bg_art")
    every = hand.one("SELECT * FROM mimiciv_derived.first_day_bg")
    assert (art["lactate_max"], art["po2_min"]) == (2.1, 80.0)  # the venous gas is not arterial
    assert (every["lactate_max"], every["po2_min"]) == (4.0, 40.0)


def test_fio2_cleaning_in_ventilator_setting(hand):
    hand.add_stay()
    hand.chart(223835, "2150-01-01 11:00:00", 0.35)  # fraction -> 35 %
    hand.chart(223835, "2150-01-01 12:00:00", 5.0)  # an O2 flow in the FiO2 field -> NULL
    hand.chart(223835, "2150-01-01 13:00:00", 60.0)
    hand.chart(220339, "2150-01-01 13:00:00", 150.0)  # PEEP above 100 -> NULL
    hand.chart(223849, "2150-01-01 13:00:00", None, value="CMV/ASSIST/AutoFlow")
    hand.build("ventilator_setting")
    rows = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.ventilator_setting")}
    assert rows["11:00"]["fio2"] == pytest.approx(35.0)
    assert rows["12:00"]["fio2"] is None
    assert (rows["13:00"]["fio2"], rows["13:00"]["peep"], rows["13:00"]["ventilator_mode"]) == (60.0, None, "CMV/ASSIST/AutoFlow")


def _output(hand, itemid, charttime, value, stay=100):
    hand.insert("mimiciv_icu.outputevents", dict(subject_id=1, hadm_id=10, stay_id=stay, charttime=charttime, itemid=itemid, value=value, valueuom="ml"))


def test_urine_output_irrigant_is_subtracted(hand):
    hand.add_stay()
    _output(hand, 227488, "2150-01-01 12:00:00", 1000.0)  # irrigant in
    _output(hand, 227489, "2150-01-01 12:00:00", 1100.0)  # irrigant + urine out -> net 100
    _output(hand, 226559, "2150-01-01 13:00:00", 60.0)  # Foley
    _output(hand, 227488, "2150-01-01 14:00:00", 500.0)  # irrigant in, nothing out yet -> -500
    _output(hand, 226588, "2150-01-01 13:00:00", 999.0)  # chest tube: not urine
    hand.build("urine_output")
    got = [(str(r["charttime"])[11:16], r["urineoutput"]) for r in hand.rows("SELECT * FROM mimiciv_derived.urine_output ORDER BY charttime")]
    assert got == [("12:00", 100.0), ("13:00", 60.0), ("14:00", -500.0)]


def test_urine_output_rate_windows_and_weight(hand):
    hand.add_stay()
    hand.chart(220045, "2150-01-01 10:00:00", 80)  # first heart rate: the stay clock starts here
    hand.chart(220045, "2150-01-03 10:00:00", 80)
    hand.chart(226512, "2150-01-01 10:30:00", 50.0)  # admission weight 50 kg, from intime - 2 h
    for hour in range(1, 14):  # 30 mL each hour 11:00 .. 23:00
        _output(hand, 226559, f"2150-01-01 {10 + hour:02d}:00:00", 30.0)
    hand.build("urine_output_rate")
    rows = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.urine_output_rate")}
    # at 15:00 only 5 h are covered -> no 6 h rate
    assert rows["15:00"]["uo_tm_6hr"] == 5.0 and rows["15:00"]["uo_mlkghr_6hr"] is None
    # at 16:00: chartings 11:00..16:00 (diff <= 5 h) = 6 x 30 = 180 mL over 6 h and 50 kg -> 0.6
    assert rows["16:00"]["urineoutput_6hr"] == 180.0 and rows["16:00"]["uo_tm_6hr"] == 6.0
    assert rows["16:00"]["uo_mlkghr_6hr"] == 0.6 and rows["16:00"]["weight"] == 50.0
    # at 22:00: 12 chartings (11:00..22:00) = 360 mL / 50 kg / 12 h = 0.6; the 24 h rate needs 24 h
    assert rows["22:00"]["urineoutput_12hr"] == 360.0 and rows["22:00"]["uo_mlkghr_12hr"] == 0.6
    assert rows["23:00"]["uo_mlkghr_24hr"] is None and rows["23:00"]["urineoutput_24hr"] == 390.0


def test_lab_error_values_and_specimen_pivot(hand):
    hand.add_stay()
    hand.lab(10, 50912, "2150-01-01 08:00:00", 1.3)  # creatinine
    hand.lab(10, 50983, "2150-01-01 08:00:00", 250.0)  # sodium > 200: error
    hand.lab(10, 50868, "2150-01-01 08:00:00", -2.0)  # negative anion gap is possible
    hand.lab(11, 50912, "2150-01-01 09:00:00", 0.0)  # creatinine 0: error
    hand.lab(12, 51301, "2150-01-01 08:00:00", 10.0)  # WBC 10 K/uL
    hand.lab(12, 51256, "2150-01-01 08:00:00", 80.0)  # 80 % neutrophils -> 8.0 K/uL imputed
    hand.lab(12, 51244, "2150-01-01 08:00:00", 15.0)
    hand.lab(12, 51253, "2150-01-01 08:00:00", 500.0)  # monocyte count 500 /uL -> 0.5 K/uL
    hand.build("chemistry", "blood_differential")
    chem = {r["specimen_id"]: r for r in hand.rows("SELECT * FROM mimiciv_derived.chemistry")}
    assert set(chem) == {10}
    assert (chem[10]["creatinine"], chem[10]["sodium"], chem[10]["aniongap"]) == (1.3, None, -2.0)
    diff = hand.one("SELECT * FROM mimiciv_derived.blood_differential")
    assert (diff["neutrophils_abs"], diff["lymphocytes_abs"], diff["monocytes_abs"]) == (8.0, 1.5, 0.5)


@pytest.mark.parametrize(
    ("gender", "age", "scr", "ckd", "expected"),
    [
        ("M", 60, 0.9, False, 0.9),  # normal lowest creatinine is the baseline
        ("F", 60, 2.0, True, 2.0),  # CKD: lowest creatinine even if high
        ("F", 60, 2.0, False, (75 / 186 / 60**-0.203 / 0.742) ** (-1 / 1.154)),  # MDRD back-calculation
        ("M", 45, 1.5, False, (75 / 186 / 45**-0.203) ** (-1 / 1.154)),
    ],
)
def test_creatinine_baseline_rules(hand, gender, age, scr, ckd, expected):
    hand.add_stay(gender=gender, anchor_age=age)
    hand.lab(20, 50912, "2150-01-02 08:00:00", scr)
    hand.lab(21, 50912, "2150-01-03 08:00:00", scr + 1)
    if ckd:
        hand.insert("mimiciv_hosp.diagnoses_icd", dict(subject_id=1, hadm_id=10, seq_num=1, icd_code="N184", icd_version=10))
    hand.build("creatinine_baseline")
    row = hand.one("SELECT * FROM mimiciv_derived.creatinine_baseline")
    assert row["age"] == age and row["scr_min"] == scr and row["ckd"] == int(ckd)
    assert row["scr_baseline"] == pytest.approx(expected, abs=1e-9)


def test_creatinine_baseline_excludes_children(hand):
    hand.add_stay(anchor_age=17)
    hand.build("creatinine_baseline")
    assert hand.rows("SELECT * FROM mimiciv_derived.creatinine_baseline") == []


def test_urine_output_rate_counts_hour_and_minute_boundaries(hand):
    """09:10 -> 14:50 is 5 h 40 min but 5 hour boundaries: inside the '6 h' window (DuckDB-build convention)."""
    hand.add_stay()
    hand.chart(220045, "2150-01-01 08:00", 80)
    hand.chart(226512, "2150-01-01 09:00", 50.0)
    _output(hand, 226559, "2150-01-01 09:10", 30.0)
    _output(hand, 226559, "2150-01-01 14:50", 30.0)
    hand.build("urine_output_rate")
    row = hand.one("SELECT * FROM mimiciv_derived.urine_output_rate WHERE charttime = '2150-01-01 14:50'")
    # covered time: 70 min (08:00 -> 09:10) + 340 min (09:10 -> 14:50) = 410 min = 6.8333 h
    assert row["urineoutput_6hr"] == 60.0 and row["uo_tm_6hr"] == 6.83
    assert row["uo_mlkghr_6hr"] == round(60 / 50 / (410 / 60), 4)


def test_rhythm_joins_the_distinct_rhythms_of_a_charting_time_in_order_and_null_without_one(hand):
    hand.add_stay()
    at = "2150-01-01 11:00:00"
    for value in ("SR (Sinus Rhythm)", "AF (Atrial Fibrillation)", "SR (Sinus Rhythm)", "1st AV (First degree AV Block)"):
        hand.chart(220048, at, value=value)  # a duplicate, and three in no order
    hand.chart(220048, at, value=None)  # a rhythm row without a value is not a rhythm
    hand.chart(224650, "2150-01-01 12:00:00", value="PVC's")  # ectopy only: no rhythm charted
    hand.chart(220048, "2150-01-01 13:00:00", value=None)  # only valueless rhythm rows
    hand.chart(224650, "2150-01-01 13:00:00", value="PAC's")
    hand.chart(220048, "2150-01-01 14:00:00", value="")  # an empty text is a value, as string_agg keeps it
    hand.build("rhythm")
    rows = {str(r["charttime"])[11:16]: r for r in hand.rows("SELECT * FROM mimiciv_derived.rhythm")}
    assert rows["11:00"]["heart_rhythm"] == "1st AV (First degree AV Block); AF (Atrial Fibrillation); SR (Sinus Rhythm)"
    assert rows["12:00"]["heart_rhythm"] is None and rows["12:00"]["ectopy_type"] == "PVC's"
    assert rows["13:00"]["heart_rhythm"] is None and rows["13:00"]["ectopy_type"] == "PAC's"
    assert rows["14:00"]["heart_rhythm"] == ""


def test_bg_two_specimens_at_one_time_are_two_rows_in_mimic_code_and_the_first_in_m4bench(hand):
    hand.add_stay()
    # two arterial gases drawn at 12:00 (specimens 7 and 5), PaO2 80 and 60, lab FiO2 50 % each:
    # P/F 160 and 120. M4's copy ranks the gases of one subject and time by the latest SpO2 charted
    # before them (the same for both), then by specimen_id, and keeps the first: specimen 5 (120)
    for specimen, pao2 in ((7, 80.0), (5, 60.0)):
        hand.lab(specimen, 52033, "2150-01-01 12:00:00", None, value="ART.")
        hand.lab(specimen, 50821, "2150-01-01 12:00:00", pao2)
        hand.lab(specimen, 50816, "2150-01-01 12:00:00", 50.0)
    hand.chart(220277, "2150-01-01 11:30:00", 97.0)  # an SpO2 both gases match
    mimic_code, m4bench = hand.both("bg", "pao2fio2ratio", b="m4bench")
    assert [r["pao2fio2ratio"] for r in mimic_code] == [pytest.approx(120.0), pytest.approx(160.0)]
    assert [(r["po2"], r["pao2fio2ratio"]) for r in m4bench] == [(60.0, pytest.approx(120.0))]
