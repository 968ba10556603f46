"""Materialise concepts into a database, in dependency order, each table atomically.

A concept is rebuilt only when its SQL text or its inputs changed since the last build; the
bookkeeping lives in ``clinbench_meta.concept_builds``. Inputs are fingerprinted cheaply: a raw
table by its row count, column types and the blocks its rows are stored in (an UPDATE that keeps
the row count writes new blocks), a derived table by the bookkeeping row of the build that
produced it (so rebuilding a concept rebuilds everything downstream). ``force=True`` rebuilds
regardless.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from clinbench.concepts import manifest
from clinbench.concepts.catalog import MIMIC_DERIVED, Concept, find_concept, helper_tables, load_concepts, rewrite_schema
from clinbench.concepts.graph import Dependencies, closure, dependency_map, topological_order
from clinbench.concepts.helpers import Statement, inputs, statement
from clinbench.concepts.profiles import get_profile, label, lineage
from clinbench.duck import connect_when_free, duckdb, held_too_long, lock_holder, out_of_memory
from clinbench.errors import ConceptError, DataError, ResourceError
from clinbench.write_errors import WriteError, cannot_write, explain, kind_of

META_SCHEMA = "clinbench_meta"
META_TABLE = f"{META_SCHEMA}.concept_builds"
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


def output_table(concept: Concept, schema: str) -> str:
    return f"{schema if concept.schema == MIMIC_DERIVED else concept.schema}.{concept.table}"


def target_sql(name: str, profile: str | None = None) -> str:
    """A target's self-contained SQL (dependencies inlined), readable on a database with raw tables only."""
    from clinbench.concepts.inline import inline_sql  # sqlglot: only when inlining

    concepts = load_concepts(profile=profile)
    concept = find_concept(name, concepts)
    if concept.kind != "target":
        concept = find_concept(f"{concept.schema}.target_{name.replace('-', '_')}", concepts)
    return inline_sql(concept.qualified, concepts)


def _error_line(message: str) -> int | None:
    match = re.search(r"LINE (\d+):", message)
    return int(match.group(1)) if match else None


def _existing_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables() UNION SELECT schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    return {r[0].lower() for r in rows}


def _column_types(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Every table's ``name type,...`` list, read in one catalog query (one query per table cost ~5 ms each)."""
    rows = con.execute(
        "SELECT lower(schema_name || '.' || table_name), string_agg(column_name || ' ' || data_type, ',' ORDER BY column_index) "
        "FROM duckdb_columns() GROUP BY ALL").fetchall()
    return dict(rows)


# Where a table's rows are stored, segment by segment: DuckDB writes changed rows to new blocks (and marks
# updates not yet checkpointed), so an UPDATE that keeps the row count changes it, while other tables' writes
# and checkpoints leave it as it was (2 ms a table at 2,000 patients; hashing the rows themselves costs seconds)
_LAYOUT = ("SELECT sum(hash(row_group_id, column_id, segment_id, block_id, block_offset, count, has_updates, "
           "persistent, CAST(stats AS VARCHAR))), bool_or(has_updates) FROM pragma_storage_info('{table}')")


def _layout(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """``table``'s storage layout (``_LAYOUT``); CatalogException for a view. Updates not yet checkpointed (a
    connection of this process that has not let a checkpoint run) leave the layout as the first of them made
    it, whatever the next ones write: then the rows themselves are hashed as well (seconds on a large table,
    paid only then)."""
    layout, updated = con.execute(_LAYOUT.format(table=table.replace("'", "''"))).fetchone()
    if not updated:
        return str(layout)
    return f"{layout}:{con.execute(f'SELECT sum(hash(t)) FROM {table} t').fetchone()[0]}"


def _raw_fingerprint(con: duckdb.DuckDBPyConnection, table: str, cache: dict[str, str], columns: dict[str, str]) -> str:
    """A raw table's rows, column types and storage layout (``_LAYOUT``), as one string; a view's (raw files
    a database only points at, as M4's Parquet-backed databases do) its rows, types, definition and the
    identity of the files it names (``manifest.view_digest``: a Parquet file replaced is seen)."""
    if table not in cache:
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        try:
            layout = _layout(con, table)
        except duckdb.CatalogException:  # not a table: a view, whose rows are in the files it names
            sql = con.execute("SELECT sql FROM duckdb_views() WHERE lower(schema_name || '.' || view_name) = ?",
                              [table]).fetchone()
            layout = manifest.view_digest(sql[0] if sql else "")
        cache[table] = f"{table}:{count}:{columns.get(table)}:{layout}"
    return cache[table]


def _meta_rows(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, tuple[str, str, str]], dict[str, int], dict[str, str]]:
    """Every bookkeeping row, read once per build: name -> (sql sha256, input fingerprint, built at), name ->
    rows built (None for rows written before row counts were kept), and name -> the content hash of the rows
    the build wrote (``manifest.table_hash``; None for tables built before it was kept)."""
    rows = con.execute(f"SELECT name, sql_sha256, input_fingerprint, CAST(built_at AS VARCHAR), rows, content_hash "
                       f"FROM {META_TABLE}").fetchall()
    return ({r[0]: (r[1], r[2], r[3]) for r in rows}, {r[0]: r[4] for r in rows if r[4] is not None},
            {r[0]: r[5] for r in rows if r[5] is not None})


def _open(db_path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    path = Path(db_path)
    if not path.is_file():
        raise DataError(f"database {path} does not exist: create it with `clinbench data synth` or `clinbench data load`")
    try:
        return connect_when_free(path)
    except duckdb.Error as exc:
        if cannot_write(exc):  # a read-only file or location: no other program to close
            raise WriteError(explain(exc, path)) from exc
        if held := held_too_long(exc):
            raise DataError(held) from exc
        raise DataError(f"cannot open {path} ({str(exc).splitlines()[0]}): close the program holding it, or check "
                        "that it is a DuckDB database, and retry") from exc


def _select(concepts: dict[str, Concept], deps: dict[str, Dependencies], only: list[str] | None, targets: bool,
            present: Callable[[], set[str]], schema: str) -> list[str]:
    """What a build builds: ``only``'s closure; else everything (``targets``); else the concept layer and the
    references and variants ``present()`` already holds (kept fresh: a changed concept rebuilds them too).
    ``deps`` reads through helpers (``helpers.inputs``), which are never built: their readers inline them."""
    if only:
        named = [find_concept(n, concepts) for n in only]
        if helpers := [c for c in named if c.helper]:
            raise ConceptError(f"{helpers[0].name} is a helper, not a table ({helpers[0].header['helper'].rstrip('.')}): "
                               "it is part of each statement that reads it; build one of those")
        return topological_order(closure([c.qualified for c in named], deps), deps)
    if targets:
        return topological_order({q for q, c in concepts.items() if not c.helper}, deps)
    held = present()
    wanted = [q for q, c in concepts.items() if not c.helper and (c.in_layer or output_table(c, schema) in held)]
    return topological_order(closure(wanted, deps), deps)


def _materialise(con: duckdb.DuckDBPyConnection, concept: Concept, out: str, sql: Statement, meta: tuple[str, str, str],
                 started: float, *, replace: bool, recorded: bool,
                 raw: Callable[[], list[str]]) -> tuple[int, tuple[str, str, str]]:
    """Replace ``out`` by the concept's rows and its bookkeeping row in one transaction: a failure leaves both as they were.

    ``replace``: ``out`` exists; ``recorded``: it has a bookkeeping row. Neither, as in a first build, and
    neither the DROP nor the DELETE is run (a statement costs about 1 ms: 0.1 s of a 72-concept build).
    ``raw``: the raw tables the concept reads, itself or through the concepts it reads, whose column types a
    failure is checked against (a text column typed DOUBLE fails where a concept compares what it became)."""
    con.execute("BEGIN TRANSACTION")
    try:
        try:
            if replace:
                con.execute(f"DROP TABLE IF EXISTS {out}")
        except duckdb.Error as exc:
            if "is of type View" in str(exc):  # another program's view of the table's name
                raise ConceptError(f"{out} is a view now, not the table clinbench built: drop or rename the view and "
                                   "build again") from exc
            raise ConceptError(f"could not replace {out} ({str(exc).splitlines()[0]}): a view may depend on it; drop the view and rebuild") from exc
        try:
            rows = con.execute(f"CREATE TABLE {out} AS {sql.body}").fetchone()[0]
        except duckdb.Error as exc:
            if cannot_write(exc):
                raise  # the disk, not the SQL: build_concepts says so
            if memory := out_of_memory(exc):  # the machine, not the SQL
                raise ResourceError(f"{out} was not built: {memory}; the tables built before it are kept, and the same "
                                    "command, run again, builds the rest") from exc
            first = str(exc).splitlines()[0]
            line = _error_line(str(exc))
            found = sql.locate(line) if line else None
            where = f"{found[0]}:{found[1]}" if found else str(concept.path)
            from clinbench.ehr.schema import foreign_kinds  # 2.3 ms of import: paid on this failure path only

            foreign: list[str] = []
            with suppress(duckdb.Error):  # a catalog it cannot read leaves the SQL's own message
                con.execute("ROLLBACK")  # the failed statement aborted the transaction: end it to read the catalog
                foreign = foreign_kinds(con, raw())
            if foreign:
                # the data, not the SQL: a loader that guessed types (M4's `m4 init` does) gave a column another kind
                raise ConceptError(
                    f"{where}: {first}; the previous {out} (if any) is unchanged. The database's columns hold another "
                    f"kind of value than the dataset declares: {', '.join(foreign)}. Load the raw files (CSV, or M4's "
                    "Parquet) with the declared types (`clinbench data load DATASET DIR --out DB`) and build again") from exc
            raise ConceptError(f"{where}: {first}; the previous {out} (if any) is unchanged: fix the SQL and rebuild") from exc
        if recorded:
            con.execute(f"DELETE FROM {META_TABLE} WHERE name = ?", [out])
        # the rows just written, hashed while they are in memory: the next build knows the table by them
        content = manifest.table_hash(con, out)[1]
        row = con.execute(
            f"INSERT INTO {META_TABLE} (name, sql_sha256, input_fingerprint, built_at, seconds, rows, profile, "
            "content_hash) VALUES (?, ?, ?, now()::TIMESTAMP, ?, ?, ?, ?) "
            "RETURNING sql_sha256, input_fingerprint, CAST(built_at AS VARCHAR)",
            [out, meta[0], meta[1], time.perf_counter() - started, rows, meta[2], content]).fetchone()
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):  # a COMMIT that failed (a full disk) has ended the transaction already
            con.execute("ROLLBACK")
        raise
    return rows, (row[0], row[1], row[2])


def _write_error(exc: BaseException, db_path: str | os.PathLike[str]) -> WriteError:
    """A storage failure during a build as one line: each table is committed with its bookkeeping row, so
    what was built before it is kept and the same command, retried, builds only the rest."""
    return WriteError(f"{explain(exc, db_path)} (the tables built before it are kept: the retry builds the rest)")


def _close(con: duckdb.DuckDBPyConnection, threads: str | None, *, failing: bool) -> None:
    """Give the instance its thread count back and close the build's connection (closing writes the
    checkpoint). ``failing``: the build's own failure is being raised, and a failure here is not raised over it."""
    try:
        if threads is not None:  # the instance may be shared with the caller's own connection to the file
            con.execute(f"SET threads = {threads}")
        con.close()
    except duckdb.Error:
        if not failing:
            raise


def build_concepts(
    db_path: str | os.PathLike[str],
    *,
    only: list[str] | None = None,
    schema: str = MIMIC_DERIVED,
    targets: bool = True,
    progress: Progress | None = None,
    force: bool = False,
    workers: int | None = None,
    profile: str | None = None,
    replace_derived: bool = False,
) -> list[BuildResult]:
    """Build concepts into ``db_path``; return one result each, in build order.

    What is built: ``only`` and what it needs; else, with ``targets``, every concept, task reference
    and variant (``concepts build --all``); else the concept layer and the references and variants
    the database already holds (``concepts build``: the others are built on demand, ``build_absent``,
    as are the helper concepts only they read).

    ``schema`` renames the MIMIC-IV derived schema (SQL references are rewritten); eICU concepts
    stay in ``eicu_derived``. Concepts whose raw tables are absent are skipped with a note.
    Up to ``workers`` concepts whose inputs are ready are built at once, each on its own cursor
    (default ``CLINBENCH_BUILD_WORKERS`` or 2), DuckDB running on the cores they leave (``engine_threads``);
    the tables are the same for any number.
    ``profile`` names the reference profile (``clinbench.concepts.profiles``; default: the one the
    database's layer was built with, else m4bench); a table the profile does not build is dropped, and
    every table built or kept records the profile. A build of some tables only (``only``) of another
    profile than the layer's is refused: it would leave a layer of two profiles.
    ``replace_derived``: replace (or drop) derived tables clinbench did not build (mimic-code's, M4's, a
    user's own); without it a build that would touch one is refused before anything is written
    (``_refuse_foreign``).
    """
    if not _SCHEMA_NAME.match(schema):
        raise ConceptError(f"invalid schema name {schema!r}: use lower-case letters, digits and underscores")
    workers = max(1, workers or int(os.environ.get("CLINBENCH_BUILD_WORKERS") or DEFAULT_WORKERS))

    con = _open(db_path)
    threads, failing = None, True
    try:  # a full disk or read-only file, while building or at the close's checkpoint: one line
        try:
            recorded = _recorded_profiles(con)
            profile = _chosen_profile(profile, recorded, partial=bool(only), db=Path(db_path))
            concepts = load_concepts(profile=profile)
            deps = dependency_map(concepts)
            reads = inputs(deps, concepts)
            existing = _existing_tables(con)  # read once: every step below keeps it current
            order = _select(concepts, reads, only, targets, lambda: existing, schema)
            if not replace_derived:
                _refuse_foreign(con, Path(db_path), existing, {output_table(concepts[q], schema) for q in order}
                                | _omitted(profile, schema), label(profile))
            con.execute("SET enable_progress_bar = false")
            threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
            con.execute(f"SET threads = {engine_threads(workers)}")
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {META_SCHEMA}")
            con.execute(
                f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name VARCHAR PRIMARY KEY, sql_sha256 VARCHAR, "
                "input_fingerprint VARCHAR, built_at TIMESTAMP, seconds DOUBLE, rows BIGINT, profile VARCHAR)"
            )
            # databases built before row counts, and before profiles, were kept
            con.execute(f"ALTER TABLE {META_TABLE} ADD COLUMN IF NOT EXISTS rows BIGINT")
            con.execute(f"ALTER TABLE {META_TABLE} ADD COLUMN IF NOT EXISTS profile VARCHAR")
            con.execute(f"ALTER TABLE {META_TABLE} ADD COLUMN IF NOT EXISTS content_hash VARCHAR")
            con.execute(f"ALTER TABLE {META_TABLE} DROP COLUMN IF EXISTS layout")  # kept by a build of a6e33d4
            for out_schema in sorted({output_table(concepts[q], schema).split(".")[0] for q in order}):
                con.execute(f"CREATE SCHEMA IF NOT EXISTS {out_schema}")
            _drop_omitted(con, profile, schema, existing)
            state = _BuildState(con, concepts, deps, reads, schema, force, profile, existing)
            if workers == 1:
                for index, qualified in enumerate(order):
                    state.announce(qualified, index, len(order), progress)
                    state.finish(qualified, state.build_one(con, qualified), index, len(order), progress)
            else:
                _build_concurrently(state, order, workers, progress)
            if not only:  # the whole layer is now this profile's (a table two profiles share was left as it was)
                con.execute(f"UPDATE {META_TABLE} SET profile = ? WHERE profile IS DISTINCT FROM ?",
                            [label(profile), label(profile)])
            failing = False
        finally:
            _close(con, threads, failing=failing)
    except duckdb.Error as exc:
        if cannot_write(exc):
            raise _write_error(exc, db_path) from exc
        raise
    # The raw-table fingerprints the manifest just computed stay true for the file as closed (a
    # build writes only derived tables): hand them to `verify` and campaign binding, which would
    # otherwise hash every raw row again on their first read of this file.
    if state.manifest_cache:
        manifest.file_cache(db_path).update(state.manifest_cache)
        manifest.persist_cache(db_path)
    return [state.results[q] for q in order]


DEFAULT_WORKERS = 2


def engine_threads(workers: int) -> int:
    """DuckDB threads for a build of ``workers`` builders: the cores the builders' own threads leave.

    Each builder's thread runs its query too, so ``workers`` builders with ``cores - workers + 1``
    DuckDB threads keep every core busy without more threads than cores. On 2 cores that is one
    thread, each concept single-threaded and two at once: 0.6-0.7 s less CPU in a 2,000-patient
    build than two threads a query (a parallel hash table or sort merges what each thread built).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores - workers + 1)


def _recorded_profiles(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The profiles (``name@version``) the database's built tables record (none before profiles were kept)."""
    try:
        return {r[0] for r in con.execute(f"SELECT DISTINCT profile FROM {META_TABLE} WHERE profile IS NOT NULL").fetchall()}
    except duckdb.Error:  # no bookkeeping yet, or bookkeeping from before profiles
        return set()


def _chosen_profile(asked: str | None, recorded: set[str], *, partial: bool, db: Path) -> str:
    """The profile a build uses: ``asked``, else the layer's own, else the default; a partial build of
    another profile than the layer's is a ConceptError (the one-line advice names both ways on)."""
    if asked is None and len(recorded) == 1:
        asked = next(iter(recorded)).split("@")[0]
    profile = get_profile(asked).name
    if partial and recorded and recorded != {label(profile)}:
        held = " and ".join(sorted(recorded))
        raise ConceptError(f"the concept layer in {db} was built with reference profile {held}; building "
                           f"{label(profile)} tables into it would mix profiles: pass --profile "
                           f"{sorted(recorded)[0].split('@')[0]}, or rebuild the layer with "
                           f"`clinbench concepts build {db} --profile {profile}`")
    return profile


def layer_profile(db_path: str | os.PathLike[str], asked: str | None = None) -> str:
    """The profile a command on ``db_path`` uses: ``asked``, else the one its concept layer was built with,
    else the default (one read-only look; a database that cannot be opened gets the default)."""
    if asked is not None:
        return get_profile(asked).name
    try:
        con = connect_when_free(db_path, read_only=True)
    except duckdb.Error as exc:
        if lock_holder(exc) is not None:
            raise  # held past the wait: the same holder would stop every later step
        return get_profile(None).name
    try:
        recorded = _recorded_profiles(con)
    finally:
        con.close()
    return _chosen_profile(None, recorded, partial=False, db=Path(db_path))


def build_absent(db_path: str | os.PathLike[str], tables: list[str], *, profile: str | None = None,
                 progress: Progress | None = None, also: list[str] = ()) -> list[BuildResult]:
    """Build on demand those of ``tables`` (qualified references or variants) that ``db_path`` lacks, with
    the part of their dependency closure not built yet; [] when each is there (one read-only look).
    ``also`` (the concept layer an agent sees): tables built as well when absent and every raw table they
    read is present (one whose raw tables are absent would only be skipped, on every command).

    A name no concept of ``profile`` defines, or a database that does not exist, builds nothing: the
    caller's own check says what is wrong. Tables already built outside the closure are left as they
    are, stale or not (``tasks verify`` and ``run`` report a stale one). ``profile`` defaults to the
    layer's own (``layer_profile``); another profile than the layer's is refused (``build_concepts``).
    """
    path = Path(db_path)
    if not path.is_file():
        return []
    profile = layer_profile(path, profile)
    try:
        con = connect_when_free(path, read_only=True)
    except duckdb.Error as exc:
        if lock_holder(exc) is not None:
            raise  # held past the wait: the same holder would stop every later step
        return []  # not a DuckDB file: the caller's own open says so
    try:
        existing = _existing_tables(con)
    finally:
        con.close()
    concepts = load_concepts(profile=profile)
    by_table = {output_table(c, MIMIC_DERIVED): q for q, c in concepts.items()}
    absent = {t for t in tables if t not in existing and t in by_table}
    if also:
        deps = dependency_map(concepts)
        absent |= {t for t in also if t not in existing and t in by_table
                   and all(r in existing for q in closure([by_table[t]], deps) for r in deps[q].raw)}
    if not absent:
        return []
    try:
        return build_concepts(path, only=sorted(absent), profile=profile, progress=progress)
    except WriteError as exc:
        if exc.__cause__ is None or kind_of(exc.__cause__) != "read-only":
            raise
        # a shared copy mounted read-only: moving it is no answer, building it once where it is writable is
        names = sorted(absent)
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        many = len(names) > 1
        raise WriteError(f"{path} lacks {len(names)} table{'s' if many else ''} this command needs ({shown}) and "
                         f"cannot be written here (read-only, or not writable by you): build {'them' if many else 'it'} "
                         f"once where it is writable (`clinbench concepts build {path} --all`), or pass a writable "
                         "copy") from exc.__cause__


def _omitted(profile: str, schema: str) -> set[str]:
    """The tables a build of ``profile`` drops: those another profile builds and this one does not (an m4bench
    layer has no arb) and the helper tables an earlier clinbench built (``helper_tables``: helpers are now part
    of the statements that read them, and some hold most of an answer)."""
    names = [name for layer in lineage(profile) for name in layer.omit] + sorted(helper_tables(profile))
    return {rewrite_schema(name, schema) for name in names}


def _refuse_foreign(con: duckdb.DuckDBPyConnection, db: Path, existing: set[str], touched: set[str], profile: str) -> None:
    """Refuse a build that would replace or drop (``touched``) a table clinbench did not build, one without a
    bookkeeping row: a database already holding mimic-code's derived layer (its own build scripts), M4's
    (`m4 init-derived`) or a user's tables would otherwise lose them to this profile's, silently."""
    built = {r[0] for r in con.execute(f"SELECT name FROM {META_TABLE}").fetchall()} if META_TABLE in existing else set()
    foreign = sorted(t for t in touched if t in existing and t not in built)
    if foreign:
        from clinbench.ehr.schema import listed  # as foreign_kinds: on the refusal only

        raise ConceptError(
            f"{db} holds {len(foreign)} derived table(s) clinbench did not build ({listed(foreign, 4)}: mimic-code's, M4's "
            f"`m4 init-derived` or your own) that the {profile} profile would replace or drop; nothing was written. "
            f"To keep them, give clinbench a copy (`cp {db} COPY`, then `clinbench concepts build COPY "
            f"--replace-derived`); to replace them here, `clinbench concepts build {db} --replace-derived`")


def _drop_omitted(con: duckdb.DuckDBPyConnection, profile: str, schema: str, existing: set[str]) -> None:
    """Drop the tables ``_omitted`` names, and from ``existing``, the tables the database holds."""
    for out in sorted(_omitted(profile, schema)):
        if out in existing:
            con.execute(f"DROP TABLE {out}")
            con.execute(f"DELETE FROM {META_TABLE} WHERE name = ?", [out])
            existing.discard(out)


class _BuildState:
    """What one build knows: tables present, bookkeeping rows, fingerprints, results so far."""

    def __init__(self, con: duckdb.DuckDBPyConnection, concepts: dict[str, Concept], deps: dict[str, Dependencies],
                 reads: dict[str, Dependencies], schema: str, force: bool, profile: str, existing: set[str]) -> None:
        # deps: what each file reads (the reference manifest hashes those files); reads: what each statement
        # reads, its helpers inlined (``helpers.inputs``): the build's graph
        self.con, self.concepts, self.deps, self.reads, self.schema, self.force = con, concepts, deps, reads, schema, force
        self.profile = profile
        self.existing = set(existing)
        self.meta, self.rows, self.contents = _meta_rows(con)
        self.raw_cache: dict[str, str] = {}
        self.columns = _column_types(con)
        # references and variants with a manifest row -> the profile it records, and when it was written
        rows = manifest.manifest_rows(con)
        self.recorded = {name: row.get("profile") for name, row in rows.items()}
        self.recorded_at = {name: row.get("built_at") for name, row in rows.items()}
        self.manifest_cache: dict[str, str] = {}
        self.unavailable: dict[str, str] = {}  # qualified concept -> why it was not built
        self.results: dict[str, BuildResult] = {}
        self.lock = threading.Lock()

    def announce(self, qualified: str, index: int, total: int, progress: Progress | None) -> None:
        if progress:
            progress(output_table(self.concepts[qualified], self.schema), index, total, None)

    def build_one(self, con: duckdb.DuckDBPyConnection, qualified: str) -> BuildResult:
        concept = self.concepts[qualified]
        out = output_table(concept, self.schema)
        dep = self.reads[qualified]
        with self.lock:
            existing = set(self.existing)
            blocked = [d for d in dep.derived if d in self.unavailable]
        missing_raw = [t for t in dep.raw if t not in existing]
        if missing_raw:
            schemas = sorted({t.split(".")[0] for t in missing_raw})
            absent = [s for s in schemas if not any(e.startswith(s + ".") for e in existing)]
            note = f"no {', '.join(absent)} schema in the database" if absent else f"needs {', '.join(missing_raw)}"
            return BuildResult(out, concept.name, "skipped", None, 0.0, note)
        if blocked:
            return BuildResult(out, concept.name, "skipped", None, 0.0, f"needs {', '.join(blocked)}, which was skipped")

        started = time.perf_counter()
        sql = statement(qualified, self.concepts, self.deps, self.schema)
        sql_sha = hashlib.sha256(sql.sql.encode("utf-8")).hexdigest()
        with self.lock:
            parts = [_raw_fingerprint(con, t, self.raw_cache, self.columns) for t in dep.raw]
            for d in dep.derived:
                dep_out = rewrite_schema(d, self.schema) if d.startswith(MIMIC_DERIVED + ".") else d
                parts.append(f"{dep_out}:{self.meta.get(dep_out)}")
            previous = self.meta.get(out)
        fingerprint = hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()

        note = ""
        if not self.force and previous and previous[:2] == (sql_sha, fingerprint) and out in existing:
            # its rows as the build wrote them (the hash kept with them): an UPDATE, or another program's table
            # of its name, is seen whatever blocks it landed in. A table built before hashes were kept is trusted
            # once, and its hash kept from now on
            content = manifest.table_hash(con, out)[1]
            if self.contents.get(out) is None:
                con.execute(f"UPDATE {META_TABLE} SET content_hash = ? WHERE name = ?", [content, out])
            if self.contents.get(out) in (None, content):
                rows = self.rows.get(out)
                if rows is None:
                    rows = con.execute(f"SELECT count(*) FROM {out}").fetchone()[0]
                return BuildResult(out, concept.name, "unchanged", rows, time.perf_counter() - started,
                                   "SQL and inputs unchanged since the last build")
            note = "rebuilt: changed since clinbench built it, by an UPDATE or another program's table of its name"

        rows, row = _materialise(con, concept, out, sql, (sql_sha, fingerprint, label(self.profile)), started,
                                 replace=out in existing, recorded=previous is not None,
                                 raw=lambda: sorted({t for n in closure([qualified], self.reads) for t in self.reads[n].raw}))
        with self.lock:
            self.meta[out] = row
        return BuildResult(out, concept.name, "built", rows, time.perf_counter() - started, note)

    def finish(self, qualified: str, result: BuildResult, index: int, total: int, progress: Progress | None) -> None:
        """Record a concept's result (on the build's own connection: the reference manifest is written here)."""
        concept = self.concepts[qualified]
        # a manifest row older than its table: the table was rebuilt by a build that failed or was killed before
        # it recorded the reference (the table and its bookkeeping row commit together, the manifest row after)
        built_at, recorded_at = (self.meta.get(result.name) or (None, None, None))[2], self.recorded_at.get(result.name)
        behind = bool(built_at and recorded_at and datetime.fromisoformat(built_at) > recorded_at)
        manifest.after_build(self.con, concept, result.name, "built" if behind else result.status, self.concepts,
                             self.deps, self.schema, self.manifest_cache, self.profile, self.recorded)
        with self.lock:
            if result.status == "skipped":
                self.unavailable[qualified] = result.note
            else:
                self.existing.add(result.name)
        self.results[qualified] = result
        if progress:
            progress(result.name, index, total, result)


def _build_concurrently(state: _BuildState, order: list[str], workers: int, progress: Progress | None) -> None:
    """Build ``order`` with up to ``workers`` concepts at once, each as soon as what it reads is built.

    Of the ready concepts, the one with the longest chain of concepts waiting on it starts first
    (then ``order``'s sequence), so the long chain (urine output -> hourly SOFA -> SOFA ->
    Sepsis-3) is not left for last. Results are recorded as they finish, on the main thread. The
    first failure stops new starts, lets running ones finish, and is raised.
    """
    position = {q: i for i, q in enumerate(order)}
    waiting = {q: {d for d in state.reads[q].derived if d in position} for q in order}
    chain: dict[str, int] = {}  # concepts on the longest path from q to the end of the build, q included
    for qualified in reversed(order):
        chain[qualified] = 1 + max((chain[o] for o in order if qualified in waiting[o]), default=0)
    priority = {q: (-chain[q], position[q]) for q in order}
    ready = sorted((q for q in order if not waiting[q]), key=priority.__getitem__)
    own = [state.con.cursor() for _ in range(workers)]
    cursors: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
    for cursor in own:
        cursors.put(cursor)

    def run(qualified: str) -> BuildResult:
        cursor = cursors.get()
        try:
            return state.build_one(cursor, qualified)
        finally:
            cursors.put(cursor)

    failure: BaseException | None = None
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="concepts") as pool:
            running: dict[Future[BuildResult], str] = {}
            try:
                while ready or running:
                    while ready and len(running) < workers and failure is None:
                        qualified = ready.pop(0)
                        state.announce(qualified, position[qualified], len(order), progress)
                        running[pool.submit(run, qualified)] = qualified
                    if not running:
                        break
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: position[running[f]]):
                        qualified = running.pop(future)
                        try:
                            result = future.result()
                        except BaseException as exc:  # noqa: BLE001 - raised once the running builds finish
                            failure = failure or exc
                            continue
                        # recorded even after a failure: its table committed, and its reference needs its manifest row
                        state.finish(qualified, result, position[qualified], len(order), progress)
                        for other in order:
                            if qualified in waiting[other]:
                                waiting[other].discard(qualified)
                                if not waiting[other] and other not in state.results and other not in running.values():
                                    ready.append(other)
                        ready.sort(key=priority.__getitem__)
            except BaseException:
                for cursor in own:  # Ctrl-C or a failing progress hook: stop the running queries now
                    cursor.interrupt()
                raise
    finally:
        for cursor in own:
            cursor.close()
    if failure is not None:
        raise failure
