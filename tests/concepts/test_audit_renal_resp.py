"""Audit of the renal and respiratory concepts against mimic-code's conventions.

Hand-made patients sit exactly on the thresholds where our SQL and the public concept could
part ways; every expected value is worked out by hand in the comments.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.concepts.fixtures2 import by_key, fresh, h, insert, make_template, recompute, rows, stay


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("audit_rr") / "template.duckdb")


@pytest.fixture()
def con(template: Path, tmp_path: Path):
    c = fresh(template, tmp_path / "a.duckdb")
    yield c
    c.close()


@pytest.mark.parametrize("gap_minutes", [6, 20, 4, 15, 10])
def test_kdigo_uo_six_covered_hours_made_of_short_gaps_count_as_six(con, gap_minutes):
    # 70 kg; urine charted at hour 2 (first chart: its gap counts as 1 h), then every
    # `gap_minutes` up to hour 7. At hour 7 the 6 h window (hour 1 to 7, both ends) holds every
    # chart: covered time = 1 + 5 h of short gaps = exactly 6 h, so the 6 h rate exists
    # (1 mL per chart -> far below 0.5 mL/kg/h) and, past the first 6 ICU hours, stage 1.
    # Summed in binary floating point the short gaps can come to 5.99999999 h; the public
    # concept rounds covered hours to 6 places before the ">= 6 h" test.
    stay(con, 41, hours=96)
    insert(con, "mimiciv_derived.weight_durations", {"stay_id": 41, "starttime": h(-1), "endtime": h(96), "weight": 70.0})
    t = h(2)
    while t <= h(7):
        insert(con, "mimiciv_derived.urine_output", {"stay_id": 41, "charttime": t, "urineoutput": 1.0})
        t += timedelta(minutes=gap_minutes)
    recompute(con, "kdigo_uo", "kdigo_stages")
    got = rows(con, f"SELECT u.uo_tm_6hr, u.uo_rt_6hr, k.aki_stage_uo FROM mimiciv_derived.kdigo_uo u "
                    f"JOIN mimiciv_derived.kdigo_stages k USING (stay_id, charttime) WHERE stay_id = 41 AND charttime = TIMESTAMP '{h(7)}'")
    n = 5 * 60 // gap_minutes + 1  # charts from hour 2 to hour 7
    assert float(got[0]["uo_rt_6hr"]) == round(n / 70 / 6, 4)  # DECIMAL(38, 4), as mimic-code
    assert got[0]["aki_stage_uo"] == 1


# MELD-Na on hand-made first-day labs (stay: creatinine, bilirubin, INR, sodium, RRT hour).
# MELD(i) = 10 x round(0.957 ln Cr + 0.378 ln Bili + 1.120 ln INR + 0.643, 1), labs < 1 -> 1,
# Cr > 4 or RRT -> 4, sum > 4 -> 40; Na bounded to 125-137 and applied only when MELD(i) > 11.
MELD_CASES = {
    # nothing measured: 10 x round(0.643, 1) = 6
    51: ((None, None, None, None, None), 6.0),
    # 0.66334 + 0.41528 + 0.45412 + 0.643 = 2.1757 -> 22; Na 130: 22 + 1.32*7 - 0.033*22*7
    52: ((2.0, 3.0, 1.5, 130.0, None), 22 + 1.32 * 7 - 0.033 * 22 * 7),
    # 0.44979 + 0.643 = 1.0928 -> 11: not > 11, so Na 120 changes nothing
    53: ((1.6, None, None, 120.0, None), 11.0),
    # 0.50781 + 0.643 = 1.1508 -> 12; Na 120 counts as 125: 12 + 1.32*12 - 0.033*12*12
    54: ((1.7, None, None, 120.0, None), 12 + 1.32 * 12 - 0.033 * 12 * 12),
    # RRT at hour 3 sets Cr to 4: 1.32669 + 0.643 = 1.9697 -> 20; Na 140 counts as 137
    55: ((0.8, None, None, 140.0, 3), 20.0),
    # every lab below 1 counts as 1
    56: ((0.5, 0.3, 0.9, 137.0, None), 6.0),
    # sum 5.06 > 4 -> 40; at 40 the sodium term cancels (1.32 = 0.033 x 40)
    57: ((10.0, 30.0, 5.0, 125.0, None), 40.0),
    # RRT 25 h after admission is outside the first day: Cr 0.8 -> 1 -> 6
    58: ((0.8, None, None, None, 25), 6.0),
}


def test_meld_na_hand_computed(con):
    for stay_id, ((cr, bili, inr, na, rrt_hour), _) in MELD_CASES.items():
        stay(con, stay_id)
        insert(con, "mimiciv_derived.first_day_lab", {"subject_id": stay_id, "stay_id": stay_id, "creatinine_max": cr,
                                                      "bilirubin_total_max": bili, "inr_max": inr, "sodium_min": na})
        if rrt_hour is not None:
            insert(con, "mimiciv_derived.rrt", {"stay_id": stay_id, "charttime": h(rrt_hour), "dialysis_present": 1})
    recompute(con, "first_day_rrt", "meld", "meld-24h")
    got = by_key(con, "mimiciv_derived.target_meld_24h")
    assert {s: round(got[s]["meld"], 6) for s in MELD_CASES} == {s: round(v, 6) for s, (_, v) in MELD_CASES.items()}


def test_creatinine_baseline_choice_rule_and_mdrd(con):
    # MDRD 186 x Scr^-1.154 x age^-0.203 (x 0.742 if female) = 75, solved for Scr by hand:
    # male 60 -> 1.06910, female 60 -> 0.82550, male 18 -> 1.32129, female 80 -> 0.78476
    cases = {  # hadm: (gender, age, creatinines, (icd_version, code) or None)
        61: ("M", 60, [1.1, 1.4], None),          # lowest 1.1 <= 1.1 -> 1.1
        62: ("M", 60, [1.2, 1.9], None),          # lowest 1.2, no CKD -> MDRD 1.0691
        63: ("F", 60, [2.0, 2.4], (10, "N184")),  # CKD (ICD-10 N18) -> lowest 2.0
        64: ("F", 80, [1.5], (9, "5853")),        # CKD (ICD-9 585) -> 1.5
        65: ("M", 18, [], None),                  # adult, no creatinine -> MDRD 1.3213
        66: ("M", 17, [0.5], None),               # not an adult -> no row
        67: ("M", 60, [1.5], (10, "N179")),       # acute kidney failure is not CKD -> MDRD
    }
    specimen = 0
    for hadm, (gender, age, values, dx) in cases.items():
        stay(con, hadm, age=age, gender=gender)
        for value in values:
            specimen += 1
            insert(con, "mimiciv_derived.chemistry", {"subject_id": hadm, "hadm_id": hadm, "specimen_id": specimen,
                                                      "charttime": h(specimen), "creatinine": value})
        if dx:
            insert(con, "mimiciv_hosp.diagnoses_icd", {"subject_id": hadm, "hadm_id": hadm, "seq_num": 1,
                                                       "icd_version": dx[0], "icd_code": dx[1]})
    recompute(con, "creatinine_baseline", "creatinine-baseline")
    got = by_key(con, "mimiciv_derived.target_creatinine_baseline", "hadm_id")
    assert sorted(got) == [61, 62, 63, 64, 65, 67]
    assert {k: (r["ckd"], r["scr_min"], round(r["scr_baseline"], 4), round(r["mdrd_est"], 4)) for k, r in got.items()} == {
        61: (0, 1.1, 1.1, 1.0691),
        62: (0, 1.2, 1.0691, 1.0691),
        63: (1, 2.0, 2.0, 0.8255),
        64: (1, 1.5, 1.5, 0.7848),
        65: (0, None, 1.3213, 1.3213),
        67: (0, 1.5, 1.0691, 1.0691),
    }


def test_ventilation_device_slots_flow_rule_and_seq(con):
    # Devices charted together fill slots in descending text order ('Nasal cannula' before
    # 'High flow nasal cannula' and 'Bipap mask '). The task reference (M4Bench) reads slot 1 only,
    # so all four chartings are SupplementalOxygen; a device charted without an O2 flow in the same
    # minute never reaches oxygen_delivery.
    stay(con, 71, hours=48)

    def ce(hours, itemid, value, valuenum=None):
        insert(con, "mimiciv_icu.chartevents", {"subject_id": 71, "hadm_id": 71, "stay_id": 71, "charttime": h(hours),
                                               "storetime": h(hours), "itemid": itemid, "value": value, "valuenum": valuenum})

    for hours, second in ((1, "Bipap mask "), (2, "Bipap mask "), (3, "High flow nasal cannula"), (4, "High flow nasal cannula")):
        ce(hours, 223834, "5", 5.0)  # O2 flow
        ce(hours, 226732, "Nasal cannula")
        ce(hours, 226732, second)
    ce(5, 226732, "Endotracheal tube")  # no O2 flow at 5 h: dropped, so it neither classifies nor ends an episode
    recompute(con, "oxygen_delivery", "ventilator_setting", "ventilation", "mimiciv_derived.target_ventilation")
    got = rows(con, "SELECT ventilation_seq, starttime, endtime, ventilation_status FROM mimiciv_derived.target_ventilation "
                    "WHERE stay_id = 71 ORDER BY ventilation_seq")
    assert [(r["ventilation_seq"], r["starttime"], r["endtime"], r["ventilation_status"]) for r in got] == [
        (1, h(1), h(4), "SupplementalOxygen"),  # last charting of the stay: ends at itself
    ]


def test_urine_output_rate_irrigant_is_subtracted_and_window_counts_exact_hours(con):
    # 70 kg; heart rate charted at 0 h and 10 h (ICU time starts at 0 h).
    stay(con, 81, hours=48)
    for hours in (0, 10):
        insert(con, "mimiciv_icu.chartevents", {"subject_id": 81, "hadm_id": 81, "stay_id": 81, "charttime": h(hours),
                                               "itemid": 220045, "value": "80", "valuenum": 80.0})
    insert(con, "mimiciv_derived.weight_durations", {"stay_id": 81, "starttime": h(-2), "endtime": h(50), "weight": 70.0, "weight_type": "admit"})
    for hours, itemid, value in ((1, 226559, 100.0), (1, 227488, 300.0), (1, 227489, 350.0),  # Foley + irrigant in/out
                                 (2, 227488, 200.0), (2, 227489, 100.0),                      # more irrigant in than out
                                 (7, 226559, 60.0)):
        insert(con, "mimiciv_icu.outputevents", {"subject_id": 81, "hadm_id": 81, "stay_id": 81, "charttime": h(hours),
                                                 "itemid": itemid, "value": value})
    recompute(con, "urine_output", "urine_output_rate", "urine-output-rate")
    got = {r["charttime"]: r for r in rows(con, "SELECT * FROM mimiciv_derived.target_urine_output_rate WHERE stay_id = 81")}
    # 1 h: 100 - 300 + 350 = 150 over the 60 min since the first heart rate
    assert (got[h(1)]["uo"], got[h(1)]["uo_tm_6hr"]) == (150.0, 1.0)
    # 2 h: 100 - 200 = -100 (net negative); 6 h volume 150 - 100 = 50 over 2 h: no rate before 6 h
    assert (got[h(2)]["uo"], got[h(2)]["urineoutput_6hr"], got[h(2)]["uo_tm_6hr"], got[h(2)]["uo_mlkghr_6hr"]) == (-100.0, 50.0, 2.0, None)
    # 7 h: the 1 h charting is 6 h back (out of the "6 h" window), the 2 h one 5 h back: volume
    # -100 + 60 = -40 over 1 h + 5 h = 6 h -> -40 / 70 / 6 = -0.095238, held at 3 decimals -> -0.095
    assert (got[h(7)]["urineoutput_6hr"], got[h(7)]["uo_tm_6hr"], got[h(7)]["uo_mlkghr_6hr"]) == (-40.0, 6.0, -0.095)
    assert (got[h(7)]["urineoutput_24hr"], got[h(7)]["uo_tm_24hr"], got[h(7)]["uo_mlkghr_24hr"]) == (110.0, 7.0, None)
