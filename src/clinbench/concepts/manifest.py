"""The reference manifest: what each built reference was built from, so a stale one is caught.

For every built task reference and variant (``kind`` target or variant), ``concepts build``
stores one row in ``clinbench_meta.reference_manifest``:

* ``sql_sha256``: the SQL of the reference and of every concept it reads, transitively
  (a changed concept file anywhere upstream changes it);
* ``source_fingerprint``: the raw tables that chain reads, one line each with its column types,
  row count and the sum of DuckDB's ``hash()`` of every row (an in-place UPDATE changes it);
* ``duckdb_version``, ``rows`` and ``content_hash`` (row count and row-hash sum of the table);
* ``profile``: the reference profile it was built with, as ``name@version``
  (``clinbench.concepts.profiles``).

``verify`` recomputes all of it and fails closed: a reference with no manifest row, built by
another DuckDB version or another profile, or whose SQL, sources or content differ, is reported as a problem
naming the reference and what changed. The same fingerprints bind a campaign to its data
(``clinbench.campaign.binding``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from clinbench.concepts.catalog import MIMIC_DERIVED, Concept, load_concepts, rewrite_schema
from clinbench.concepts.graph import Dependencies, closure, dependency_map
from clinbench.concepts.profiles import get_profile, label
from clinbench.duck import RELATIONS, connect_when_free, duckdb
from clinbench.errors import DataError
from clinbench.fileid import file_identity, named_files_identity

MANIFEST_TABLE = "clinbench_meta.reference_manifest"
_DDL = (f"CREATE TABLE IF NOT EXISTS {MANIFEST_TABLE} (name VARCHAR PRIMARY KEY, concept VARCHAR, "
        "sql_sha256 VARCHAR, source_tables VARCHAR, source_fingerprint VARCHAR, duckdb_version VARCHAR, "
        "rows BIGINT, content_hash VARCHAR, built_at TIMESTAMP, profile VARCHAR)")
_COLUMNS = "name, concept, sql_sha256, source_tables, source_fingerprint, duckdb_version, rows, content_hash, built_at, profile"


@dataclass(frozen=True)
class Problem:
    """One reference that cannot be trusted, and why."""

    table: str
    reason: str

    def __str__(self) -> str:
        return f"{self.table}: {self.reason}"


def chain(concept: Concept, concepts: dict[str, Concept], deps: dict[str, Dependencies]) -> tuple[list[str], list[str]]:
    """The concepts ``concept`` needs (itself included) and the raw tables they read, both sorted."""
    names = sorted(closure([concept.qualified], deps))
    raw = sorted({t for n in names for t in deps[n].raw})
    return names, raw


def sql_sha256(concept: Concept, concepts: dict[str, Concept], deps: dict[str, Dependencies],
               schema: str = MIMIC_DERIVED) -> str:
    digest = hashlib.sha256()
    for name in chain(concept, concepts, deps)[0]:
        digest.update(name.encode() + b"\0" + rewrite_schema(concepts[name].sql, schema).encode("utf-8") + b"\0")
    return digest.hexdigest()


_FILE_CACHES: dict[tuple, dict[str, str]] = {}


def _file_key(db_path: str | Path) -> tuple:
    """The file's identity (``clinbench.fileid``): a fingerprint keyed by it stays true."""
    return file_identity(db_path)


def _cache_file(key: tuple) -> Path:
    from clinbench.cache import cache_root

    return cache_root() / "fingerprints" / (hashlib.sha256(repr(key).encode()).hexdigest()[:32] + ".json")


def file_cache(db_path: str | Path) -> dict[str, str]:
    """Source fingerprints already computed for this exact file (in this process or, through
    ``persist_cache``, an earlier one): a resumed `run` does not rescan an unchanged database."""
    key = _file_key(db_path)
    if key not in _FILE_CACHES:
        import json

        try:
            _FILE_CACHES[key] = dict(json.loads(_cache_file(key).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            _FILE_CACHES[key] = {}
    return _FILE_CACHES[key]


def persist_cache(db_path: str | Path) -> None:
    """Keep this file's source fingerprints for later processes (best effort)."""
    from clinbench.atomic import write_json_atomic
    from clinbench.errors import ClinbenchError

    key = _file_key(db_path)
    if _FILE_CACHES.get(key):
        try:
            write_json_atomic(_cache_file(key), _FILE_CACHES[key])
        except (OSError, ClinbenchError):
            pass


def table_hash(con: duckdb.DuckDBPyConnection, table: str) -> tuple[int, str]:
    """(rows, content hash) of a table: the count and the sum of DuckDB's hash() of each row."""
    schema, name = table.split(".", 1)
    rows, total = con.execute(f'SELECT count(*), coalesce(sum(hash(t)), 0) FROM {schema}."{name}" t').fetchone()
    return int(rows), f"{int(rows)}:{int(total):x}"


def source_fingerprint(con: duckdb.DuckDBPyConnection, tables: list[str], cache: dict[str, str] | None = None) -> str:
    """The named raw tables, one line each: ``table|columns and types|rows:row-hash sum``."""
    cache = {} if cache is None else cache
    # a table's line is kept under its name (the cache belongs to one unchanged database file), a view's under
    # its name and files (view_digest), so the views are looked up only while a name is not in the cache
    views = dict(con.execute("SELECT lower(schema_name || '.' || view_name), sql FROM duckdb_views() WHERE NOT internal")
                 .fetchall()) if any(t not in cache for t in tables) else {}
    lines = []
    for table in sorted(tables):
        key = table if table not in views else f"{table}@{view_digest(views[table])}"
        if key not in cache:
            schema, name = table.split(".", 1)
            columns = con.execute(
                "SELECT string_agg(column_name || ' ' || data_type, ',' ORDER BY column_index) FROM duckdb_columns() "
                "WHERE schema_name = ? AND table_name = ?", [schema, name]).fetchone()[0]
            cache[key] = f"{table}|{columns}|{table_hash(con, table)[1]}" if columns else f"{table}|absent"
        lines.append(cache[key])
    return "\n".join(lines)


def view_digest(view_sql: str) -> str:
    """A view's definition and the identity of the files it names (``fileid.named_files_identity``), as a
    short digest: its rows live in those files, which change without the database file changing."""
    return hashlib.sha256(repr((view_sql, named_files_identity(view_sql))).encode()).hexdigest()[:16]


def record_reference(con: duckdb.DuckDBPyConnection, concept: Concept, table: str, *,
                     concepts: dict[str, Concept] | None = None, deps: dict[str, Dependencies] | None = None,
                     schema: str = MIMIC_DERIVED, cache: dict[str, str] | None = None,
                     profile: str | None = None) -> None:
    """Store (replace) the manifest row of ``table``, built just now from ``concept`` of ``profile``."""
    concepts = concepts if concepts is not None else load_concepts(profile=profile)
    deps = deps if deps is not None else dependency_map(concepts)
    raw = chain(concept, concepts, deps)[1]
    rows, content = table_hash(con, table)
    con.execute("CREATE SCHEMA IF NOT EXISTS clinbench_meta")
    con.execute(_DDL)
    con.execute(f"ALTER TABLE {MANIFEST_TABLE} ADD COLUMN IF NOT EXISTS profile VARCHAR")  # manifests before profiles
    con.execute(f"DELETE FROM {MANIFEST_TABLE} WHERE name = ?", [table])
    con.execute(f"INSERT INTO {MANIFEST_TABLE} ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, now()::TIMESTAMP, ?)",
                [table, concept.qualified, sql_sha256(concept, concepts, deps, schema), ",".join(raw),
                 source_fingerprint(con, raw, cache), duckdb.__version__, rows, content, label(profile)])


def after_build(con: duckdb.DuckDBPyConnection, concept: Concept, table: str, status: str,
                concepts: dict[str, Concept], deps: dict[str, Dependencies], schema: str, cache: dict[str, str],
                profile: str | None = None, recorded: dict[str, str | None] | None = None) -> None:
    """The build hook: record a reference or variant just built, or one left unchanged without a manifest
    row of this profile (a reference whose SQL two profiles share is left unchanged by a profile switch).
    ``recorded`` (table -> profile of its manifest row) is read once per build and kept up to date here;
    without it the manifest is read."""
    if concept.kind == "concept" or status == "skipped":
        return
    if recorded is None:
        recorded = {name: row.get("profile") for name, row in manifest_rows(con).items()}
    if status == "built" or recorded.get(table) != label(profile):
        record_reference(con, concept, table, concepts=concepts, deps=deps, schema=schema, cache=cache, profile=profile)
        recorded[table] = label(profile)


def manifest_rows(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'clinbench_meta' "
                         "AND table_name = 'reference_manifest'").fetchone()[0]
    if not exists:
        return {}
    cur = con.execute(f"SELECT * FROM {MANIFEST_TABLE}")
    names = [d[0] for d in cur.description]
    return {row[0]: dict(zip(names, row)) for row in cur.fetchall()}


def profile_of(db_path: str | Path, tables: list[str]) -> str | None:
    """The reference profile (``name@version``) the named tables of ``db_path`` were built with;
    None when none of them records one. Tables of two profiles are a DataError (a half-switched build)."""
    with connect_when_free(db_path, read_only=True) as con:
        rows = manifest_rows(con)
    found = sorted({rows[t].get("profile") for t in tables if t in rows} - {None})
    if len(found) > 1:
        raise DataError(f"the references in {db_path} were built with different profiles ({', '.join(found)}); "
                        f"rebuild them with `clinbench concepts build {db_path} --profile NAME`")
    return found[0] if found else None


def check_tables(con: duckdb.DuckDBPyConnection, tables: list[str], db_label: str,
                 cache: dict[str, str] | None = None, profile: str | None = None) -> list[Problem]:
    """Problems of each named reference table in an open database (empty when all are fresh), for
    reference profile ``profile`` (default: the default profile)."""
    profile = get_profile(profile).name
    concepts = load_concepts(profile=profile)
    deps = dependency_map(concepts)
    rows = manifest_rows(con)
    existing = {f"{s}.{t}" for s, t in con.execute(f"SELECT schema_name, table_name FROM {RELATIONS}").fetchall()}
    cache = {} if cache is None else cache
    problems = []
    for table in tables:
        entry = rows.get(table)
        if table not in existing:
            problems.append(Problem(table, f"not built; run `clinbench concepts build {db_label} --only {table}`"))
            continue
        if entry is None:
            problems.append(Problem(table, f"has no manifest (built by hand or before manifests); "
                                           f"run `clinbench concepts build {db_label} --force`"))
            continue
        option = "" if profile == get_profile(None).name else f" --profile {profile}"
        rebuild = f"run `clinbench concepts build {db_label}{option}`"
        if entry.get("profile") != label(profile):
            built = entry.get("profile") or "no recorded profile (built before profiles)"
            problems.append(Problem(table, f"built with reference profile {built}, not {label(profile)}; {rebuild}"
                                          ))
            continue
        if entry["duckdb_version"] != duckdb.__version__:
            problems.append(Problem(table, f"built with DuckDB {entry['duckdb_version']}, this is {duckdb.__version__}; "
                                           f"run `clinbench concepts build {db_label} --force`"))
            continue
        concept = concepts.get(entry["concept"])
        if concept is None:
            problems.append(Problem(table, f"its concept {entry['concept']} no longer exists; drop the table or {rebuild}"))
            continue
        schema = table.split(".", 1)[0] if concept.schema == MIMIC_DERIVED else MIMIC_DERIVED
        if sql_sha256(concept, concepts, deps, schema) != entry["sql_sha256"]:
            problems.append(Problem(table, f"stale: the SQL of {concept.name} or of a concept it reads changed since "
                                           f"it was built; {rebuild}"))
            continue
        raw = entry["source_tables"].split(",") if entry["source_tables"] else []
        if source_fingerprint(con, raw, cache) != entry["source_fingerprint"]:
            built = dict(line.split("|", 1) for line in entry["source_fingerprint"].splitlines())
            changed = [t for t in raw if source_fingerprint(con, [t], cache).split("|", 1)[1] != built.get(t)]
            problems.append(Problem(table, "stale: its source data changed since it was built"
                                           + (f" ({', '.join(changed)})" if changed else "") + f"; {rebuild}"))
            continue
        if table_hash(con, table)[1] != entry["content_hash"]:
            problems.append(Problem(table, f"its rows were modified after the build; run "
                                           f"`clinbench concepts build {db_label} --force`"))
    return problems


def verify(db_path: str | Path, tables: list[str], profile: str | None = None) -> list[Problem]:
    """Problems of the references ``tables`` in ``db_path`` for reference profile ``profile``; empty when all
    are fresh."""
    path = Path(db_path)
    if not path.is_file():
        raise DataError(f"database {path} not found; pass --db a database with the concepts built")
    con = connect_when_free(path, read_only=True)
    try:
        return check_tables(con, tables, str(path), file_cache(path), profile)
    finally:
        con.close()
        persist_cache(path)
