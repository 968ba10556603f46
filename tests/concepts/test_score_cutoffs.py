"""SOFA, SAPS II, APS III, OASIS, SIRS and LODS component tables on hand-made first-day patients.

Each case is one ICU stay whose only charted values sit on a cut-off; the expected points are
read off the published tables (see each concept's header).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.concepts.fixtures2 import by_key, fresh, h, insert, make_template, recompute, rows, stay
from tests.concepts.score_cases import VENT_ALL_DAY, build, lab, same, vital

NE_FLOAT32_0_1 = 0.10000000149011612  # a charted 0.1 read from a 32-bit FLOAT column

SOFA = [
    ("coagulation", lab(platelets_min=150), 0), ("coagulation", lab(platelets_min=149), 1),
    ("coagulation", lab(platelets_min=99), 2), ("coagulation", lab(platelets_min=49), 3),
    ("coagulation", lab(platelets_min=19), 4),
    ("liver", lab(bilirubin_total_max=1.1), 0), ("liver", lab(bilirubin_total_max=1.2), 1),
    ("liver", lab(bilirubin_total_max=2.0), 2), ("liver", lab(bilirubin_total_max=6.0), 3),
    ("liver", lab(bilirubin_total_max=12.0), 4),
    ("cns", {"gcs": {"gcs_min": 15}}, 0), ("cns", {"gcs": {"gcs_min": 13}}, 1),
    ("cns", {"gcs": {"gcs_min": 10}}, 2), ("cns", {"gcs": {"gcs_min": 6}}, 3),
    ("cns", {"gcs": {"gcs_min": 5}}, 4),
    ("renal", lab(creatinine_max=1.1), 0), ("renal", lab(creatinine_max=1.2), 1),
    ("renal", lab(creatinine_max=2.0), 2), ("renal", lab(creatinine_max=3.5), 3),
    ("renal", lab(creatinine_max=5.0), 4), ("renal", {"uo": 500}, 0), ("renal", {"uo": 499}, 3),
    ("renal", {"uo": 199}, 4),
    ("cardiovascular", vital(mbp_min=70), 0), ("cardiovascular", vital(mbp_min=69), 1),
    ("cardiovascular", {"dob": [(1, 5, 2.5)]}, 2), ("cardiovascular", {"dop": [(1, 5, 5.0)]}, 2),
    ("cardiovascular", {"dop": [(1, 5, 5.5)]}, 3), ("cardiovascular", {"dop": [(1, 5, 15.0)]}, 3),
    ("cardiovascular", {"dop": [(1, 5, 15.5)]}, 4),
    ("cardiovascular", {"nor": [(1, 5, 0.1)]}, 3),
    # a 0.1 charted in mimic-code's 32-bit FLOAT rate column reads 0.10000000149 > 0.1: 4, as the anchor scores it
    ("cardiovascular", {"nor": [(1, 5, NE_FLOAT32_0_1)]}, 4),
    ("cardiovascular", {"nor": [(1, 5, 0.11)]}, 4), ("cardiovascular", {"epi": [(1, 5, 0.1)]}, 3),
    ("cardiovascular", {"epi": [(1, 5, 0.2)]}, 4),
    # an infusion started before the window and still running does not count (mimic-code; variant
    # sofa-24h__running_infusions counts it); a zero rate is no dose (M4Bench: rate > 0 and <= 0.1
    # scores 3, where mimic-code's "<= 0.1" also takes 0)
    ("cardiovascular", {"nor": [(-10, 2, 0.05)]}, 0), ("cardiovascular", {"nor": [(1, 5, 0.0)]}, 0),
    # vasopressin is not a SOFA drug: with MAP >= 70 it scores 0
    ("cardiovascular", {"vasopressin": [(1, 5, 2.4)], **vital(mbp_min=75)}, 0),
    ("respiration", {"bg": [{"pao2fio2ratio": 400}]}, 0), ("respiration", {"bg": [{"pao2fio2ratio": 399}]}, 1),
    ("respiration", {"bg": [{"pao2fio2ratio": 299}]}, 2),
    ("respiration", {"bg": [{"pao2fio2ratio": 150}]}, 2),  # < 200 without ventilation stays 2
    # mimic-code's first-day table has no ventilated 200-399 branch (variant sofa-24h__ventilated_pf: 2)
    ("respiration", {"bg": [{"pao2fio2ratio": 250}], "vent": VENT_ALL_DAY}, 0),
    ("respiration", {"bg": [{"pao2fio2ratio": 199}], "vent": VENT_ALL_DAY}, 3),
    ("respiration", {"bg": [{"pao2fio2ratio": 99}], "vent": VENT_ALL_DAY}, 4),
]

SAPSII = [
    ("age_score", {"age": 39}, 0), ("age_score", {"age": 40}, 7), ("age_score", {"age": 60}, 12),
    ("age_score", {"age": 70}, 15), ("age_score", {"age": 75}, 16), ("age_score", {"age": 80}, 18),
    ("hr_score", vital(heart_rate_min=39, heart_rate_max=80), 11), ("hr_score", vital(heart_rate_min=80, heart_rate_max=160), 7),
    ("hr_score", vital(heart_rate_min=80, heart_rate_max=120), 4), ("hr_score", vital(heart_rate_min=69, heart_rate_max=100), 2),
    ("hr_score", vital(heart_rate_min=70, heart_rate_max=119), 0),
    ("sysbp_score", vital(sbp_min=69, sbp_max=120), 13), ("sysbp_score", vital(sbp_min=99, sbp_max=120), 5),
    ("sysbp_score", vital(sbp_min=120, sbp_max=200), 2), ("sysbp_score", vital(sbp_min=100, sbp_max=199), 0),
    ("temp_score", vital(temperature_min=37, temperature_max=39), 3), ("temp_score", vital(temperature_min=37, temperature_max=38.9), 0),
    ("pao2fio2_score", {"bg": [{"pao2fio2ratio": 99}], "vent": VENT_ALL_DAY}, 11),
    ("pao2fio2_score", {"bg": [{"pao2fio2ratio": 199}], "vent": VENT_ALL_DAY}, 9),
    ("pao2fio2_score", {"bg": [{"pao2fio2ratio": 200}], "vent": VENT_ALL_DAY}, 6),
    ("pao2fio2_score", {"bg": [{"pao2fio2ratio": 99}]}, 0),  # not ventilated: not scored (0 in the task reference)
    ("uo_score", {"uo": 499}, 11), ("uo_score", {"uo": 999}, 4), ("uo_score", {"uo": 1000}, 0),
    ("bun_score", lab(bun_max=27.9), 0), ("bun_score", lab(bun_max=28), 6), ("bun_score", lab(bun_max=84), 10),
    ("wbc_score", lab(wbc_min=0.9, wbc_max=5), 12), ("wbc_score", lab(wbc_min=5, wbc_max=20), 3), ("wbc_score", lab(wbc_min=1, wbc_max=19.9), 0),
    ("potassium_score", lab(**same("potassium", 2.9)), 3), ("potassium_score", lab(**same("potassium", 5.0)), 3),
    ("potassium_score", lab(**same("potassium", 4.0)), 0),
    ("sodium_score", lab(**same("sodium", 124)), 5), ("sodium_score", lab(**same("sodium", 145)), 1),
    ("sodium_score", lab(**same("sodium", 140)), 0),
    ("bicarbonate_score", lab(**same("bicarbonate", 14)), 6), ("bicarbonate_score", lab(**same("bicarbonate", 19)), 3),
    ("bicarbonate_score", lab(**same("bicarbonate", 20)), 0),
    ("bilirubin_score", lab(bilirubin_total_max=3.9), 0), ("bilirubin_score", lab(bilirubin_total_max=4.0), 4),
    ("bilirubin_score", lab(bilirubin_total_max=6.0), 9),
    ("gcs_score", {"gcs": {"gcs_min": 5}}, 26), ("gcs_score", {"gcs": {"gcs_min": 8}}, 13),
    ("gcs_score", {"gcs": {"gcs_min": 10}}, 7), ("gcs_score", {"gcs": {"gcs_min": 13}}, 5),
    ("gcs_score", {"gcs": {"gcs_min": 14}}, 0),
    ("comorbidity_score", {"dx": [("B20", 10)]}, 17), ("comorbidity_score", {"dx": [("042", 9)]}, 17),
    ("comorbidity_score", {"dx": [("C910", 10)]}, 10), ("comorbidity_score", {"dx": [("1970", 9)]}, 9),
    ("comorbidity_score", {"dx": [("C787", 10)]}, 9), ("comorbidity_score", {}, 0),
    ("admissiontype_score", {"admission_type": "ELECTIVE", "service": "CSURG"}, 0),
    ("admissiontype_score", {"service": "SURG"}, 8), ("admissiontype_score", {"service": "MED"}, 6),
]

APSIII = [
    ("hr_score", vital(**same("heart_rate", 39)), 8), ("hr_score", vital(**same("heart_rate", 45)), 5),
    ("hr_score", vital(**same("heart_rate", 75)), 0), ("hr_score", vital(**same("heart_rate", 105)), 1),
    ("hr_score", vital(**same("heart_rate", 115)), 5), ("hr_score", vital(**same("heart_rate", 130)), 7),
    ("hr_score", vital(**same("heart_rate", 150)), 13), ("hr_score", vital(**same("heart_rate", 155)), 17),
    # worst = farther from 75: |130-75| > |45-75|
    ("hr_score", vital(heart_rate_min=45, heart_rate_max=130), 7),
    ("mbp_score", vital(**same("mbp", 39)), 23), ("mbp_score", vital(**same("mbp", 59)), 15),
    ("mbp_score", vital(**same("mbp", 90)), 0), ("mbp_score", vital(**same("mbp", 140)), 10),
    ("temp_score", vital(**same("temperature", 32.9)), 20), ("temp_score", vital(**same("temperature", 37)), 0),
    ("temp_score", vital(**same("temperature", 40)), 4), ("temp_score", vital(**same("temperature", 35.5)), 2),
    ("resp_rate_score", vital(**same("resp_rate", 5)), 17), ("resp_rate_score", vital(**same("resp_rate", 19)), 0),
    ("resp_rate_score", vital(**same("resp_rate", 50)), 18),
    ("resp_rate_score", {**vital(**same("resp_rate", 10)), "vent": VENT_ALL_DAY}, 0),
    ("hematocrit_score", lab(**same("hematocrit", 40.9)), 3), ("hematocrit_score", lab(**same("hematocrit", 45)), 0),
    ("hematocrit_score", lab(**same("hematocrit", 50)), 3),
    ("wbc_score", lab(**same("wbc", 0.9)), 19), ("wbc_score", lab(**same("wbc", 2.9)), 5),
    ("wbc_score", lab(**same("wbc", 10)), 0), ("wbc_score", lab(**same("wbc", 24)), 1), ("wbc_score", lab(**same("wbc", 25)), 5),
    ("creatinine_score", lab(**same("creatinine", 0.4)), 3), ("creatinine_score", lab(**same("creatinine", 1.0)), 0),
    ("creatinine_score", lab(**same("creatinine", 1.5)), 4), ("creatinine_score", lab(**same("creatinine", 1.95)), 7),
    # acute renal failure (creatinine >= 1.5 with < 410 mL urine): 10
    # (on an admission coded without end-stage renal disease: mimic-code needs an ESRD flag of 0)
    ("creatinine_score", {**lab(**same("creatinine", 2.0)), "uo": 400, "dx": [("4019", 9)]}, 10),
    ("uo_score", {"uo": 399}, 15), ("uo_score", {"uo": 599}, 8), ("uo_score", {"uo": 899}, 7),
    ("uo_score", {"uo": 1499}, 5), ("uo_score", {"uo": 1999}, 4), ("uo_score", {"uo": 3999}, 0), ("uo_score", {"uo": 4000}, 1),
    ("bun_score", lab(**same("bun", 16.9)), 0), ("bun_score", lab(**same("bun", 19)), 2), ("bun_score", lab(**same("bun", 39)), 7),
    ("bun_score", lab(**same("bun", 79)), 11), ("bun_score", lab(**same("bun", 80)), 12),
    ("sodium_score", lab(**same("sodium", 119)), 3), ("sodium_score", lab(**same("sodium", 134)), 2),
    ("sodium_score", lab(**same("sodium", 140)), 0), ("sodium_score", lab(**same("sodium", 155)), 4),
    ("albumin_score", lab(**same("albumin", 1.9)), 11), ("albumin_score", lab(**same("albumin", 2.4)), 6),
    ("albumin_score", lab(**same("albumin", 3.5)), 0), ("albumin_score", lab(**same("albumin", 4.5)), 4),
    ("bilirubin_score", lab(**same("bilirubin_total", 1.9)), 0), ("bilirubin_score", lab(**same("bilirubin_total", 2.9)), 5),
    ("bilirubin_score", lab(**same("bilirubin_total", 4.9)), 6), ("bilirubin_score", lab(**same("bilirubin_total", 7.9)), 8),
    ("bilirubin_score", lab(**same("bilirubin_total", 8)), 16),
    ("glucose_score", lab(**same("glucose", 39)), 8), ("glucose_score", lab(**same("glucose", 59)), 9),
    ("glucose_score", lab(**same("glucose", 130)), 0), ("glucose_score", lab(**same("glucose", 349)), 3),
    ("glucose_score", lab(**same("glucose", 350)), 5),
    ("acidbase_score", {"bg": [{"ph": 7.1, "pco2": 40}]}, 12), ("acidbase_score", {"bg": [{"ph": 7.4, "pco2": 40}]}, 0),
    ("acidbase_score", {"bg": [{"ph": 7.25, "pco2": 35}]}, 6),
    ("gcs_score", {"gcs": {"gcs_eyes": 1, "gcs_verbal": 1, "gcs_motor": 1}}, 48),
    ("gcs_score", {"gcs": {"gcs_eyes": 3, "gcs_verbal": 4, "gcs_motor": 5}}, 8),
    ("gcs_score", {"gcs": {"gcs_eyes": 4, "gcs_verbal": 5, "gcs_motor": 6}}, 0),
    ("gcs_score", {"gcs": {"gcs_eyes": 1, "gcs_verbal": 1, "gcs_motor": 1, "gcs_unable": 1}}, 0),
    ("pao2_aado2_score", {"bg": [{"po2": 45, "fio2": 21}]}, 15), ("pao2_aado2_score", {"bg": [{"po2": 75}]}, 2),
    ("pao2_aado2_score", {"bg": [{"po2": 95, "fio2": 40}]}, 0),
    ("pao2_aado2_score", {"bg": [{"aado2": 300, "fio2": 60}], "vent": VENT_ALL_DAY}, 9),
]

OASIS = [
    ("preiculos_score", {"admit_hours_before": 0.1}, 5), ("preiculos_score", {"admit_hours_before": 2}, 3),
    ("preiculos_score", {"admit_hours_before": 10}, 0), ("preiculos_score", {"admit_hours_before": 48}, 2),
    ("preiculos_score", {"admit_hours_before": 400}, 1),
    ("age_score", {"age": 23}, 0), ("age_score", {"age": 24}, 3), ("age_score", {"age": 54}, 6),
    ("age_score", {"age": 78}, 9), ("age_score", {"age": 90}, 7),
    ("gcs_score", {"gcs": {"gcs_min": 7}}, 10), ("gcs_score", {"gcs": {"gcs_min": 13}}, 4),
    ("gcs_score", {"gcs": {"gcs_min": 14}}, 3), ("gcs_score", {"gcs": {"gcs_min": 15}}, 0),
    ("heart_rate_score", vital(heart_rate_min=80, heart_rate_max=126), 6), ("heart_rate_score", vital(heart_rate_min=32, heart_rate_max=80), 4),
    ("heart_rate_score", vital(heart_rate_min=80, heart_rate_max=107), 3), ("heart_rate_score", vital(heart_rate_min=80, heart_rate_max=89), 1),
    ("heart_rate_score", vital(heart_rate_min=60, heart_rate_max=88), 0),
    ("mbp_score", vital(mbp_min=20, mbp_max=80), 4), ("mbp_score", vital(mbp_min=50, mbp_max=80), 3),
    ("mbp_score", vital(mbp_min=70, mbp_max=144), 3), ("mbp_score", vital(mbp_min=51, mbp_max=80), 2),
    ("mbp_score", vital(mbp_min=61.33, mbp_max=80), 0),
    ("resp_rate_score", vital(resp_rate_min=5, resp_rate_max=20), 10), ("resp_rate_score", vital(resp_rate_min=14, resp_rate_max=45), 9),
    ("resp_rate_score", vital(resp_rate_min=14, resp_rate_max=31), 6), ("resp_rate_score", vital(resp_rate_min=14, resp_rate_max=23), 1),
    ("resp_rate_score", vital(resp_rate_min=12, resp_rate_max=20), 1), ("resp_rate_score", vital(resp_rate_min=13, resp_rate_max=22), 0),
    ("temp_score", vital(temperature_min=37, temperature_max=40), 6), ("temp_score", vital(temperature_min=35, temperature_max=37), 4),
    ("temp_score", vital(temperature_min=33, temperature_max=37), 3), ("temp_score", vital(temperature_min=36.2, temperature_max=36.5), 2),
    ("temp_score", vital(temperature_min=36.5, temperature_max=37), 2), ("temp_score", vital(**same("temperature", 36.6)), 0),
    ("urineoutput_score", {"uo": 671}, 10), ("urineoutput_score", {"uo": 671.09}, 5), ("urineoutput_score", {"uo": 1427}, 1),
    ("urineoutput_score", {"uo": 3000}, 0), ("urineoutput_score", {"uo": 6897}, 8),
    ("mechvent_score", {"vent": VENT_ALL_DAY}, 9), ("mechvent_score", {"vent": [(2, 8, "NonInvasiveVent")]}, 0),
    ("electivesurgery_score", {"admission_type": "ELECTIVE", "service": "ORTHO"}, 0),
    ("electivesurgery_score", {"service": "SURG"}, 6),
    # nothing charted: the target scores missing components as normal
    ("heart_rate_score", {}, 0), ("urineoutput_score", {}, 0),
]

SIRS = [
    ("temp_score", vital(temperature_min=35.9, temperature_max=37), 1), ("temp_score", vital(temperature_min=37, temperature_max=38.1), 1),
    ("temp_score", vital(temperature_min=36, temperature_max=38), 0),
    ("heart_rate_score", vital(heart_rate_max=91), 1), ("heart_rate_score", vital(heart_rate_max=90), 0),
    ("resp_score", vital(resp_rate_max=21), 1), ("resp_score", {**vital(resp_rate_max=16), "bgart": {"pco2_min": 31}}, 1),
    ("resp_score", vital(resp_rate_max=20), 0),
    ("wbc_score", lab(wbc_min=3.9, wbc_max=8), 1), ("wbc_score", lab(wbc_min=8, wbc_max=12.1), 1),
    ("wbc_score", lab(wbc_min=8, wbc_max=8, bands_max=11), 1), ("wbc_score", lab(wbc_min=4, wbc_max=12), 0),
    ("wbc_score", {}, 0),
]

LODS = [
    ("neurologic", {"gcs": {"gcs_min": 5}}, 5), ("neurologic", {"gcs": {"gcs_min": 8}}, 3),
    ("neurologic", {"gcs": {"gcs_min": 13}}, 1), ("neurologic", {"gcs": {"gcs_min": 14}}, 0),
    ("cardiovascular", vital(heart_rate_min=29, heart_rate_max=80, sbp_min=120, sbp_max=130), 5),
    ("cardiovascular", vital(heart_rate_min=80, heart_rate_max=80, sbp_min=39, sbp_max=130), 5),
    ("cardiovascular", vital(heart_rate_min=80, heart_rate_max=80, sbp_min=69, sbp_max=130), 3),
    ("cardiovascular", vital(heart_rate_min=80, heart_rate_max=80, sbp_min=120, sbp_max=270), 3),
    ("cardiovascular", vital(heart_rate_min=80, heart_rate_max=140, sbp_min=120, sbp_max=130), 1),
    ("cardiovascular", vital(heart_rate_min=80, heart_rate_max=80, sbp_min=89, sbp_max=130), 1),
    ("cardiovascular", vital(heart_rate_min=80, heart_rate_max=80, sbp_min=120, sbp_max=130), 0),
    ("renal", {**lab(bun_max=5, creatinine_max=1.0), "uo": 499}, 5),
    ("renal", {**lab(bun_max=56, creatinine_max=1.0), "uo": 1500}, 5),
    ("renal", {**lab(bun_max=5, creatinine_max=1.6), "uo": 1500}, 3),
    ("renal", {**lab(bun_max=28, creatinine_max=1.0), "uo": 1500}, 3),
    ("renal", {**lab(bun_max=5, creatinine_max=1.0), "uo": 10000}, 3),
    ("renal", {**lab(bun_max=5, creatinine_max=1.2), "uo": 1500}, 1),
    ("renal", {**lab(bun_max=7.5, creatinine_max=1.0), "uo": 1500}, 1),
    ("renal", {**lab(bun_max=5, creatinine_max=1.0), "uo": 1500}, 0),
    ("pulmonary", {"bg": [{"pao2fio2ratio": 149}], "vent": VENT_ALL_DAY}, 3),
    ("pulmonary", {"bg": [{"pao2fio2ratio": 150}], "vent": VENT_ALL_DAY}, 1),
    ("pulmonary", {"bg": [{"pao2fio2ratio": 100}]}, 0),
    ("hematologic", lab(wbc_min=0.9, wbc_max=5, platelets_min=200), 3), ("hematologic", lab(wbc_min=2.4, wbc_max=5, platelets_min=200), 1),
    ("hematologic", lab(wbc_min=5, wbc_max=5, platelets_min=49), 1), ("hematologic", lab(wbc_min=5, wbc_max=50, platelets_min=200), 1),
    ("hematologic", lab(wbc_min=5, wbc_max=10, platelets_min=200), 0),
    ("hepatic", lab(bilirubin_total_max=2.0), 1), ("hepatic", lab(pt_min=12, pt_max=15.1), 1),
    ("hepatic", lab(pt_min=2.9, pt_max=12), 1), ("hepatic", lab(pt_min=12, pt_max=13, bilirubin_total_max=1.0), 0),
]

# SAPS II reads vitals, labs and GCS from the raw-level tables (mimic-code's window); its point
# tables are the same in variant sapsii-24h__first_day_window, which reads these first-day aggregates
SCORES = {
    "target_sofa_24h": SOFA, "variant_sapsii_24h__first_day_window": SAPSII, "target_apsiii_24h": APSIII,
    "target_oasis_24h": OASIS, "target_sirs_24h": SIRS, "lods": LODS,
}
TOTALS = {"target_sofa_24h": "sofa", "variant_sapsii_24h__first_day_window": "sapsii", "target_apsiii_24h": "apsiii",
          "target_oasis_24h": "oasis", "target_sirs_24h": "sirs", "lods": "lods"}
CONCEPTS = ("first_day_sofa", "sapsii", "apsiii", "oasis", "sirs", "lods",  # their helpers are part of their statements
            "sofa-24h", "sapsii-24h", "apsiii-24h", "oasis-24h", "sirs-24h", "sapsii-24h__first_day_window")


def _cases():
    stay_id = 1000
    for table, cases in SCORES.items():
        for column, spec, expected in cases:
            stay_id += 1
            yield stay_id, table, column, spec, expected


CASES = list(_cases())


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("scores")
    con = fresh(make_template(folder / "template.duckdb"), folder / "scores.duckdb")
    for stay_id, _, _, spec, _ in CASES:
        build(con, stay_id, spec)
    recompute(con, *CONCEPTS)
    yield {table: by_key(con, f"mimiciv_derived.{table}") for table in SCORES} | {"con": con}
    con.close()


@pytest.mark.parametrize(("stay_id", "table", "column", "spec", "expected"), CASES,
                         ids=[f"{t.removeprefix('target_').removeprefix('variant_')}-{c}-{s}" for s, t, c, _, _ in CASES])
def test_component_cut_off(scored, stay_id, table, column, spec, expected):
    assert scored[table][stay_id][column] == expected


@pytest.mark.parametrize("table", list(SCORES))
def test_total_is_the_sum_of_components_with_missing_as_zero(scored, table):
    total = TOTALS[table]
    for row in scored[table].values():
        parts = [v for k, v in row.items() if k not in {"subject_id", "hadm_id", "stay_id", total}]
        assert row[total] == sum(p or 0 for p in parts)


def test_every_stay_has_exactly_one_row(scored):
    for table in SCORES:
        assert len(scored[table]) == len(CASES)


def test_sofa_target_columns(scored):
    con = scored["con"]
    cols = [d[0] for d in con.execute("SELECT * FROM mimiciv_derived.target_sofa_24h LIMIT 0").description]
    assert cols == ["subject_id", "hadm_id", "stay_id", "sofa", "respiration", "coagulation", "liver", "cardiovascular", "cns", "renal"]


# ---------------------------------------------------------------- hourly SOFA

@pytest.mark.slow
def test_hourly_sofa_keeps_a_component_for_24_hourly_rows(tmp_path):
    con = fresh(make_template(tmp_path / "t.duckdb"), tmp_path / "hourly.duckdb")
    stay(con, 7)
    for hr in range(-24, 49):
        insert(con, "mimiciv_derived.icustay_hourly", {"stay_id": 7, "hr": hr, "endtime": h(hr)})
    # GCS 9 at 2.5 h falls in the hour ending at 3 h -> cns 3 from hr 3 to hr 26
    insert(con, "mimiciv_derived.gcs", {"subject_id": 7, "stay_id": 7, "charttime": h(2.5), "gcs": 9})
    # norepinephrine 0.1 mcg/kg/min spanning the end of hour 30 only -> cardiovascular 3
    insert(con, "mimiciv_derived.norepinephrine", {"stay_id": 7, "starttime": h(29.5), "endtime": h(30.5), "vaso_rate": NE_FLOAT32_0_1})
    recompute(con, "sofa")
    got = {r["hr"]: r for r in rows(con, "SELECT * FROM mimiciv_derived.sofa WHERE stay_id = 7")}
    assert min(got) == 0  # hours before admission feed the window but are not reported
    assert got[2]["cns_24hours"] == 0
    assert got[3]["cns"] == 3 and got[26]["cns_24hours"] == 3 and got[27]["cns_24hours"] == 0
    assert got[30]["cardiovascular"] == 3 and got[29]["cardiovascular"] is None
    # the 24 h window at hr 30 covers hr 7..30: the cns point has left, the vasopressor point counts
    assert (got[26]["sofa_24hours"], got[30]["sofa_24hours"], got[48]["sofa_24hours"]) == (3, 3, 3)
    assert got[28]["sofa_24hours"] == 0
    con.close()
