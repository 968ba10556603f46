"""Materialise concepts into a database, in dependency order, each table atomically.

A concept is rebuilt only when its SQL text or its inputs changed since the last build; the
bookkeeping lives in ``clinbench_meta.concept_builds``. Inputs are fingerprinted cheaply: a raw
table by its row count and column types, a derived table by the bookkeeping row of the build
that produced it (so rebuilding a concept rebuilds everything downstream). An in-place UPDATE
of raw rows that keeps the row count is not seen: pass ``force=True`` after editing data that way.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from clinbench.concepts import manifest
from clinbench.concepts.catalog import MIMIC_DERIVED, Concept, find_concept, load_concepts
from clinbench.concepts.graph import Dependencies, closure, dependency_map, topological_order
from clinbench.concepts.inline import inline_sql
from clinbench.errors import ConceptError, DataError

META_SCHEMA = "clinbench_meta"
META_TABLE = f"{META_SCHEMA}.concept_builds"
_TMP_PREFIX = "__clinbench_tmp_"
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True)
class BuildResult:
    name: str  # qualified output table, after any schema rename
    concept: str  # file stem
    status: str  # 'built' | 'unchanged' | 'skipped'
    rows: int | None
    seconds: float
    note: str = ""


Progress = Callable[[str, int, int, BuildResult | None], None]


def rewrite_schema(sql: str, schema: str) -> str:
    """Point every ``mimiciv_derived.`` reference at ``schema`` instead."""
    if schema == MIMIC_DERIVED:
        return sql
    return re.sub(rf"\b{MIMIC_DERIVED}\.", f"{schema}.", sql)


def output_table(concept: Concept, schema: str) -> str:
    return f"{schema if concept.schema == MIMIC_DERIVED else concept.schema}.{concept.table}"


def target_sql(name: str) -> str:
    """A target's self-contained SQL (dependencies inlined), readable on a database with raw tables only."""
    concepts = load_concepts()
    concept = find_concept(name, concepts)
    if concept.kind != "target":
        concept = find_concept(f"{concept.schema}.target_{name.replace('-', '_')}", concepts)
    return inline_sql(concept.qualified, concepts)


def _sql_body(sql: str) -> str:
    # The header comment stays, so DuckDB's "LINE n" positions are the file's line numbers.
    return sql.rstrip().rstrip(";").rstrip()


def _error_line(message: str) -> int | None:
    match = re.search(r"LINE (\d+):", message)
    return int(match.group(1)) if match else None


def _existing_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables() UNION SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    return {r[0].lower() for r in rows}


def _raw_fingerprint(con: duckdb.DuckDBPyConnection, table: str, cache: dict[str, str]) -> str:
    if table not in cache:
        schema, name = table.split(".", 1)
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        columns = con.execute(
            "SELECT string_agg(column_name || ' ' || data_type, ',' ORDER BY column_index) FROM duckdb_columns() WHERE schema_name = ? AND table_name = ?",
            [schema, name],
        ).fetchone()[0]
        cache[table] = f"{table}:{count}:{columns}"
    return cache[table]


def _meta_row(con: duckdb.DuckDBPyConnection, name: str) -> tuple[str, str, str] | None:
    row = con.execute(f"SELECT sql_sha256, input_fingerprint, CAST(built_at AS VARCHAR) FROM {META_TABLE} WHERE name = ?", [name]).fetchone()
    return (row[0], row[1], row[2]) if row else None


def _open(db_path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    path = Path(db_path)
    if not path.is_file():
        raise DataError(f"database {path} does not exist: create it with `clinbench data synth` or `clinbench data load`")
    try:
        return duckdb.connect(str(path))
    except duckdb.Error as exc:
        raise DataError(f"cannot open {path} ({str(exc).splitlines()[0]}): close the program holding it, or check "
                        "that it is a DuckDB database, and retry") from exc


def _select(concepts: dict[str, Concept], deps: dict[str, Dependencies], only: list[str] | None, targets: bool) -> list[str]:
    universe = {q for q, c in concepts.items() if targets or c.kind == "concept"}
    if only:
        wanted = [find_concept(n, concepts).qualified for n in only]
        selected = closure(wanted, deps)
    else:
        selected = universe
    return topological_order(selected, deps)


def _materialise(con: duckdb.DuckDBPyConnection, concept: Concept, out: str, sql: str, meta: tuple[str, str]) -> int:
    schema, table = out.split(".", 1)
    tmp = f'{schema}."{_TMP_PREFIX}{table}"'
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    con.execute(f"DROP TABLE IF EXISTS {tmp}")
    try:
        con.execute(f"CREATE TABLE {tmp} AS {_sql_body(sql)}")
    except duckdb.Error as exc:
        con.execute(f"DROP TABLE IF EXISTS {tmp}")
        first = str(exc).splitlines()[0]
        line = _error_line(str(exc))
        where = f"{concept.path}:{line}" if line else str(concept.path)
        raise ConceptError(f"{where}: {first}; the previous {out} (if any) is unchanged: fix the SQL and rebuild") from exc
    rows = con.execute(f"SELECT count(*) FROM {tmp}").fetchone()[0]
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"DROP TABLE IF EXISTS {out}")
        con.execute(f'ALTER TABLE {tmp} RENAME TO "{table}"')
        con.execute(f"DELETE FROM {META_TABLE} WHERE name = ?", [out])
        con.execute(f"INSERT INTO {META_TABLE} VALUES (?, ?, ?, now()::TIMESTAMP, NULL)", [out, meta[0], meta[1]])
        con.execute("COMMIT")
    except duckdb.Error as exc:
        con.execute("ROLLBACK")
        con.execute(f"DROP TABLE IF EXISTS {tmp}")
        raise ConceptError(f"could not replace {out} ({str(exc).splitlines()[0]}): a view may depend on it; drop the view and rebuild") from exc
    return rows


def build_concepts(
    db_path: str | os.PathLike[str],
    *,
    only: list[str] | None = None,
    schema: str = MIMIC_DERIVED,
    targets: bool = True,
    progress: Progress | None = None,
    force: bool = False,
) -> list[BuildResult]:
    """Build concepts (``only`` and what they need, or all) into ``db_path``; return one result each.

    ``schema`` renames the MIMIC-IV derived schema (SQL references are rewritten); eICU concepts
    stay in ``eicu_derived``. Concepts whose raw tables are absent are skipped with a note.
    """
    if not _SCHEMA_NAME.match(schema):
        raise ConceptError(f"invalid schema name {schema!r}: use lower-case letters, digits and underscores")
    concepts = load_concepts()
    deps = dependency_map(concepts)
    order = _select(concepts, deps, only, targets)

    con = _open(db_path)
    try:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {META_SCHEMA}")
        con.execute(
            f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name VARCHAR PRIMARY KEY, sql_sha256 VARCHAR, "
            "input_fingerprint VARCHAR, built_at TIMESTAMP, seconds DOUBLE)"
        )
        existing = _existing_tables(con)
        raw_cache: dict[str, str] = {}
        manifest_cache: dict[str, str] = {}
        unavailable: dict[str, str] = {}  # qualified concept -> why it was not built
        results: list[BuildResult] = []
        for index, qualified in enumerate(order):
            concept = concepts[qualified]
            out = output_table(concept, schema)
            if progress:
                progress(out, index, len(order), None)
            result = _build_one(con, concept, out, deps[qualified], schema, existing, raw_cache, unavailable, force)
            manifest.after_build(con, concept, out, result.status, concepts, deps, schema, manifest_cache)
            if result.status == "skipped":
                unavailable[qualified] = result.note
            else:
                existing.add(out)
            results.append(result)
            if progress:
                progress(out, index, len(order), result)
        return results
    finally:
        con.close()


def _build_one(
    con: duckdb.DuckDBPyConnection,
    concept: Concept,
    out: str,
    dep: Dependencies,
    schema: str,
    existing: set[str],
    raw_cache: dict[str, str],
    unavailable: dict[str, str],
    force: bool,
) -> BuildResult:
    missing_raw = [t for t in dep.raw if t not in existing]
    if missing_raw:
        schemas = sorted({t.split(".")[0] for t in missing_raw})
        absent = [s for s in schemas if not any(e.startswith(s + ".") for e in existing)]
        note = f"no {', '.join(absent)} schema in the database" if absent else f"needs {', '.join(missing_raw)}"
        return BuildResult(out, concept.name, "skipped", None, 0.0, note)
    blocked = [d for d in dep.derived if d in unavailable]
    if blocked:
        return BuildResult(out, concept.name, "skipped", None, 0.0, f"needs {', '.join(blocked)}, which was skipped")

    started = time.perf_counter()
    sql = rewrite_schema(concept.sql, schema)
    sql_sha = hashlib.sha256(sql.encode("utf-8")).hexdigest()
    parts = [_raw_fingerprint(con, t, raw_cache) for t in dep.raw]
    for d in dep.derived:
        dep_out = rewrite_schema(d, schema) if d.startswith(MIMIC_DERIVED + ".") else d
        row = _meta_row(con, dep_out)
        parts.append(f"{dep_out}:{row}")
    fingerprint = hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()

    previous = _meta_row(con, out)
    if not force and previous and previous[:2] == (sql_sha, fingerprint) and out in existing:
        rows = con.execute(f"SELECT count(*) FROM {out}").fetchone()[0]
        return BuildResult(out, concept.name, "unchanged", rows, time.perf_counter() - started, "SQL and inputs unchanged since the last build")

    rows = _materialise(con, concept, out, sql, (sql_sha, fingerprint))
    seconds = time.perf_counter() - started
    con.execute(f"UPDATE {META_TABLE} SET seconds = ? WHERE name = ?", [seconds, out])
    return BuildResult(out, concept.name, "built", rows, seconds)
