"""Concept-level variants (the conventions clinbench used before its default became mimic-code's):
each moves exactly the rows its header says, on hand-made patients computed by hand."""

from __future__ import annotations

import pytest

from clinbench.concepts.variants import variant_diff
from tests.concepts.fixtures2 import by_key, fresh, h, insert, make_template, recompute, rows, stay


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("concept_variants") / "t.duckdb")


def _diff_keys(con, default: str, variant: str, key: str, column: str) -> dict:
    """{key: (default value, variant value)} for the rows whose ``column`` differs."""
    got = rows(con, f"SELECT d.{key} AS k, d.{column} AS d, v.{column} AS v FROM mimiciv_derived.{default} AS d "
                    f"FULL JOIN mimiciv_derived.{variant} AS v USING ({key}) WHERE d.{column} IS DISTINCT FROM v.{column}")
    return {r["k"]: (r["d"], r["v"]) for r in got}


def test_creatinine_rounding_moves_exactly_the_float_boundary_stays(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    series = {
        1: [(0, 1.1), (10, 1.4)],    # +0.3, but 1.1 + 0.3 > 1.4 in floats: default 0, variant 1
        2: [(-100, 0.8), (10, 1.2)],  # 1.5x, but 0.8 x 1.5 > 1.2 in floats: default 0, variant 1
        3: [(0, 1.0), (10, 1.3)],    # +0.3 exact in floats too: 1 in both
        4: [(0, 1.0), (10, 1.29)],   # +0.29: 0 in both
        5: [(0, 6.6), (10, 7.2)],    # >= 4.0 after +0.6: 3 in both
    }
    for stay_id, values in series.items():
        stay(con, stay_id, hours=96)
        for hours, value in values:
            insert(con, "mimiciv_hosp.labevents", {"subject_id": stay_id, "hadm_id": stay_id, "itemid": 50912,
                                                   "charttime": h(hours), "valuenum": value})
    recompute(con, "kdigo_creatinine", "kdigo_uo", "kdigo_stages", "kdigo-48h", "kdigo-48h__creatinine_rounding")
    moved = _diff_keys(con, "target_kdigo_48h", "variant_kdigo_48h__creatinine_rounding", "stay_id", "aki_stage_creat")
    assert moved == {1: (0, 1), 2: (0, 1)}
    assert by_key(con, "mimiciv_derived.variant_kdigo_48h__creatinine_rounding")[5]["aki_stage_creat"] == 3
    con.close()


def test_sapsii_first_day_window_counts_values_before_and_at_intime(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    # heart rate 35 charted 3 h before admission (stay 1) and exactly at intime (stay 2); 80 at 5 h
    for sid, hours in ((1, -3), (2, 0), (3, 5)):
        stay(con, sid)
        insert(con, "mimiciv_derived.vitalsign", {"subject_id": sid, "stay_id": sid, "charttime": h(hours),
                                                  "heart_rate": 35.0 if sid != 3 else 80.0})
    recompute(con, "first_day_vitalsign", "sapsii", "sapsii-24h", "sapsii-24h__first_day_window")
    moved = _diff_keys(con, "target_sapsii_24h", "variant_sapsii_24h__first_day_window", "stay_id", "hr_score")
    # mimic-code reads intime < t <= intime + 24 h: neither 35 counts; the first-day window scores 11
    assert moved == {1: (0, 11), 2: (0, 11)}
    totals = _diff_keys(con, "target_sapsii_24h", "variant_sapsii_24h__first_day_window", "stay_id", "sapsii")
    assert {k: v[1] - v[0] for k, v in totals.items()} == {1: 11, 2: 11}
    con.close()


def test_apsiii_first_day_gases_count_a_gas_drawn_before_admission(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    for sid, hours in ((1, -3), (2, 2)):
        stay(con, sid, hours=120)
        # pH 7.10 with PaCO2 40 scores 12 (acid-base), a PaO2 of 45 on room air scores 15
        insert(con, "mimiciv_derived.bg", {"subject_id": sid, "hadm_id": sid, "charttime": h(hours), "specimen": "ART.",
                                           "ph": 7.10, "pco2": 40.0, "po2": 45.0})
    recompute(con, "apsiii", "apsiii-24h", "apsiii-24h__first_day_gases")
    default = by_key(con, "mimiciv_derived.target_apsiii_24h")
    variant = by_key(con, "mimiciv_derived.variant_apsiii_24h__first_day_gases")
    # stay 1's gas is 3 h before ICU admission: the default (from intime) does not score it, the
    # first-day variant (from intime - 6 h) does
    assert (default[1]["acidbase_score"], default[1]["pao2_aado2_score"], default[1]["apsiii"]) == (0, 0, 0)
    assert (variant[1]["acidbase_score"], variant[1]["pao2_aado2_score"], variant[1]["apsiii"]) == (12, 15, 27)
    assert default[2] == variant[2] and default[2]["apsiii"] == 27
    con.close()


def test_apsiii_axillary_plus_1_rescores_only_axillary_readings(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    for sid, site in ((1, "Axillary"), (2, "Oral")):
        stay(con, sid)
        insert(con, "mimiciv_derived.vitalsign", {"subject_id": sid, "stay_id": sid, "charttime": h(2),
                                                  "temperature": 35.5, "temperature_site": site})
    recompute(con, "first_day_vitalsign", "apsiii", "apsiii-24h", "apsiii-24h__axillary_plus_1")
    moved = _diff_keys(con, "target_apsiii_24h", "variant_apsiii_24h__axillary_plus_1", "stay_id", "temp_score")
    # 35.5 C scores 2 (< 36); the axillary one is 36.5 C in the variant: 0
    assert moved == {1: (2, 0)}
    assert _diff_keys(con, "target_apsiii_24h", "variant_apsiii_24h__axillary_plus_1", "stay_id", "apsiii") == {1: (2, 0)}
    con.close()


def test_sofa_ventilated_pf_scores_a_ventilated_250(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    # stay 1 ventilated all day with P/F 250; stay 2 not ventilated with P/F 250
    for sid in (1, 2):
        stay(con, sid)
        insert(con, "mimiciv_derived.bg", {"subject_id": sid, "hadm_id": sid, "charttime": h(2), "specimen": "ART.",
                                           "pao2fio2ratio": 250.0})
    insert(con, "mimiciv_derived.ventilation", {"stay_id": 1, "starttime": h(-12), "endtime": h(30),
                                                "ventilation_status": "InvasiveVent"})
    recompute(con, "first_day_sofa", "sofa-24h",
              "sofa-24h__ventilated_pf")
    moved = _diff_keys(con, "target_sofa_24h", "variant_sofa_24h__ventilated_pf", "stay_id", "respiration")
    assert moved == {1: (0, 2)}  # the unventilated 250 scores 2 in both
    assert _diff_keys(con, "target_sofa_24h", "variant_sofa_24h__ventilated_pf", "stay_id", "sofa") == {1: (0, 2)}
    con.close()


def test_sofa_running_infusions_count_a_pre_admission_start_and_not_a_pause(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    cases = {1: (-10, 2, 0.05),  # started 10 h before admission, still running: default none, variant 3
             2: (1, 5, 0.0),     # charted rate 0: no points in either (M4Bench: rate > 0 and <= 0.1 scores 3)
             3: (1, 5, 0.2)}     # inside the window: 4 in both
    for sid, (start, end, rate) in cases.items():
        stay(con, sid)
        insert(con, "mimiciv_derived.norepinephrine", {"stay_id": sid, "starttime": h(start), "endtime": h(end),
                                                       "vaso_rate": rate})
    recompute(con, "first_day_sofa", "sofa-24h",
              "sofa-24h__running_infusions")
    moved = _diff_keys(con, "target_sofa_24h", "variant_sofa_24h__running_infusions", "stay_id", "cardiovascular")
    assert moved == {1: (0, 3)}
    con.close()


@pytest.mark.slow
def test_same_instant_weights_average_the_weight_behind_the_urine_rate(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    for sid in (1, 2):
        stay(con, sid, hours=96)
        # 22.4 mL every hour from hour 1 to 30
        for hr in range(1, 31):
            insert(con, "mimiciv_derived.urine_output", {"stay_id": sid, "charttime": h(hr), "urineoutput": 22.4})
    # stay 1: daily weights 60 and 80 kg charted in the same minute; stay 2: one weight of 80 kg
    insert(con, "mimiciv_icu.chartevents", [
        {"subject_id": 1, "hadm_id": 1, "stay_id": 1, "charttime": h(1), "itemid": 224639, "valuenum": 60.0},
        {"subject_id": 1, "hadm_id": 1, "stay_id": 1, "charttime": h(1), "itemid": 224639, "valuenum": 80.0},
        {"subject_id": 2, "hadm_id": 2, "stay_id": 2, "charttime": h(1), "itemid": 224639, "valuenum": 80.0},
    ])
    recompute(con, "weight_durations", "kdigo_uo", "kdigo_stages", "kdigo-48h", "kdigo-48h__same_instant_weights")
    # default: 60 kg gets a zero-length interval and 80 kg applies: 22.4 / 80 = 0.28 < 0.3 for 24 h -> 3;
    # averaged (70 kg): 0.32, below 0.5 for >= 12 h -> 2
    moved = _diff_keys(con, "target_kdigo_48h", "variant_kdigo_48h__same_instant_weights", "stay_id", "aki_stage_uo")
    assert moved == {1: (3, 2)}
    intervals = rows(con, "SELECT weight, starttime = endtime AS empty FROM mimiciv_derived.weight_durations "
                          f"WHERE stay_id = 1 AND starttime = TIMESTAMP '{h(1)}' ORDER BY weight")
    assert intervals == [{"weight": 60.0, "empty": True}, {"weight": 80.0, "empty": False}]
    con.close()


def test_oasis_ventilation_before_admission_counts_an_episode_ending_before_intime(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    episodes = {1: (-5, -1),   # intubated 5 h before admission, extubated 1 h before: variant 9, default 0
                2: (-10, -7),  # ended 7 h before admission: 0 in both
                3: (2, 8)}     # inside the first day: 9 in both
    for sid, (start, end) in episodes.items():
        stay(con, sid)
        insert(con, "mimiciv_derived.ventilation", {"stay_id": sid, "starttime": h(start), "endtime": h(end),
                                                    "ventilation_status": "InvasiveVent"})
    recompute(con, "oasis", "oasis-24h", "oasis-24h__ventilation_before_admission")
    moved = _diff_keys(con, "target_oasis_24h", "variant_oasis_24h__ventilation_before_admission", "stay_id", "mechvent_score")
    assert moved == {1: (0, 9)}
    totals = _diff_keys(con, "target_oasis_24h", "variant_oasis_24h__ventilation_before_admission", "stay_id", "oasis")
    assert {k: v[1] - v[0] for k, v in totals.items()} == {1: 9}
    con.close()
