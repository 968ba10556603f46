"""Table declarations: official names, order and types, checked against the demo headers."""

from __future__ import annotations

import gzip

import duckdb
import pytest

from clinbench.ehr.schema import columns, create_empty, dataset_tables, find_table
from clinbench.errors import DataError


def test_every_official_table_is_declared_once():
    mimic = {t.qualified for t in dataset_tables("mimic-iv")}
    eicu = {t.qualified for t in dataset_tables("eicu")}
    assert len(mimic) == len(dataset_tables("mimic-iv")) == 22 + 9 + 6 + 4
    assert len(eicu) == len(dataset_tables("eicu")) == 31
    assert {"mimiciv_ed.edstays", "mimiciv_note.discharge", "mimiciv_icu.caregiver"} <= mimic
    assert {"eicu_crd.lab", "eicu_crd.nursecharting", "eicu_crd.vitalperiodic", "eicu_crd.intakeoutput"} <= eicu


def test_official_types_of_key_columns():
    def type_of(qualified: str, column: str) -> str:
        ds = "eicu" if qualified.startswith("eicu") else "mimic-iv"
        return {c.name: c.type for c in find_table(ds, qualified).columns}[column]

    assert type_of("mimiciv_icu.chartevents", "valuenum") == "DOUBLE"
    assert type_of("mimiciv_icu.chartevents", "value") == "VARCHAR"
    assert type_of("mimiciv_icu.chartevents", "storetime") == "TIMESTAMP"
    assert type_of("mimiciv_icu.inputevents", "rate") == "DOUBLE"
    assert type_of("mimiciv_icu.inputevents", "patientweight") == "DOUBLE"
    assert type_of("mimiciv_icu.outputevents", "value") == "DOUBLE"
    assert type_of("mimiciv_hosp.labevents", "ref_range_upper") == "DOUBLE"
    assert type_of("mimiciv_hosp.patients", "dod") == "DATE"
    assert type_of("mimiciv_hosp.admissions", "admittime") == "TIMESTAMP"
    assert type_of("mimiciv_icu.procedureevents", "originalamount") == "DOUBLE"
    assert type_of("eicu_crd.lab", "labresult") == "DOUBLE"
    assert type_of("eicu_crd.patient", "patientunitstayid") == "INTEGER"
    assert type_of("eicu_crd.nursecharting", "nursingchartid") == "BIGINT"


def test_sources_map_physionet_files_to_tables():
    assert find_table("mimic-iv", "mimiciv_hosp.patients").source == "hosp/patients"
    assert find_table("mimic-iv", "mimiciv_ed.triage").source == "ed/triage"
    assert find_table("eicu", "eicu_crd.apacheapsvar").source == "apacheApsVar"
    assert find_table("eicu", "eicu_crd.nursecharting").source == "nurseCharting"


def test_declared_columns_match_official_demo_headers(mimic_demo_dir, eicu_demo_dir):
    checked = 0
    for dataset, root in (("mimic-iv", mimic_demo_dir), ("eicu", eicu_demo_dir)):
        for table in dataset_tables(dataset):
            path = root / f"{table.source}.csv.gz"
            if not path.exists():
                continue
            with gzip.open(path, "rt") as fh:
                header = fh.readline().strip().lower().split(",")
            assert header == list(table.column_names), table.qualified
            checked += 1
    assert checked == 31 + 27  # the eICU demo copy holds 27 of the 31 tables at top level


def test_create_empty_builds_typed_tables():
    con = duckdb.connect()
    create_empty(con, "eicu", only={"eicu_crd.patient"})
    got = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                      "WHERE table_schema='eicu_crd' AND table_name='patient' ORDER BY ordinal_position").fetchall()
    assert got[0] == ("patientunitstayid", "INTEGER") and ("admissionweight", "DOUBLE") in got
    assert con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema='eicu_crd'").fetchone()[0] == 1


def test_bad_declarations_and_datasets_are_refused():
    with pytest.raises(ValueError, match="bad column declaration"):
        columns("x NUMBER")
    with pytest.raises(DataError, match="use 'mimic-iv' or 'eicu'"):
        dataset_tables("mimic-iii")
