"""Helpers for campaign tests: a tiny hand-made MIMIC-IV database with two task references."""

from __future__ import annotations

from pathlib import Path

import duckdb
from clinbench.concepts.catalog import find_concept
from clinbench.concepts.manifest import record_reference
from clinbench.ehr.requirements import MIMIC_IV_FAMILIES
from clinbench.ehr.schema import create_empty

SOFA_COLUMNS = "subject_id,hadm_id,stay_id,sofa,respiration,coagulation,liver,cardiovascular,cns,renal"
SOFA_ROWS = [(1, 10, 100, 5, 1, 0, 2, 1, 1, 0), (2, 20, 200, 3, 0, 1, 0, 1, 1, 0)]
MELD_ROWS = [(1, 10, 100, 12.0), (2, 20, 200, 25.0)]


def build_tiny_db(path: Path, *, manifest: bool = True) -> Path:
    """Two hand-made references; with ``manifest`` they are recorded as built (so `run` verifies them)."""
    con = duckdb.connect(str(path))
    create_empty(con, "mimic-iv")
    con.execute("INSERT INTO mimiciv_icu.icustays (subject_id, hadm_id, stay_id) VALUES (1, 10, 100), (2, 20, 200)")
    # a database with an empty source of SOFA or MELD cannot score them (derive/scorable.py): one row each
    for table in sorted((MIMIC_IV_FAMILIES["sofa"] | MIMIC_IV_FAMILIES["meld"]) - {"mimiciv_icu.icustays"}):
        con.execute(f"INSERT INTO {table} DEFAULT VALUES")
    con.execute("CREATE SCHEMA mimiciv_derived")
    con.execute(f"CREATE TABLE mimiciv_derived.target_sofa_24h ({', '.join(c + ' INTEGER' for c in SOFA_COLUMNS.split(','))})")
    con.executemany(f"INSERT INTO mimiciv_derived.target_sofa_24h VALUES ({', '.join('?' * 10)})", SOFA_ROWS)
    con.execute("CREATE TABLE mimiciv_derived.target_meld_24h (subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, meld DOUBLE)")
    con.executemany("INSERT INTO mimiciv_derived.target_meld_24h VALUES (?, ?, ?, ?)", MELD_ROWS)
    if manifest:
        stamp(con)
    con.close()
    return path


def stamp(con) -> None:
    """Record the tiny references in the manifest as if `concepts build` had made them."""
    for name in ("sofa-24h", "meld-24h"):
        concept = find_concept(f"mimiciv_derived.target_{name.replace('-', '_')}")
        record_reference(con, concept, concept.qualified)
