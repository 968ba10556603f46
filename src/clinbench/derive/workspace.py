"""Per-run workspaces: the masked database, the prompt and the condition's skill files.

The masked database is built by copying only the allowed tables into a NEW DuckDB file
(never by dropping from a copy: a dropped table's pages can survive in the file). It is
built once per (source fingerprint, task, mode, schema variant) under ``$CLINBENCH_CACHE``
(default ``~/.cache/clinbench``), under a file lock and by atomic rename, so concurrent
processes and Ray workers on one machine or a shared folder build it once and share it.
Native tasks build in layers, each a file that never held a table the task may not see:

- the source's raw layer (``raw_layer``): its raw tables and nothing else, kept by `data load` /
  `data synth` (a file copy), or else written by the first native build on the source (raw
  tables first into the new file, saved as the layer before anything else is written), used
  while the source's raw tables are exactly those it holds (a concepts rebuild keeps it). A raw
  task's database is a hard link to it; the layers below start from a file copy of it;
- for modes that drop concepts (standard MIMIC-IV tasks), one shared layer per source: every
  relation that no such task drops;
- a task's database: a file copy of the shared layer plus the few concept tables it keeps that
  other tasks drop, so each further task writes only those.

Tables are written by a few cursors at once, each committing its group in one transaction.

A sandboxed run does not copy it. The cached file is read-only (mode 0444) and a sandboxed
run's workspace holds a hard link to it (O(1) at any database size), or a read-only copy when
the workspace is on another filesystem than the cache. Sandboxes bind read-only files of a
workspace read-only (``read_only_files``), so no run can change what another run sees; the
prompt tells the agent to open the database read-only and where to put tables of its own.
Every other use (``clinbench workspace``, an ``--unsafe-no-isolation`` run, exports) gets a
copy of its own (``shared=False``, the default): a write through it never reaches the cache.
Each use checks the cached file's stamp and sha256 against those it was sealed with and
rebuilds it if anything wrote to it; the campaign checks the sha256 again after each run
and flags a run that saw it change.

Source fingerprint: sha256 of the file's size and mtime (nanoseconds) plus a catalogue
fingerprint (every table's schema, name, estimated row count and column names/types),
read from DuckDB's catalogue without scanning data, so it costs milliseconds at any
size. Rewriting the database (new size/mtime or changed tables) invalidates the cache.
The task and mode enter the key as the exact list of relations they allow, so tasks with
the same table set (all raw MIMIC-IV tasks; both eICU tasks) share one cached file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from clinbench.atomic import atomic_path, write_json_atomic
from clinbench.concepts.catalog import helper_tables
from clinbench.derive import cache_prune, conditions, raw_layer
from clinbench.derive.cache_files import cache_dir, intact, lock, lock_file, seal, sealed_sha256, verified
from clinbench.derive.catalogue import TaskSpec, get_task, load_catalogue
from clinbench.derive.schema_variants import Relation, VariantPlan, plan_variant, rewrite_sql
from clinbench.duck import connect_when_free, duckdb, when_free
from clinbench.errors import DataError

# Bump when the masking or variant rules change, so stale cached databases are not reused
# (2: helper concepts are masked).
BUILD_VERSION = "2"
SOURCE_SCHEMAS = raw_layer.RAW_SCHEMAS
DERIVED_SCHEMA = "mimiciv_derived"
HIDDEN_PREFIXES = ("target_", "variant_")
DATABASE_FILE = "database.duckdb"
COPY_WORKERS = 4  # cursors writing a masked database at once (at most one per core)
_SOURCE_REF = re.compile(r'\bsrc\."([^"]+)"\."([^"]+)"')
READ_ONLY_NOTE = (
    "`database.duckdb` is read-only (shared with other runs): open it with `duckdb -readonly database.duckdb` "
    "or `duckdb.connect('database.duckdb', read_only=True)`. Temporary tables (`CREATE TEMP TABLE`) work on it; "
    "for tables you want to keep, attach a scratch database in this directory: "
    "`ATTACH 'scratch.duckdb' AS scratch (READ_WRITE)`."
)


@dataclass(frozen=True)
class PreparedDatabase:
    path: Path  # the cached masked database (never handed to an agent directly)
    mapping_path: Path  # the variant mapping, kept next to the cache, outside any workspace
    plan: VariantPlan
    sha256: str | None  # what it was sealed with, read under its lock (the file may be pruned later)


def prepare_workspace(task_id: str, condition: str, schema_variant: str, db_path: str | Path,
                      out_dir: str | Path, *, output_path: str = "output.csv", shared: bool = False) -> Path:
    """Make ``out_dir`` with ``database.duckdb``, ``prompt.md`` and ``skills/``; return ``out_dir``.

    ``shared``: the database is a hard link to the cached file, for a run that only a sandbox
    (which binds it read-only) ever opens; otherwise it is a read-only copy of its own."""
    return build_workspace(task_id, condition, schema_variant, db_path, out_dir, output_path=output_path,
                           shared=shared)[0]


def build_workspace(task_id: str, condition: str, schema_variant: str, db_path: str | Path, out_dir: str | Path,
                    *, output_path: str = "output.csv", shared: bool = False) -> tuple[Path, PreparedDatabase]:
    """``prepare_workspace``, also returning the cached database it was made from."""
    spec = get_task(task_id)
    conditions.check_condition(spec, condition)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise DataError(f"workspace folder {out} is not empty; pass a new --out folder")
    prepared = prepare_database(spec, schema_variant, db_path)
    place = _share if shared else _copy
    out.mkdir(parents=True, exist_ok=True)
    try:
        place(prepared.path, out / DATABASE_FILE)
    except FileNotFoundError:  # removed (`clinbench data cache --all`) after its check: built again, once
        prepared = prepare_database(spec, schema_variant, db_path)
        place(prepared.path, out / DATABASE_FILE)
    rewrite = None if schema_variant == "native" else (lambda sql: rewrite_sql(sql, prepared.plan))
    skills = conditions.condition_skills(spec, condition, rewrite)
    prompt = conditions.prompt_text(spec, condition, output_path, skills, [READ_ONLY_NOTE, *prepared.plan.notes])
    conditions.write_skills(skills, out)
    (out / "prompt.md").write_text(prompt, encoding="utf-8")
    return out, prepared


def variant_mapping(task_id: str, schema_variant: str, db_path: str | Path) -> VariantPlan:
    """The variant plan (mapping) a workspace for this task was built with."""
    return prepare_database(get_task(task_id), schema_variant, db_path).plan


def allowed_relations(spec: TaskSpec, catalog: dict[tuple[str, str], tuple[tuple[str, str], ...]]) -> list[Relation]:
    """The source relations a workspace for ``spec`` may contain, from the source catalogue.

    A standard task's derived tables are those the anchor's agents had: never a reference, a
    variant or one of clinbench's helper concepts (``Concept.helper``: no anchor builds them, and
    antibiotic_culture_pairs, say, holds most of the suspicion-of-infection answer), nor a table
    the task drops."""
    schemas = set(SOURCE_SCHEMAS[spec.database])
    hidden: frozenset[str] = frozenset()
    if spec.database == "mimic-iv" and spec.mode == "standard":
        schemas.add(DERIVED_SCHEMA)
        hidden = frozenset(q.split(".", 1)[1] for q in helper_tables() if q.startswith(DERIVED_SCHEMA + "."))
    keep = []
    for (schema, table), cols in sorted(catalog.items()):
        if schema not in schemas:
            continue
        if schema == DERIVED_SCHEMA and (table.startswith(HIDDEN_PREFIXES) or table in spec.drop or table in hidden):
            continue
        keep.append(Relation(schema, table, cols))
    missing = [s for s in SOURCE_SCHEMAS[spec.database] if not any(r.schema == s for r in keep)]
    if missing:
        raise DataError(
            f"the database has no {', '.join(missing)} tables; task {spec.id} needs a {spec.database} database "
            "(`clinbench data synth` or `clinbench data load`)"
        )
    return keep


def view_digest(spec: TaskSpec, schema_variant: str, catalog: dict[tuple[str, str], tuple[tuple[str, str], ...]]) -> str:
    """What an agent of ``spec`` sees in its database, as a digest: the masking rules' version, the schema
    variant and every relation (name and columns) its database holds, of the source ``catalog`` (``read_catalog``)."""
    seen = [(r.schema, r.name, r.columns) for r in allowed_relations(spec, catalog)]
    return hashlib.sha256(repr((BUILD_VERSION, schema_variant, seen)).encode()).hexdigest()[:32]


def read_catalog(db_path: Path) -> tuple[str, dict[tuple[str, str], tuple[tuple[str, str], ...]]]:
    """(fingerprint, relations) of a source database, from its catalogue only (no data scan).

    Remembered per (path, size, mtime, inode) in the cache, so a run whose source file has
    not changed does not even open it.
    """
    st = db_path.stat()
    stamp = [str(db_path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino]
    memo = cache_dir() / "sources" / (hashlib.sha256(stamp[0].encode()).hexdigest()[:24] + ".json")
    try:
        saved = json.loads(memo.read_text(encoding="utf-8"))
        if saved["stamp"] == stamp:
            return saved["fingerprint"], {tuple(k.split(".", 1)): tuple(map(tuple, v))
                                          for k, v in saved["relations"].items()}
    except (OSError, ValueError, KeyError):
        pass
    fingerprint, relations = _read_catalog(db_path, st)
    write_json_atomic(memo, {"stamp": stamp, "fingerprint": fingerprint,
                             "relations": {f"{s}.{t}": cols for (s, t), cols in relations.items()}})
    return fingerprint, relations


def _read_catalog(db_path: Path, st: os.stat_result) -> tuple[str, dict[tuple[str, str], tuple[tuple[str, str], ...]]]:
    try:
        con = connect_when_free(db_path, read_only=True)
    except duckdb.Error as exc:
        raise DataError(f"cannot open {db_path} ({str(exc).splitlines()[0]}); is another process writing to it?") from exc
    try:
        tables = con.execute(
            "SELECT schema_name, table_name, estimated_size FROM duckdb_tables() ORDER BY ALL"
        ).fetchall()
        cols = con.execute(
            "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE NOT internal ORDER BY schema_name, table_name, column_index"
        ).fetchall()
    finally:
        con.close()
    relations: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, table, col, typ in cols:
        relations.setdefault((schema, table), []).append((col, typ))
    fingerprint = hashlib.sha256(repr((st.st_size, st.st_mtime_ns, tables, cols)).encode()).hexdigest()
    return fingerprint, {k: tuple(v) for k, v in relations.items()}


def prepare_database(spec: TaskSpec, schema_variant: str, db_path: str | Path) -> PreparedDatabase:
    """The cached masked database for (source, task's table set, variant), built on first use.

    The key uses the exact set of relations the task's mode allows (which is what task and
    mode decide), so tasks with the same table set share one cached file: every raw MIMIC-IV
    task shares one, every eICU task another; standard tasks differ by their dropped concepts.
    """
    db_path = Path(db_path)
    if not db_path.is_file():
        raise DataError(f"database {db_path} not found; build one with `clinbench data synth` or `clinbench data load`")
    plan_variant(schema_variant, [])  # validate the name before any work
    fingerprint, catalog = read_catalog(db_path)
    relations = allowed_relations(spec, catalog)
    key = _key(fingerprint, relations, schema_variant)
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{spec.database}.{spec.mode}.{schema_variant}.{key}.duckdb"
    mapping = target.with_suffix(".mapping.json")
    source = cache_prune.source(db_path, fingerprint)
    with lock(lock_file(target)):
        if mapping.is_file() and verified(target):
            return PreparedDatabase(target, mapping, _load_plan(mapping), sealed_sha256(target))
        salt = _salt(root)
        if schema_variant == "native":
            plan = _build_native(spec, relations, source, db_path, target, salt, root)
        else:
            plan = _build(relations, schema_variant, db_path, target, salt)
        seal(target, source=source)
        write_json_atomic(mapping, plan.to_json(), indent=1)
        prepared = PreparedDatabase(target, mapping, plan, sealed_sha256(target))
    cache_prune.prune_superseded(source)  # what this source's earlier contents were masked into
    return prepared


def _key(fingerprint: str, relations: list[Relation], variant: str) -> str:
    return hashlib.sha256(
        f"{BUILD_VERSION}|{fingerprint}|{[r.qualified for r in relations]}|{variant}".encode()
    ).hexdigest()[:24]


def _build_native(spec: TaskSpec, relations: list[Relation], source: dict[str, str], db_path: Path, target: Path,
                  salt: str, root: Path) -> VariantPlan:
    """Write a native task's database from the deepest cached layer it can start from, writing the
    missing layers on the way: the raw layer (the source's raw tables), then for standard
    tasks the shared layer. Locks: the task's, then the shared layer's, then the raw layer's.
    ``source`` (``cache_prune.source``) is sealed into the shared layer (the raw layer serves every
    fingerprint with the same raw tables)."""
    shared = _shared_layer(spec, relations, source["fingerprint"], root)
    sources = {shared[0]: source} if shared else {}
    with contextlib.ExitStack() as held:
        if shared:
            held.enter_context(lock(lock_file(shared[0])))
            if intact(shared[0]):  # the usual further task: no need to look at the raw tables
                return _build(relations, "native", db_path, target, salt, shared)
        raw = raw_layer.locate(db_path, spec.database)
        base, todo = None, [layer for layer in (shared,) if layer]
        if raw:
            held.enter_context(raw_layer.lock(spec.database))
            if intact(raw[0]):
                base = raw
            else:
                todo.insert(0, raw)
        if todo and todo[-1][1] == {r.qualified for r in relations}:  # the task's table set is the last layer:
            last = todo.pop()                                         # write that, then link to it
            _build([r for r in relations if r.qualified in last[1]], "native", db_path, last[0], salt, base,
                   layers=todo, sources=sources)
            seal(last[0], checksum=False, source=sources.get(last[0]))
            base, todo = last, [*todo, last]
            plan = _build(relations, "native", db_path, target, salt, base)
        else:
            plan = _build(relations, "native", db_path, target, salt, base, layers=todo, sources=sources)
        if raw and raw in todo:
            raw_layer.prune(spec.database)
        return plan


def _shared_layer(spec: TaskSpec, relations: list[Relation], fingerprint: str,
                  root: Path) -> tuple[Path, set[str]] | None:
    """For a native task whose mode drops concepts: (path, qualified names) of the cached database
    of every relation that no task of its (database, mode) drops, built once per source and
    shared by those tasks; None when there is nothing to share.

    A task's masked database is then a file copy of it plus the few concept tables that other
    tasks drop and this one keeps. It never holds a dropped or hidden table, so copying it leaks
    nothing.
    """
    droppable = {d for t in load_catalogue().values() if (t.database, t.mode) == (spec.database, spec.mode)
                 for d in t.drop}
    shared = [r for r in relations if not (r.schema == DERIVED_SCHEMA and r.name in droppable)]
    if len(shared) == len(relations):
        return None
    key = _key(fingerprint, shared, "native-shared")
    return root / f"{spec.database}.{spec.mode}.native.shared.{key}.duckdb", {r.qualified for r in shared}


def read_only_files(workspace: str | Path) -> list[Path]:
    """The files at the top of ``workspace`` that are read-only (the shared masked database):
    a sandbox binds each of them read-only over the writable workspace mount."""
    files = []
    for entry in sorted(os.scandir(workspace), key=lambda e: e.name):
        if entry.is_file(follow_symlinks=False) and not entry.stat(follow_symlinks=False).st_mode & 0o222:
            files.append(Path(entry.path))
    return files


def _share(cached: Path, dst: Path) -> None:
    """The run's ``database.duckdb``: a hard link to the read-only cached file (no copy), or a
    read-only copy when the workspace is on another filesystem (or one without hard links)."""
    try:
        os.link(cached, dst)
    except OSError:
        _copy(cached, dst)


def _copy(cached: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(cached, tmp)
        os.chmod(tmp, 0o444)


def _build(relations: list[Relation], variant: str, db_path: Path, target: Path, salt: str,
           base: tuple[Path, set[str]] | None = None,
           layers: list[tuple[Path, set[str]]] | tuple = (),
           sources: dict[Path, dict[str, str]] | None = None) -> VariantPlan:
    """Write ``target`` with the variant's tables of ``relations``, copied from the source.

    With ``base`` (a cached database holding some of these relations and nothing else), start
    from a file copy of it and write only the relations it lacks (a hard link to it when it lacks
    none). With ``layers`` (path, names), each holding more than the one before: write each
    layer's relations in turn and save a sealed copy of the file as that layer's path once it
    holds them, then write the rest. A layer is thus a new file that never held another table.
    ``sources``: layer path -> the source sealed into it (``seal``).
    """
    sources = sources or {}
    plan = plan_variant(variant, relations, salt)
    allowed = {r.qualified for r in relations}
    held = base[1] if base else set()
    chain = [held, *(names for _, names in layers)]
    if not all(a <= b for a, b in zip(chain, chain[1:])) or not chain[-1] <= allowed:
        raise AssertionError("a base or layer holds tables outside the task's set")  # never brings a hidden table
    stages = [(names, path) for path, names in layers] + [(None, None)]  # None: every output still to write
    done = set(held)
    with atomic_path(target) as tmp:
        if base and not layers and held == allowed:
            _share(base[0], tmp)
            return plan
        wal = _wal(tmp)
        try:
            if base:
                shutil.copyfile(base[0], tmp)
            con = duckdb.connect(str(tmp))
            try:
                for names, path in stages:
                    todo = [o for o in plan.outputs if f"{o.schema}.{o.name}" not in done
                            and (names is None or f"{o.schema}.{o.name}" in names)]
                    if todo:
                        _copy_tables(con, db_path, todo)
                    done |= {f"{o.schema}.{o.name}" for o in todo}
                    con.execute("CHECKPOINT")  # the file is complete here (no log)
                    if path is not None:  # save it as the layer
                        with atomic_path(path) as layer_tmp:
                            shutil.copyfile(tmp, layer_tmp)
                            _wal(path).unlink(missing_ok=True)  # DuckDB would replay a stale log onto it
                        seal(path, checksum=False, source=sources.get(path))
            finally:
                con.close()
        finally:
            wal.unlink(missing_ok=True)
        _wal(target).unlink(missing_ok=True)
    return plan


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def _copy_tables(con: duckdb.DuckDBPyConnection, db_path: Path, outputs: list) -> None:
    """Create each output table from the attached source.

    The tables are split into a few groups of about equal size, each written by its own
    cursor in one transaction: small tables then run side by side instead of one after another
    (one DuckDB pipeline rarely fills every core), and each group commits once.
    """
    when_free(lambda: con.execute(f"ATTACH '{_esc(str(db_path))}' AS src (READ_ONLY)"), db_path)
    for schema in sorted({out.schema for out in outputs}):
        con.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    sizes = dict(((s, t), n) for s, t, n in con.execute(
        "SELECT schema_name, table_name, estimated_size * column_count FROM duckdb_tables() "
        "WHERE database_name = 'src'").fetchall())
    groups = _groups(outputs, sizes, min(COPY_WORKERS, os.cpu_count() or 1))
    errors: list[BaseException] = []

    def write(cur: duckdb.DuckDBPyConnection, group: list) -> None:
        try:
            cur.execute("BEGIN")
            for out in group:
                cur.execute(f'CREATE TABLE "{out.schema}"."{out.name}" AS {out.select}')
            cur.execute("COMMIT")
        except BaseException as exc:  # re-raised below, in the caller's thread
            errors.append(exc)

    if len(groups) == 1:
        write(con, groups[0])
    else:
        cursors = [con.cursor() for _ in groups]
        threads = [threading.Thread(target=write, args=(cur, group)) for cur, group in zip(cursors, groups)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for cur in cursors:
            cur.close()
    if errors:
        raise errors[0]
    con.execute("DETACH src")


def _groups(outputs: list, sizes: dict[tuple[str, str], int], n: int) -> list[list]:
    """``outputs`` in at most ``n`` non-empty groups of about equal source size (largest first,
    each to the lightest group)."""
    def size(out) -> int:
        return sum(sizes.get(ref, 0) for ref in _SOURCE_REF.findall(out.select)) or 1

    loads, groups = [0] * max(1, n), [[] for _ in range(max(1, n))]
    for out in sorted(outputs, key=size, reverse=True):
        i = loads.index(min(loads))
        groups[i].append(out)
        loads[i] += size(out)
    return [group for group in groups if group]


def _load_plan(path: Path) -> VariantPlan:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return VariantPlan(raw["variant"], [], raw["reconstruct"], raw["notes"])


def _salt(root: Path) -> str:
    """A per-machine secret so opaque names cannot be recomputed from public table names."""
    path = root / "variant-salt"
    if not path.is_file():
        tmp = root / f".variant-salt.{os.getpid()}"
        tmp.write_text(secrets.token_hex(16))
        try:
            os.link(tmp, path)  # first writer wins; others read the winner's salt
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    return path.read_text().strip()


def _esc(text: str) -> str:
    return text.replace("'", "''")
