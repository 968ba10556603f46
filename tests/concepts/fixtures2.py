"""Hand-made patients for the organ-failure, score, sepsis, comorbidity, eICU and target tests.

A template database holds every official MIMIC-IV and eICU table and every derived table,
all empty (the derived ones are built once from the empty raw tables, so their columns are
exactly the concepts' own). A test copies the template, inserts a few rows by column name
into raw and/or derived tables, and recomputes only the concepts under test with
``recompute`` - so a hand-made derived row (a first-day lab, a ventilation episode) is not
overwritten by rebuilding its inputs.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

from clinbench.concepts.build import build_concepts, output_table
from clinbench.concepts.catalog import find_concept, load_concepts
from clinbench.concepts.graph import dependency_map
from clinbench.concepts.helpers import statement
from clinbench.ehr.schema import create_empty

T0 = datetime(2150, 1, 1, 8, 0)  # every hand-made ICU stay starts here


def h(hours: float) -> datetime:
    """A time ``hours`` after T0 (negative: before)."""
    return T0 + timedelta(hours=hours)


def make_template(path: Path) -> Path:
    con = duckdb.connect(str(path))
    try:
        create_empty(con, "mimic-iv")
        create_empty(con, "eicu")
    finally:
        con.close()
    build_concepts(path, profile="mimic-code")  # the audits' hand-computed values are mimic-code's
    return path


def fresh(template: Path, dest: Path) -> duckdb.DuckDBPyConnection:
    shutil.copy(template, dest)
    return duckdb.connect(str(dest))


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict] | dict) -> None:
    """Insert rows given as {column: value}; unnamed columns stay NULL."""
    for row in [rows] if isinstance(rows, dict) else rows:
        cols = ", ".join(f'"{c}"' for c in row)
        marks = ", ".join("?" for _ in row)
        con.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", list(row.values()))


def recompute(con: duckdb.DuckDBPyConnection, *names: str) -> None:
    """Re-run the named concepts/targets/variants (in the order given) from the current rows, each as the build
    runs it: the helpers it reads are part of its statement (``helpers.statement``), so a helper is no name here."""
    concepts = load_concepts()
    deps = dependency_map(concepts)
    for name in names:
        concept = find_concept(name, concepts)
        assert not concept.helper, f"{name} is a helper: recompute what reads it"
        out = output_table(concept, "mimiciv_derived")
        con.execute(f"CREATE OR REPLACE TABLE {out} AS {statement(concept.qualified, concepts, deps, 'mimiciv_derived').body}")


def stay(con: duckdb.DuckDBPyConnection, stay_id: int, *, subject_id: int | None = None,
         hadm_id: int | None = None, age: int = 60, hours: float = 72, admit_hours_before: float = 2,
         admission_type: str = "EW EMER.", gender: str = "M") -> None:
    """An ICU stay (intime T0) with its admission, patient and derived age row."""
    subject_id = subject_id or stay_id
    hadm_id = hadm_id or stay_id
    insert(con, "mimiciv_hosp.patients", {"subject_id": subject_id, "gender": gender, "anchor_age": age, "anchor_year": 2150})
    insert(con, "mimiciv_hosp.admissions", {
        "subject_id": subject_id, "hadm_id": hadm_id, "admittime": h(-admit_hours_before),
        "dischtime": h(hours + 24), "admission_type": admission_type,
    })
    insert(con, "mimiciv_icu.icustays", {
        "subject_id": subject_id, "hadm_id": hadm_id, "stay_id": stay_id,
        "intime": T0, "outtime": h(hours), "los": hours / 24,
    })
    insert(con, "mimiciv_derived.age", {"subject_id": subject_id, "hadm_id": hadm_id, "admittime": h(-admit_hours_before), "age": age})


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def by_key(con: duckdb.DuckDBPyConnection, table: str, key: str = "stay_id") -> dict:
    return {r[key]: r for r in rows(con, f"SELECT * FROM {table}")}
