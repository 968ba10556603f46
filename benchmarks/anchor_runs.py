"""Run the two public anchors from a user's own checkout, to compare clinbench with them on any database.

Nothing of either anchor ships with clinbench: the caller points at a checkout.

- mimic-code (MIT-LCP/mimic-code at 8bcbd190): ``mimic-iv/concepts_duckdb/duckdb.sql`` is a list of
  ``.read <file>.sql`` lines; each file drops and re-creates one ``mimiciv_derived`` table from
  ``mimiciv_hosp`` / ``mimiciv_icu``. ``run_mimic_code`` runs them in that order on a database.
- M4Bench (hannesill/m4 at 0.5.3): ``benchmark/ground_truth/<reference>.sql`` is one SELECT over the
  raw schemas and mimic-code's derived tables; ``benchmark/tasks/**/task.toml`` holds each task's
  keys. ``write_m4_reference`` writes a reference the way ``benchmark/lib/ground_truth.py`` does
  (rows sorted by the key columns, then every other column, empty last), as plain CSV (M4Bench
  gzips it). M4Bench writes with pandas; this writes with DuckDB, so a float may print with other
  digits (the same value).

Get the checkouts with ``git clone https://github.com/MIT-LCP/mimic-code && git -C mimic-code checkout
8bcbd190`` and ``git clone https://github.com/hannesill/m4 && git -C m4 checkout v0.5.3``.
"""

from __future__ import annotations

import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import duckdb

MIMIC_CODE_COMMIT = "8bcbd190"
M4BENCH_VERSION = "0.5.3"


class AnchorMissing(Exception):
    """The checkout given is not the anchor expected (one line, says what to pass)."""


def mimic_code_concepts(checkout: Path) -> Path:
    """The ``concepts_duckdb`` folder of a mimic-code checkout (the repository root or the folder itself)."""
    for folder in (checkout / "mimic-iv" / "concepts_duckdb", checkout):
        if (folder / "duckdb.sql").is_file():
            return folder
    raise AnchorMissing(f"{checkout} holds no mimic-iv/concepts_duckdb/duckdb.sql: pass a mimic-code checkout at {MIMIC_CODE_COMMIT}")


def mimic_code_files(checkout: Path) -> list[Path]:
    """The concept files ``duckdb.sql`` reads, in its order."""
    folder = mimic_code_concepts(checkout)
    script = (folder / "duckdb.sql").read_text(encoding="utf-8")
    return [folder / m.group(1).strip() for m in re.finditer(r"^\.read\s+(\S+)", script, flags=re.M)]


def run_mimic_code(db: Path, checkout: Path) -> dict[str, float]:
    """Build every mimic-code derived table into ``db``; returns seconds per table, in build order."""
    seconds: dict[str, float] = {}
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE SCHEMA IF NOT EXISTS mimiciv_derived")
        for sql_file in mimic_code_files(checkout):
            started = time.perf_counter()
            con.execute(sql_file.read_text(encoding="utf-8"))
            seconds[sql_file.stem] = time.perf_counter() - started
    finally:
        con.close()
    return seconds


def m4_benchmark(checkout: Path) -> Path:
    """The ``benchmark`` folder of an M4Bench checkout (the repository root or the folder itself)."""
    for folder in (checkout / "benchmark", checkout):
        if (folder / "ground_truth").is_dir() and (folder / "tasks").is_dir():
            return folder
    raise AnchorMissing(f"{checkout} holds no benchmark/ground_truth: pass an M4Bench (hannesill/m4) checkout at {M4BENCH_VERSION}")


@dataclass(frozen=True)
class M4Reference:
    name: str  # e.g. "urine-output-rate"
    sql: Path
    task_ids: tuple[str, ...]  # M4Bench task names reading it, e.g. ("mimic-urine-output-rate", ...)
    keys: tuple[str, ...]


def m4_mimic_references(checkout: Path) -> dict[str, M4Reference]:
    """Every MIMIC-IV reference M4Bench makes from SQL: name -> its SQL, tasks and key columns."""
    return m4_references(checkout, "mimic-iv")


def m4_references(checkout: Path, source: str) -> dict[str, M4Reference]:
    """Every reference M4Bench makes from SQL for one source ("mimic-iv" or "eicu")."""
    bench = m4_benchmark(checkout)
    tasks: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for toml in sorted((bench / "tasks").rglob("task.toml")):
        config = tomllib.loads(toml.read_text(encoding="utf-8"))
        name = config["metadata"]["name"]
        if config.get("database", {}).get("source", "mimic-iv") != source:
            continue
        key = config.get("ground_truth", {}).get("alias") or name.removeprefix("mimic-").removeprefix("eicu-")
        tasks.setdefault(key, []).append((name, tuple(config["evaluation"].get("key_columns", []))))
    refs = {}
    for key, users in sorted(tasks.items()):
        sql = bench / "ground_truth" / f"{key}.sql"
        if sql.is_file():
            refs[key] = M4Reference(key, sql, tuple(sorted(n for n, _ in users)), users[0][1])
    return refs


def write_m4_reference(con: duckdb.DuckDBPyConnection, ref: M4Reference, out_csv: Path) -> int:
    """Run one reference's SQL on ``con`` and write it as M4Bench does; returns its row count."""
    sql = ref.sql.read_text(encoding="utf-8").strip().rstrip(";")
    columns = [d[0] for d in con.execute(f"SELECT * FROM ({sql}) LIMIT 0").description]
    order = [c for c in ref.keys if c in columns] + [c for c in columns if c not in ref.keys]
    by = ", ".join(f'"{c}" NULLS LAST' for c in order)
    path = str(out_csv).replace("'", "''")
    con.execute(f"COPY (SELECT * FROM ({sql}) ORDER BY {by}) TO '{path}' (HEADER)")
    return con.execute(f"SELECT count(*) FROM read_csv('{path}', header = true)").fetchone()[0]
