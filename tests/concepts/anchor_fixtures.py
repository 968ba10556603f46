"""The MIMIC-IV demo with mimic-code's own derived tables, and M4Bench's references for it.

``../shared/data/anchors-demo`` holds both anchors' outputs on the demo (its README says how
they were made). ``anchor_database`` loads the raw demo, puts every mimic-code derived table
(Parquet) in ``mimiciv_derived`` as it is, then builds only what clinbench adds on top: the
task references, their variants and the few helper tables they read that mimic-code does not
build. Nothing of clinbench's own concept layer is built, so a target is tested against the
public derived tables whatever state that layer is in.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from clinbench.concepts.catalog import MIMIC_DERIVED, load_concepts
from clinbench.concepts.graph import dependency_map, topological_order

ANCHORS = "anchors-demo"


def anchors_dir(shared_data: Path) -> Path:
    path = shared_data / ANCHORS
    if not (path / "m4bench-references" / "MANIFEST.json").is_file() or not (path / "mimic-code-derived").is_dir():
        pytest.skip(f"{path} is absent: the anchor outputs on the demo live in ../shared/data beside the repository")
    return path


def manifest(anchors: Path) -> dict:
    return json.loads((anchors / "m4bench-references" / "MANIFEST.json").read_text(encoding="utf-8"))


def load_mimic_code_derived(con: duckdb.DuckDBPyConnection, anchors: Path) -> list[str]:
    """Every mimic-code derived table as ``mimiciv_derived.<name>``; returns the names."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {MIMIC_DERIVED}")
    names = []
    for parquet in sorted((anchors / "mimic-code-derived").glob("*.parquet")):
        path = str(parquet).replace("'", "''")
        con.execute(f'CREATE OR REPLACE TABLE {MIMIC_DERIVED}."{parquet.stem}" AS SELECT * FROM read_parquet(\'{path}\')')
        names.append(parquet.stem)
    return names


def plan_on_top(present: set[str], kinds: tuple[str, ...] = ("target", "variant")) -> list[tuple[str, str]]:
    """(output table, SQL) of every MIMIC-IV target/variant and what it needs that ``present`` lacks, in build order."""
    concepts = load_concepts()
    deps = dependency_map(concepts)
    needed: set[str] = set()
    stack = [q for q, c in concepts.items() if c.kind in kinds and c.schema == MIMIC_DERIVED]
    while stack:  # what the targets read, not looking behind a table mimic-code already gives
        name = stack.pop()
        if name in needed or (concepts[name].kind == "concept" and name in present):
            continue
        needed.add(name)
        stack.extend(deps[name].derived)
    return [(q, concepts[q].sql.rstrip().rstrip(";")) for q in topological_order(needed, deps)]


def build_on_top(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Build ``plan_on_top`` into ``con``; return the tables built."""
    present = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
    steps = plan_on_top(present)
    for out, sql in steps:
        con.execute(f"CREATE OR REPLACE TABLE {out} AS {sql}")
    return [out for out, _ in steps]
