"""`data info` and the task-family requirements it reports."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

from clinbench.ehr.info import database_info
from clinbench.ehr.requirements import families_needing, family_requirements, required_tables, supported_families
from clinbench.ehr.schema import create_empty, dataset_tables
from clinbench.errors import DataError

ALL_MIMIC_FAMILIES = ["apsiii", "charlson", "creatinine-baseline", "gcs", "kdigo", "meld", "oasis", "sapsii",
                      "sepsis3", "sirs", "sofa", "suspicion-infection", "urine-output-rate",
                      "vasopressor-equivalents", "ventilation"]


def test_requirements_cover_the_catalogue_families_with_declared_tables():
    assert sorted(family_requirements("mimic-iv")) == ALL_MIMIC_FAMILIES
    assert sorted(family_requirements("eicu")) == ["gcs", "oasis"]
    for dataset in ("mimic-iv", "eicu"):
        declared = {t.qualified for t in dataset_tables(dataset)}
        assert required_tables(dataset) <= declared


def test_requirement_facts():
    mimic = family_requirements("mimic-iv")
    assert mimic["charlson"] == {"mimiciv_hosp.diagnoses_icd", "mimiciv_hosp.patients", "mimiciv_hosp.admissions"}
    assert "mimiciv_hosp.microbiologyevents" in mimic["sepsis3"]
    assert "mimiciv_icu.inputevents" in mimic["sofa"] and "mimiciv_icu.inputevents" not in mimic["gcs"]
    assert families_needing("mimic-iv", ["mimiciv_hosp.prescriptions"]) == ["sepsis3", "suspicion-infection"]
    assert supported_families("eicu", ["eicu_crd.patient", "eicu_crd.nursecharting"]) == ["gcs"]


@pytest.mark.slow
def test_info_on_the_mimic_demo(mimic_demo_db):
    info = database_info(mimic_demo_db)
    assert info.schemas == ["mimiciv_hosp", "mimiciv_icu"]
    assert info.tables["mimiciv_icu.icustays"] == 140 and len(info.tables) == 31
    assert info.datasets == ["mimic-iv"]
    assert info.supported == {"mimic-iv": ALL_MIMIC_FAMILIES}
    # The shared demo's chartevents is reconstructed without text values (RECONSTRUCTED.md).
    assert len(info.caveats) == 1 and info.caveats[0].startswith("mimiciv_icu.chartevents holds no text values")


def test_no_caveat_when_chartevents_has_text(tmp_path):
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    create_empty(con, "mimic-iv", only={"mimiciv_icu.chartevents"})
    con.execute("INSERT INTO mimiciv_icu.chartevents (subject_id, itemid, value, valuenum) VALUES "
                "(1, 220045, '80', 80), (1, 223849, 'CMV/ASSIST', NULL)")
    con.close()
    assert database_info(db).caveats == []


@pytest.mark.slow
def test_info_on_the_partial_eicu_demo(eicu_demo_db):
    info = database_info(eicu_demo_db)
    assert info.datasets == ["eicu"] and info.supported == {"eicu": []}
    assert info.unsupported["eicu"]["gcs"] == ["eicu_crd.nursecharting"]
    # the demo copy also lacks vitalperiodic, which M4Bench's OASIS does not read (nurse-charted vitals)
    assert info.unsupported["eicu"]["oasis"] == ["eicu_crd.intakeoutput", "eicu_crd.nursecharting"]


def test_an_empty_source_table_does_not_support_a_family(tmp_path):
    db = tmp_path / "x.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE SCHEMA mimiciv_hosp")
    for name in ("patients", "admissions", "diagnoses_icd"):
        con.execute(f"CREATE TABLE mimiciv_hosp.{name} (x INTEGER)")
    con.execute("INSERT INTO mimiciv_hosp.patients VALUES (1)")
    con.execute("INSERT INTO mimiciv_hosp.admissions VALUES (1)")
    con.close()
    info = database_info(db)
    assert info.supported["mimic-iv"] == []
    assert info.unsupported["mimic-iv"]["charlson"] == ["mimiciv_hosp.diagnoses_icd"]


def test_info_refuses_missing_and_non_duckdb_files(tmp_path):
    with pytest.raises(DataError, match="does not exist: build it with `clinbench data load`"):
        database_info(tmp_path / "nope.duckdb")
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database\n" * 100)
    with pytest.raises(DataError, match="cannot be opened as a DuckDB database"):
        database_info(junk)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clinbench", "data", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_cli_info_lists_tables_and_families(eicu_demo_db):
    run = _cli("info", str(eicu_demo_db))
    assert run.returncode == 0, run.stderr
    assert "2,520" in run.stdout and "vitalaperiodic" in run.stdout
    assert "eicu: supports 0 task families: none" in run.stdout
    assert "  gcs: lacks eicu_crd.nursecharting" in run.stdout


@pytest.mark.slow
def test_cli_load_errors_are_one_line_with_exit_code_2(eicu_demo_dir, tmp_path):
    out = tmp_path / "e.duckdb"
    run = _cli("load", "eicu", str(eicu_demo_dir), "--out", str(out))
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert lines[-1].startswith(f"error: {eicu_demo_dir} lacks 2 table(s)")
    assert [line for line in lines if line.startswith("error:")] == lines[-1:]
    # The subset lab table in partial/ is named as not read, so its absence is no surprise.
    assert f"warning: partial/ not read: eICU-CRD tables are the files at the top of {eicu_demo_dir}" in lines
    assert not out.exists()


def test_cli_load_reports_rows(tmp_path):
    src = tmp_path / "mimic"
    (src / "hosp").mkdir(parents=True)
    (src / "hosp" / "patients.csv").write_text("subject_id,gender,anchor_age,anchor_year,anchor_year_group,dod\n"
                                               "1,F,52,2150,2011 - 2013,\n")
    run = _cli("load", "mimic-iv", str(src), "--out", str(tmp_path / "m.duckdb"), "--partial")
    assert run.returncode == 0, run.stderr
    assert "loaded 1 tables, 1 rows in" in run.stdout
    assert "mimiciv_hosp.patients" in run.stderr and "1 rows" in run.stderr  # the progress display
    assert "absent (not created): mimiciv_hosp.admissions" in run.stdout


@pytest.mark.slow
def test_cli_load_of_the_mimic_demo_reports_the_official_counts(mimic_demo_dir, tmp_path):
    out = tmp_path / "demo.duckdb"
    run = _cli("load", "mimic-iv", str(mimic_demo_dir), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert "loaded 31 tables, 1,398,500 rows in" in run.stdout
    acceptance = {"patients": "100", "admissions": "275", "icustays": "140", "labevents": "107,727",
                  "chartevents": "668,862", "inputevents": "20,404", "outputevents": "9,362",
                  "prescriptions": "18,087", "microbiologyevents": "2,899", "diagnoses_icd": "4,506"}
    lines = run.stderr.splitlines()
    for table, rows in acceptance.items():
        assert any(f".{table} " in line and f" {rows} rows" in line for line in lines), table
    assert out.is_file() and not list(tmp_path.glob("*.tmp-*"))
