"""Hand-made source databases for the derive tests (workspaces, variants, leak scan).

A tiny MIMIC-IV + eICU database: a few rows in the source tables, some intermediate
``mimiciv_derived`` tables, the tables each standard task drops, and one target table per
reference holding a marker string that must never reach a workspace. Compression is
switched off so a byte scan of the source finds the marker (the positive control).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from clinbench.concepts.build import META_SCHEMA, META_TABLE

from clinbench.derive.catalogue import load_catalogue
from clinbench.ehr.schema import create_empty

MARKER = "ZQXREFMARKER7741"
TS_COLUMNS = {"charttime", "starttime", "endtime", "antibiotic_time", "culture_time",
              "suspected_infection_time", "sofa_time"}
TEXT_COLUMNS = {"specimen", "ventilation_status", "gender", "antibiotic", "uniquepid"}


def drop_marker(table: str) -> str:
    """A marker planted in a concept that standard tasks dropping it must not see."""
    return f"DROPMARK_{table.upper()}_91"


def _type(col: str) -> str:
    if col in TS_COLUMNS:
        return "TIMESTAMP"
    if col in TEXT_COLUMNS:
        return "VARCHAR"
    if col == "sepsis3":
        return "BOOLEAN"
    return "DOUBLE" if col not in {"subject_id", "hadm_id", "stay_id", "patientunitstayid", "ab_id",
                                   "ventilation_seq", "patienthealthsystemstayid"} else "INTEGER"


def _value(col: str, i: int) -> str:
    t = _type(col)
    if t == "TIMESTAMP":
        return f"TIMESTAMP '2150-01-0{i} 0{i}:00:00'"
    if t == "VARCHAR":
        return f"'{MARKER}'" if col in {"specimen", "ventilation_status"} else f"'v{i}'"
    if t == "BOOLEAN":
        return "true"
    return str(i) if t == "INTEGER" else f"{i}.5"


def make_source_db(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("PRAGMA force_compression='uncompressed'")
    create_empty(con, "mimic-iv")
    create_empty(con, "eicu")
    con.execute("INSERT INTO mimiciv_hosp.patients (subject_id, gender, anchor_age, anchor_year) VALUES (1, 'F', 60, 2150), (2, 'M', 70, 2150)")
    con.execute("INSERT INTO mimiciv_icu.icustays (subject_id, hadm_id, stay_id, intime, outtime) VALUES "
                "(1, 10, 100, '2150-01-01 00:00', '2150-01-03 00:00'), (2, 20, 200, '2150-01-01 00:00', '2150-01-02 00:00')")
    con.execute("INSERT INTO mimiciv_icu.chartevents (subject_id, hadm_id, stay_id, charttime, itemid, value, valuenum, valueuom) VALUES "
                "(1, 10, 100, '2150-01-01 01:00', 220045, '88', 88, 'bpm'), (1, 10, 100, '2150-01-01 02:00', 223900, 'Oriented', NULL, NULL),"
                "(2, 20, 200, '2150-01-01 03:00', 220045, '120', 120, 'bpm')")
    con.execute("INSERT INTO mimiciv_hosp.d_labitems VALUES (50912, 'Creatinine', 'Blood', 'Chemistry'), (50813, 'Lactate', 'Blood', 'Blood Gas')")
    con.execute("INSERT INTO mimiciv_hosp.labevents (labevent_id, subject_id, hadm_id, itemid, charttime, value, valuenum) VALUES "
                "(1, 1, 10, 50912, '2150-01-01 04:00', '1.2', 1.2), (2, 2, 20, 50912, '2150-01-01 05:00', '2.4', 2.4), (3, 2, 20, 99999, '2150-01-01 05:00', 'x', NULL)")
    con.execute("INSERT INTO eicu_crd.patient (patientunitstayid, uniquepid, patienthealthsystemstayid) VALUES (1000, '001-1', 500)")
    con.execute("INSERT INTO eicu_crd.nursecharting (nursingchartid, patientunitstayid, nursingchartoffset, nursingchartcelltypecat, nursingchartcelltypevalname, nursingchartvalue) VALUES "
                "(1, 1000, 30, 'Scores', 'GCS Total', '14'), (2, 1000, 40, 'Vital Signs', 'Heart Rate', '90'), (3, 1000, 50, NULL, NULL, NULL)")
    con.execute("CREATE SCHEMA mimiciv_derived")
    con.execute("CREATE SCHEMA eicu_derived")
    con.execute("CREATE TABLE mimiciv_derived.vitalsign AS SELECT stay_id, charttime, valuenum AS heart_rate FROM mimiciv_icu.chartevents WHERE itemid = 220045")
    dropped = {d for t in load_catalogue().values() for d in t.drop}
    for name in sorted(dropped):
        con.execute(f"CREATE TABLE mimiciv_derived.{name} (stay_id INTEGER, answer VARCHAR)")
        con.execute(f"INSERT INTO mimiciv_derived.{name} VALUES (100, '{drop_marker(name)}')")
    done = set()
    for spec in load_catalogue().values():
        if spec.target_table in done:
            continue
        done.add(spec.target_table)
        cols = [*spec.required_columns, "note"]
        ddl = ", ".join(f'"{c}" {_type(c) if c != "note" else "VARCHAR"}' for c in cols)
        con.execute(f"CREATE TABLE {spec.target_table} ({ddl})")
        for i in (1, 2):
            vals = ", ".join(_value(c, i) if c != "note" else f"'{MARKER}'" for c in cols)
            con.execute(f"INSERT INTO {spec.target_table} VALUES ({vals})")
    con.execute("CREATE TABLE mimiciv_derived.variant_sofa_24h__no_lookback AS SELECT 1 AS stay_id, 'x' AS note")
    # bookkeeping rows as a build leaves them (with a SQL hash no file has): these hand-made tables stand for a
    # clinbench build's, which a later build may replace (one without a row is another tool's and is kept)
    con.execute(f"CREATE SCHEMA {META_SCHEMA}")
    con.execute(f"CREATE TABLE {META_TABLE} (name VARCHAR PRIMARY KEY, sql_sha256 VARCHAR, input_fingerprint VARCHAR, "
                "built_at TIMESTAMP, seconds DOUBLE, rows BIGINT, profile VARCHAR)")
    con.execute(f"INSERT INTO {META_TABLE} SELECT schema_name || '.' || table_name, 'hand-made', '', now()::TIMESTAMP, 0, "
                "NULL, NULL FROM duckdb_tables() WHERE schema_name IN ('mimiciv_derived', 'eicu_derived')")
    con.execute("CHECKPOINT")
    con.close()
    return path
