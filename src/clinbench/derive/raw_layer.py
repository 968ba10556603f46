"""Raw layers: a copy of a database taken while it held its raw tables and nothing else.

A masked database is never a copy of a source with tables dropped, since a dropped table's
pages can survive in the file. So the first masked database of a source has to write every
table it keeps into a new file, and re-encoding the raw tables (chartevents, labevents, ...)
is most of that work. There is one moment when a copy of the source has nothing to hide: when
`data load` or `data synth` has just written the raw tables into a brand-new file, before any
concept, reference or record table exists. ``keep`` copies the file then (a file copy, no
re-encoding) into ``$CLINBENCH_CACHE/workspaces/raw/``, read-only. The first masked database
of that source later starts from a copy of this layer and writes only the concept tables.
For a source without one, the first masked database writes the raw tables first into its new
file and saves that as the layer (``locate`` gives its name), so raw tasks and a later concepts
rebuild (same raw tables, new fingerprint) start from it.

A layer is used only while the source's raw tables are exactly those it holds. Its name
carries the storage signature of the source's raw tables: for each table its columns and
types, its exact row count, and every stored segment (row group, column, position, rows,
compression, statistics, block and offset, pending updates) from DuckDB's
``pragma_storage_info``, plus the checksum DuckDB keeps at the start of every block those
segments use. DuckDB writes changed data to new blocks with new checksums and counts deleted
rows, so an INSERT, UPDATE, DELETE or type change in any raw table, or a change not yet
checkpointed, gives another signature and another layer (built from the source on the next
first use). Tables added in other schemas (the concepts build) leave the signature as it was,
and a byte copy of the source has the same signature, so it finds the layer too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from clinbench.atomic import atomic_path
from clinbench.derive import cache_files
from clinbench.duck import connect_when_free, duckdb
from clinbench.write_errors import WriteError

_HEADERS = 3 * 4096  # DuckDB's main header and two database headers precede the first block
CHECKSUM_BYTES = 8
RAW_SCHEMAS = {"mimic-iv": ("mimiciv_hosp", "mimiciv_icu"), "eicu": ("eicu_crd",)}
SPARE_FACTOR = 2  # a layer is kept only while the cache's disk has this many times its size free
KEPT_PER_DATASET = 4  # the newest layers of each dataset stay; older ones are removed when a new one is kept


def signature(con: duckdb.DuckDBPyConnection, dataset: str) -> tuple[str, set[str]]:
    """(signature, qualified table names) of the dataset's raw tables in ``con``'s database file."""
    schemas = list(RAW_SCHEMAS[dataset])
    marks = ", ".join("?" for _ in schemas)
    here = f"database_name = current_database() AND schema_name IN ({marks})"
    tables = con.execute(f"SELECT schema_name, table_name FROM duckdb_tables() WHERE {here} ORDER BY ALL",
                         schemas).fetchall()
    if not tables:
        return "", set()
    cols = con.execute(f"SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() WHERE {here} "
                       "ORDER BY schema_name, table_name, column_index", schemas).fetchall()
    names = [(f"{s}.{t}", f'"{s}"."{t}"') for s, t in tables]
    rows = con.execute(" UNION ALL ".join(f"SELECT '{_esc(n)}', count(*) FROM {q}" for n, q in names)).fetchall()
    segments = con.execute(" UNION ALL ".join(
        f"SELECT '{_esc(n)}' AS t, row_group_id, column_id, column_path, segment_id, segment_type, start, count, "
        "compression, stats::VARCHAR, has_updates, persistent, block_id, block_offset, additional_block_ids::VARCHAR "
        f"FROM pragma_storage_info('{_esc(q)}')" for n, q in names) + " ORDER BY ALL").fetchall()
    path, block_size = con.execute("SELECT path, block_size FROM pragma_database_size() JOIN duckdb_databases() "
                                   "USING (database_name) WHERE database_name = current_database()").fetchone()
    blocks = {row[12] for row in segments} | {b for row in segments for b in json.loads(row[14])}
    checksums = _checksums(Path(path), sorted(b for b in blocks if b >= 0), block_size)
    digest = hashlib.sha256(repr((dataset, tables, cols, sorted(rows), segments, checksums)).encode()).hexdigest()
    return digest[:24], {n for n, _ in names}


def _checksums(path: Path, blocks: list[int], block_size: int) -> bytes:
    """The checksums DuckDB stores at the start of each of ``blocks`` of the file at ``path``."""
    with path.open("rb") as fh:
        return b"".join(os.pread(fh.fileno(), CHECKSUM_BYTES, block_offset(b, block_size)) for b in blocks)


def _free_bytes(path: Path) -> int:
    """Free bytes on the filesystem that will hold ``path`` (its nearest existing folder)."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free


def block_offset(block: int, block_size: int) -> int:
    """Where block ``block`` (and its checksum) starts in a DuckDB file."""
    return _HEADERS + block * block_size


def keep(con: duckdb.DuckDBPyConnection, dataset: str) -> Path | None:
    """Copy the database ``con`` is writing as the dataset's raw layer, if it holds raw tables only.

    Call it on a brand-new file once its raw tables are written (``data load``, ``data synth``):
    only then can no other table have left pages in it. Returns the layer, or None when the
    file holds anything else (another schema's tables, a view), the cache cannot be written, or
    its disk has less than ``SPARE_FACTOR`` times the file's size free; a raw layer only saves
    time, so failing to keep one never fails the load.
    """
    schemas = RAW_SCHEMAS[dataset]
    marks = ", ".join("?" for _ in schemas)
    others = con.execute(
        f"SELECT (SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        f"AND schema_name NOT IN ({marks})) + (SELECT count(*) FROM duckdb_views() "
        "WHERE database_name = current_database() AND NOT internal)", list(schemas)).fetchone()[0]
    if others:
        return None
    try:
        con.execute("CHECKPOINT")
        digest, tables = signature(con, dataset)
        if not tables:
            return None
        source = Path(con.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0])
        path = layer_path(dataset, digest)
        if not cache_files.intact(path) and _free_bytes(path) < SPARE_FACTOR * source.stat().st_size:
            return None  # a full MIMIC-IV holds ~10 GB of raw tables: never fill the user's disk for a speed-up
        with lock(dataset):
            if not cache_files.intact(path):
                with atomic_path(path) as tmp:
                    shutil.copyfile(source, tmp)
                cache_files.seal(path, checksum=False)
                prune(dataset)
        return path
    except duckdb.InterruptException:
        raise  # Ctrl-C during the copy's queries stops the load; it is no reason to go on without a layer
    except (OSError, duckdb.Error, WriteError):  # e.g. a full or read-only cache: the load goes on without
        return None


def locate(db_path: Path, dataset: str) -> tuple[Path, set[str]] | None:
    """(layer path, qualified tables) for the raw tables the source at ``db_path`` holds now, or None
    when it has none. The layer is usable when ``cache_files.intact`` says so; otherwise a build may
    write one there (raw tables only, into a new file) under ``lock(dataset)``.

    One read of the catalogue and storage metadata of the raw tables, plus 8 bytes per block
    they use (no data scan).
    """
    con = connect_when_free(db_path, read_only=True)
    try:
        digest, tables = signature(con, dataset)
    finally:
        con.close()
    return (layer_path(dataset, digest), tables) if tables else None


def find(db_path: Path, dataset: str) -> tuple[Path, set[str]] | None:
    """(layer, qualified tables it holds) for the source at ``db_path``, or None when none is kept.

    Costs nothing when no layer of the dataset is kept; otherwise as ``locate``.
    """
    if not any(cache_files.cache_dir().joinpath("raw").glob(f"{dataset}.*.duckdb")):
        return None
    found = locate(db_path, dataset)
    return found if found and cache_files.intact(found[0]) else None


def lock(dataset: str):
    """The lock under which a layer of ``dataset`` is written."""
    return cache_files.lock(cache_files.cache_dir() / "raw" / f"{dataset}.lock")


def prune(dataset: str) -> None:
    """Remove all but the newest ``KEPT_PER_DATASET`` layers of ``dataset``. Databases built from a
    removed layer are copies of it or hard links to it, so they stay valid."""
    layers = sorted(cache_files.cache_dir().joinpath("raw").glob(f"{dataset}.*.duckdb"),
                    key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in layers[KEPT_PER_DATASET:]:
        old.unlink(missing_ok=True)
        cache_files.stamp_path(old).unlink(missing_ok=True)


def layer_path(dataset: str, digest: str) -> Path:
    return cache_files.cache_dir() / "raw" / f"{dataset}.{digest}.duckdb"


def _esc(text: str) -> str:
    return text.replace("'", "''")
