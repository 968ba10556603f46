"""Run the two public anchors from a user's own checkout, to compare clinbench with them on any database.

Nothing of either anchor ships with clinbench: the caller points at a checkout.

- mimic-code (MIT-LCP/mimic-code at 8bcbd190): ``mimic-iv/concepts_duckdb/duckdb.sql`` is a list of
  ``.read <file>.sql`` lines; each file drops and re-creates one ``mimiciv_derived`` table from
  ``mimiciv_hosp`` / ``mimiciv_icu``. ``run_mimic_code`` runs them in that order on a database.
- M4's own concept copy (hannesill/m4 at 0.5.3, ``src/m4/core/derived/builtins/mimic_iv``): what
  ``m4 init-derived mimic-iv`` materializes, an older vendored mimic-code in the same layout, run in
  its own ``duckdb.sql`` order by ``run_m4_pipeline`` (the m4bench reference profile's anchor).
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


def m4_concept_files(checkout: Path) -> list[Path]:
    """M4's vendored concept files, in its ``duckdb.sql`` order."""
    for folder in (checkout / "src" / "m4" / "core" / "derived" / "builtins" / "mimic_iv", checkout):
        if (folder / "duckdb.sql").is_file() and (folder / "demographics").is_dir():
            script = (folder / "duckdb.sql").read_text(encoding="utf-8")
            return [folder / m.group(1).strip() for m in re.finditer(r"^\.read\s+(\S+)", script, flags=re.M)]
    raise AnchorMissing(f"{checkout} holds no src/m4/core/derived/builtins/mimic_iv/duckdb.sql: pass an M4Bench "
                        f"(hannesill/m4) checkout at {M4BENCH_VERSION}")


def run_mimic_code(db: Path, checkout: Path) -> dict[str, float]:
    """Build every mimic-code derived table into ``db``; returns seconds per table, in build order."""
    return _run_files(db, mimic_code_files(checkout))


def run_m4_pipeline(db: Path, checkout: Path) -> dict[str, float]:
    """Build every table ``m4 init-derived mimic-iv`` makes, from M4's vendored files, into ``db``."""
    return _run_files(db, m4_concept_files(checkout))


def _run_files(db: Path, files: list[Path]) -> dict[str, float]:
    seconds: dict[str, float] = {}
    con = duckdb.connect(str(db))
    try:
        # as clinbench's build does: a query over 2 s otherwise redraws a progress bar on stdout, in the anchor's
        # time (20,000 patients: sofa, urine_output_rate and vitalsign did)
        con.execute("SET enable_progress_bar = false")
        con.execute("CREATE SCHEMA IF NOT EXISTS mimiciv_derived")
        for sql_file in files:
            started = time.perf_counter()
            con.execute(sql_file.read_text(encoding="utf-8"))
            seconds[sql_file.stem] = time.perf_counter() - started
    finally:
        con.close()
    return seconds


def apply_buildmimic_types(db: Path, mimic_code: Path) -> list[str]:
    """Give ``db``'s raw columns that mimic-code's ``buildmimic`` declares FLOAT the type DuckDB gives
    FLOAT (REAL, 32-bit), as the anchors' demo load had them; returns the columns changed.

    The oracle outputs in ../shared/data/anchors-demo were made on such a load; clinbench's loader
    keeps DOUBLE. Read from ``mimic-iv/buildmimic/postgres/create.sql`` of the checkout.
    """
    create = buildmimic_create_sql(mimic_code)
    declared: list[tuple[str, str]] = []
    table = None
    for line in create.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"\s*CREATE TABLE\s+(\w+\.\w+)", line, flags=re.I):
            table = m.group(1).lower()
        elif table and (m := re.match(r"\s*(\w+)\s+FLOAT\b", line, flags=re.I)):
            declared.append((table, m.group(1).lower()))
    changed = []
    con = duckdb.connect(str(db))
    try:
        present = {(f"{s}.{t}", c): d for s, t, c, d in con.execute(
            "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns()").fetchall()}
        for table, column in declared:
            if present.get((table, column)) == "DOUBLE":
                con.execute(f'ALTER TABLE {table} ALTER COLUMN "{column}" TYPE REAL')
                changed.append(f"{table}.{column}")
    finally:
        con.close()
    return changed


def buildmimic_create_sql(mimic_code: Path) -> Path:
    """mimic-code's ``buildmimic/postgres/create.sql`` (the declared column types), or AnchorMissing saying how to get it."""
    create = mimic_code / "mimic-iv" / "buildmimic" / "postgres" / "create.sql"
    if not create.is_file():
        raise AnchorMissing(f"{checkout_hint(mimic_code)} holds no mimic-iv/buildmimic/postgres/create.sql "
                            f"(`git -C MIMIC_CODE_REPO archive {MIMIC_CODE_COMMIT} mimic-iv/buildmimic | tar x -C DIR`)")
    return create


def checkout_hint(path: Path) -> str:
    return f"{path} (a mimic-code checkout at {MIMIC_CODE_COMMIT})"


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


def m4_drop_tables(checkout: Path) -> dict[str, list[str]]:
    """Each M4Bench task's ``drop_tables`` (its task.toml): task name -> the tables its agent's database lacks."""
    drops = {}
    for toml in sorted((m4_benchmark(checkout) / "tasks").rglob("task.toml")):
        config = tomllib.loads(toml.read_text(encoding="utf-8"))
        drops[config["metadata"]["name"]] = list(config.get("database", {}).get("drop_tables", []))
    return drops


def write_m4_reference(con: duckdb.DuckDBPyConnection, ref: M4Reference, out_csv: Path) -> int:
    """Run one reference's SQL on ``con`` and write it as M4Bench does; returns its row count."""
    sql = ref.sql.read_text(encoding="utf-8").strip().rstrip(";")
    columns = [d[0] for d in con.execute(f"SELECT * FROM ({sql}) LIMIT 0").description]
    order = [c for c in ref.keys if c in columns] + [c for c in columns if c not in ref.keys]
    by = ", ".join(f'"{c}" NULLS LAST' for c in order)
    path = str(out_csv).replace("'", "''")
    con.execute(f"COPY (SELECT * FROM ({sql}) ORDER BY {by}) TO '{path}' (HEADER)")
    return con.execute(f"SELECT count(*) FROM read_csv('{path}', header = true)").fetchone()[0]
