"""Reference-validity variants: each one moves the rows its clinical reason says it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.variants import list_variants, variant_diff
from clinbench.errors import ConceptError
from tests.concepts.fixtures2 import fresh, h, insert, make_template, recompute, rows, stay

# target-level variants; each has a hand-made test of the rows it moves (test_variants_concepts.py,
# test_target_variants.py)
NAMES = sorted(["apsiii-24h__axillary_plus_1", "apsiii-24h__first_day_gases", "kdigo-48h__creatinine_rounding",
                "kdigo-48h__same_instant_weights",
                "sapsii-24h__first_day_window", "sofa-24h__missing_as_null", "sofa-24h__running_infusions",
                "sofa-24h__ventilated_pf", "suspicion-infection__no_screening",
                "vasopressor-equivalents__with_angiotensin", "vasopressor-equivalents__concurrent_rows_summed",
                "sepsis3__paused_infusions_unscored",
                "ventilation__cpap_psv_noninvasive",
                "apsiii-24h__missing_as_null", "charlson__age_below_bands", "gcs-24h__latest_charting",
                "gcs-24h__missing_as_null", "oasis-24h__missing_as_null",
                "oasis-24h__ventilation_before_admission", "sapsii-24h__missing_as_null",
                "sirs-24h__missing_as_null", "suspicion-infection__cancelled_not_positive",
                "suspicion-infection__same_minute_before", "suspicion-infection__timed_cultures_first",
                "urine-output-rate__hour_boundaries"])
ANGIOTENSIN = "vasopressor-equivalents__with_angiotensin"
# variants whose convention the synthetic generator never exercises (its creatinine is not charted
# in 0.1 steps, its infusions do not overlap or start before admission, every stay has first-day
# GCS, no culture is cancelled, a stay charts urine output in whole-hour steps from one start
# minute where both window rules agree, no arterial gas is drawn in the 6 h before admission);
# each has a hand-made test
QUIET_ON_SYNTHETIC = {"kdigo-48h__creatinine_rounding", "sepsis3__paused_infusions_unscored", "vasopressor-equivalents__concurrent_rows_summed", "kdigo-48h__same_instant_weights",
                      "oasis-24h__ventilation_before_admission",
                      "sofa-24h__running_infusions", "gcs-24h__missing_as_null",
                      "apsiii-24h__first_day_gases",
                      "suspicion-infection__cancelled_not_positive", "urine-output-rate__hour_boundaries"}


@pytest.mark.slow
def test_the_quiet_variants_really_move_nothing_on_synthetic_data(synth_db):
    # if the generator starts exercising one, move it back into the test above
    assert {n for n in QUIET_ON_SYNTHETIC if variant_diff(synth_db, n).differs} == set()


def test_list_variants_names_references_and_reasons():
    found = [v for v in list_variants() if v.name in NAMES]
    assert [v.name for v in found] == NAMES
    for v in found:
        assert v.target_table == f"mimiciv_derived.target_{v.reference.replace('-', '_')}"
        assert "Clinical reason" in v.reason


@pytest.mark.parametrize("name", [n for n in NAMES if n not in QUIET_ON_SYNTHETIC])
def test_each_variant_differs_from_its_default_on_synthetic_data(synth_db, name):
    diff = variant_diff(synth_db, name, examples=5)
    assert diff.differs
    assert diff.examples, "the rows that move are shown"
    con = duckdb.connect(str(synth_db), read_only=True)
    # every example is a real difference between the two tables
    for ex in diff.examples:
        where = " AND ".join(f"{k} = ?" for k in diff.keys)
        key = [ex[k] for k in diff.keys]
        d = con.execute(f'SELECT CAST("{ex["column_name"]}" AS VARCHAR) FROM {diff.variant.target_table} WHERE {where}', key).fetchall()
        v = con.execute(f'SELECT CAST("{ex["column_name"]}" AS VARCHAR) FROM {diff.variant.table} WHERE {where}', key).fetchall()
        assert (d[0][0] if d else None) == ex["default_value"] and (v[0][0] if v else None) == ex["variant_value"]
        assert ex["default_value"] != ex["variant_value"]
    con.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return make_template(tmp_path_factory.mktemp("variants") / "t.duckdb")


def test_sofa_missing_as_null_moves_unmeasured_organs(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    stay(con, 1)
    insert(con, "mimiciv_derived.first_day_lab", {"stay_id": 1, "platelets_min": 90, "bilirubin_total_max": 1.0, "creatinine_max": 1.0})
    recompute(con, "first_day_sofa", "sofa-24h", "sofa-24h__missing_as_null")
    default = rows(con, "SELECT sofa, coagulation, respiration FROM mimiciv_derived.target_sofa_24h")
    variant = rows(con, "SELECT sofa, coagulation, respiration FROM mimiciv_derived.variant_sofa_24h__missing_as_null")
    assert default == [{"sofa": 2, "coagulation": 2, "respiration": 0}]
    assert variant == [{"sofa": None, "coagulation": 2, "respiration": None}]
    con.close()


def test_no_screening_drops_the_mrsa_swab(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    stay(con, 2)
    insert(con, "mimiciv_derived.antibiotic", {"subject_id": 2, "hadm_id": 2, "stay_id": 2, "antibiotic": "Vancomycin", "starttime": h(5), "stoptime": h(20)})
    insert(con, "mimiciv_hosp.microbiologyevents", {"microevent_id": 1, "subject_id": 2, "hadm_id": 2, "micro_specimen_id": 11,
                                                   "chartdate": h(0), "charttime": h(1), "spec_type_desc": "MRSA SCREEN"})
    recompute(con, "suspicion-infection", "suspicion-infection__no_screening")
    assert rows(con, "SELECT suspected_infection, specimen FROM mimiciv_derived.target_suspicion_infection") == [{"suspected_infection": 1, "specimen": "MRSA SCREEN"}]
    assert rows(con, "SELECT suspected_infection, specimen FROM mimiciv_derived.variant_suspicion_infection__no_screening") == [{"suspected_infection": 0, "specimen": None}]
    con.close()


def test_angiotensin_adds_to_the_dose_and_cuts_intervals(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    stay(con, 3)
    insert(con, "mimiciv_derived.vasoactive_agent", {"stay_id": 3, "starttime": h(0), "endtime": h(4), "norepinephrine": 0.1})
    insert(con, "mimiciv_derived.norepinephrine_equivalent_dose", {"stay_id": 3, "starttime": h(0), "endtime": h(4), "norepinephrine_equivalent_dose": 0.1})
    insert(con, "mimiciv_icu.inputevents", {"subject_id": 3, "hadm_id": 3, "stay_id": 3, "starttime": h(2), "endtime": h(6),
                                           "itemid": 229709, "rate": 20.0, "rateuom": "ng/kg/min"})
    recompute(con, "vasopressor-equivalents", "vasopressor-equivalents__with_angiotensin")
    default = [(r["starttime"], r["endtime"], r["norepinephrine_equivalent_dose"]) for r in rows(con, "SELECT * FROM mimiciv_derived.target_vasopressor_equivalents")]
    variant = [(r["starttime"], r["endtime"], r["norepinephrine_equivalent_dose"]) for r in rows(con, "SELECT * FROM mimiciv_derived.variant_vasopressor_equivalents__with_angiotensin ORDER BY starttime")]
    assert default == [(h(0), h(4), 0.1)]
    # 20 ng/kg/min angiotensin II = 0.2 mcg/kg/min norepinephrine
    assert variant == [(h(0), h(2), 0.1), (h(2), h(4), 0.3), (h(4), h(6), 0.2)]
    con.close()


def test_concurrent_rows_of_one_agent_add_up_and_an_exact_repeat_counts_once(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    stay(con, 3)
    insert(con, "mimiciv_derived.norepinephrine", [
        {"stay_id": 3, "starttime": h(0), "endtime": h(4), "vaso_rate": 0.1},
        {"stay_id": 3, "starttime": h(2), "endtime": h(6), "vaso_rate": 0.05},   # a second pump from hour 2
        {"stay_id": 3, "starttime": h(2), "endtime": h(6), "vaso_rate": 0.05},   # the same row charted twice
    ])
    insert(con, "mimiciv_derived.vasopressin", {"stay_id": 3, "starttime": h(0), "endtime": h(6), "vaso_rate": 2.4})
    insert(con, "mimiciv_derived.dobutamine", {"stay_id": 3, "starttime": h(6), "endtime": h(8), "vaso_rate": 5.0})
    recompute(con, "vasoactive_agent", "vasopressor-equivalents", "vasopressor-equivalents__concurrent_rows_summed")
    # vasoactive_agent repeats 2-4 h once per combination of covering norepinephrine rows
    repeats = rows(con, f"SELECT count(*) AS n FROM mimiciv_derived.vasoactive_agent WHERE starttime = TIMESTAMP '{h(2)}'")
    assert repeats == [{"n": 3}]
    default = [(r["starttime"], r["endtime"], r["norepinephrine_equivalent_dose"]) for r in rows(
        con, "SELECT * FROM mimiciv_derived.target_vasopressor_equivalents ORDER BY starttime")]
    variant = [(r["starttime"], r["endtime"], r["norepinephrine_equivalent_dose"]) for r in rows(
        con, "SELECT * FROM mimiciv_derived.variant_vasopressor_equivalents__concurrent_rows_summed ORDER BY starttime")]
    # vasopressin 2.4 units/h x 2.5 / 60 = 0.1; the dobutamine-only 6-8 h is left out by both
    assert default == [(h(0), h(2), 0.2), (h(2), h(4), 0.2), (h(4), h(6), 0.15)]
    assert variant == [(h(0), h(2), 0.2), (h(2), h(4), 0.25), (h(4), h(6), 0.15)]
    con.close()


def test_cpap_psv_without_airway_is_noninvasive(template, tmp_path):
    con = fresh(template, tmp_path / "v.duckdb")
    for sid in (4, 5):
        stay(con, sid)
        for hr in (1, 2, 3):
            insert(con, "mimiciv_derived.ventilator_setting", {"subject_id": sid, "stay_id": sid, "charttime": h(hr), "ventilator_mode": "CPAP/PSV"})
    for hr in (1, 2, 3):  # stay 5 has an endotracheal tube charted alongside
        insert(con, "mimiciv_derived.oxygen_delivery", {"subject_id": 5, "stay_id": 5, "charttime": h(hr), "o2_flow": 5, "o2_delivery_device_1": "Endotracheal tube"})
    recompute(con, "mimiciv_derived.ventilation", "mimiciv_derived.target_ventilation", "ventilation__cpap_psv_noninvasive")
    default = {r["stay_id"]: r["ventilation_status"] for r in rows(con, "SELECT * FROM mimiciv_derived.target_ventilation")}
    variant = {r["stay_id"]: r["ventilation_status"] for r in rows(con, "SELECT * FROM mimiciv_derived.variant_ventilation__cpap_psv_noninvasive")}
    assert default == {4: "InvasiveVent", 5: "InvasiveVent"}
    assert variant == {4: "NonInvasiveVent", 5: "InvasiveVent"}
    con.close()


def test_variant_diff_errors_are_actionable(synth_db, tmp_path):
    with pytest.raises(ConceptError, match="is not a variant"):
        variant_diff(synth_db, "mimiciv_derived.target_sofa_24h")
    raw = tmp_path / "raw.duckdb"
    duckdb.connect(str(raw)).close()
    with pytest.raises(ConceptError, match="clinbench concepts build"):
        variant_diff(raw, NAMES[0])


@pytest.mark.slow
def test_cli_lists_variants_and_moved_rows(synth_db):
    run = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "variants", str(synth_db), ANGIOTENSIN],
                         capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert ANGIOTENSIN in run.stdout
    assert "Rows that move" in run.stdout and "Clinical reason" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "variants", str(Path(synth_db).parent / "missing.duckdb")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    negative = subprocess.run([sys.executable, "-m", "clinbench", "concepts", "variants", str(synth_db), ANGIOTENSIN,
                               "--examples", "-1"], capture_output=True, text=True)
    assert negative.returncode == 2 and "Invalid value for '--examples'" in negative.stderr
    assert "Traceback" not in negative.stderr
