"""The reference side of scoring: a task's reference rows prepared once, cached per database file.

Preparing a reference means reading its table and computing what every score of it needs:

- ``__ref``: every column typed as the scorer compares it (numbers DOUBLE, timestamps
  TIMESTAMP, everything else trimmed text; numeric keys keep their own type for display, with a
  DOUBLE copy ``__j<i>`` to join on, the type the agent's keys are read as), and ``__pos``, the
  row's position in the table (examples list the first mismatching rows in that order); the rows
  are kept sorted by the keys, the order ``clinbench tasks reference`` writes and agents mostly
  write, so an output in that order can be paired with them row by row (``score``);
- the column kinds, the row count, each numeric column's scale (max - min, 1 when 0 or
  empty; the nMAE divides by it) and whether no two rows share a key (as the join compares them).

``score_output`` keeps that as a Parquet file in the workspace cache (``cache_files.cache_dir()``,
under ``references/``: inside the folder a campaign hides from sandboxed agents, beside the
masked databases), named by checksums of the database file's identity
(``clinbench.fileid``: path, inode, size, mtime, ctime, write-ahead log) and the table, and
holding them whole (a file whose stamp differs is prepared again). A
later score of the same file does not open the database at all; any write to the database
changes its identity, so a stale reference is never read. The file is written under a
temporary name and renamed; older files of the same database and table are removed. A cache
that cannot be written (read-only home) only costs the preparation next time.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

from clinbench.duck import duckdb, when_free

from clinbench.errors import TaskError
from clinbench.plain import Frozen

# Bump when the preparation rules change, so files prepared by older rules are not read.
PREPARATION_VERSION = 2

_NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "REAL", "DECIMAL", "BOOLEAN")


class Reference(Frozen):
    """A prepared reference, visible on the connection as ``relation``.

    ``kinds``: column -> numeric | timestamp | string; ``scales``: numeric non-key column -> max - min (1.0
    when 0 or empty); ``source``: the table it was read from, for messages; ``unique_keys``: no two rows share
    a key (compared as the join compares them)."""

    def __init__(self, relation: str, kinds: dict[str, str], rows: int, scales: dict[str, float],
                 keys: tuple[str, ...], source: str, unique_keys: bool = False) -> None:
        self._set(relation=relation, kinds=kinds, rows=rows, scales=scales, keys=keys, source=source,
                  unique_keys=unique_keys)

    def join_column(self, i: int) -> str:
        """The reference column the agent's ``__k<i>`` joins on."""
        key = self.keys[i]
        return f"__j{i}" if self.kinds[key] == "numeric" else key

    def require(self, columns: list[str]) -> None:
        missing = [c for c in columns if c not in self.kinds]
        if missing:
            raise TaskError(f"reference {self.source} lacks column(s) {', '.join(missing)}; rebuild the concepts")


def prepare(con: duckdb.DuckDBPyConnection, source: str, keys: list[str]) -> Reference:
    """Read ``source`` (a relation visible on ``con``) into the temporary table ``__ref``."""
    types = {name: str(typ).upper() for name, typ, *_ in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    missing = [k for k in keys if k not in types]
    if missing:
        raise TaskError(f"reference {source} lacks column(s) {', '.join(missing)}; rebuild the concepts")
    kinds = {name: _kind(typ) for name, typ in types.items()}
    select = []
    for name, kind in kinds.items():
        select.append(f"{_q(name)} AS {_q(name)}" if name in keys and kind == "numeric"
                      else f"{_ref_expr(name, kind)} AS {_q(name)}")
    select += [f"CAST({_q(k)} AS DOUBLE) AS __j{i}" for i, k in enumerate(keys) if kinds[k] == "numeric"]
    order = ", ".join(_q(k) for k in keys)
    con.execute(f"CREATE OR REPLACE TEMP TABLE __ref AS SELECT * FROM (SELECT {', '.join(select)}, "
                f"row_number() OVER () AS __pos FROM {source}) ORDER BY {order}")
    numeric = [c for c, kind in kinds.items() if kind == "numeric" and c not in keys]
    row = con.execute("SELECT " + ", ".join(["count(*)", *(f"max({_q(c)}) - min({_q(c)})" for c in numeric)])
                      + " FROM __ref").fetchone()
    scales = {c: (float(s) if s else 1.0) for c, s in zip(numeric, row[1:])}
    ref = Reference("__ref", kinds, int(row[0]), scales, tuple(keys), source)
    join = ", ".join(_q(ref.join_column(i)) for i in range(len(keys)))
    shared = con.execute(f"SELECT count(*) FROM (SELECT 1 FROM __ref GROUP BY {join} HAVING count(*) > 1)")
    return ref.replace(unique_keys=not shared.fetchone()[0])


def cached(con: duckdb.DuckDBPyConnection, db_path: Path, table: str, keys: list[str], on_missing, *,
           use_cache: bool = True) -> Reference:
    """The prepared reference of ``table`` in the database file ``db_path``, from the cache when
    the file is unchanged; otherwise prepared from the database (``on_missing(schemas)`` gives
    the message when the table is absent) and cached. ``use_cache=False`` only prepares it."""
    from clinbench.fileid import file_identity

    identity = file_identity(db_path)
    from clinbench.derive.cache_files import cache_dir

    folder = cache_dir() / "references"
    # named by checksums (zlib's: hashlib's import costs 20 ms a score); the file holds the whole stamp,
    # so a file of another database or preparation that shares the name is never read
    stamp = repr((PREPARATION_VERSION, duckdb.__version__, table, keys, identity))
    stem = "%08x" % zlib.crc32(f"{identity[0]}\0{table}".encode())
    path = folder / ("%s-%08x.parquet" % (stem, zlib.crc32(stamp.encode())))
    ref = _read(con, path, keys, table, stamp) if use_cache else None
    if ref is not None:
        return ref
    when_free(lambda: con.execute(f"ATTACH {_lit(str(db_path))} AS __src (READ_ONLY)"), db_path)
    schema, name = table.split(".")
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = '__src' "
                         "AND schema_name = ? AND table_name = ?", [schema, name]).fetchone()[0]
    if not exists:
        schemas = {s for (s,) in con.execute(
            "SELECT DISTINCT schema_name FROM duckdb_tables() WHERE database_name = '__src'").fetchall()}
        raise TaskError(on_missing(schemas))
    ref = prepare(con, f"__src.{_q(schema)}.{_q(name)}", keys)
    ref = ref.replace(source=table)
    con.execute("DETACH __src")
    if use_cache and file_identity(db_path) == identity:  # not written while we read it
        _write(con, ref, path, stem, stamp)
    return ref


def _read(con: duckdb.DuckDBPyConnection, path: Path, keys: list[str], table: str, stamp: str) -> Reference | None:
    try:
        meta = con.execute("SELECT value FROM parquet_kv_metadata(?) WHERE key = 'clinbench_reference'",
                           [str(path)]).fetchone()
        if meta is None:
            return None
        data = json.loads(meta[0])
        if data.get("stamp") != stamp:
            return None
        con.execute(f"CREATE OR REPLACE TEMP VIEW __ref AS SELECT * FROM read_parquet({_lit(str(path))})")
    except (duckdb.Error, ValueError, AttributeError):
        return None  # absent, removed meanwhile or unreadable: prepare it again
    return Reference("__ref", data["kinds"], int(data["rows"]), data["scales"], tuple(keys), table,
                     bool(data["unique_keys"]))


def _write(con: duckdb.DuckDBPyConnection, ref: Reference, path: Path, stem: str, stamp: str) -> None:
    from clinbench.atomic import remove_stale_temps, temp_name

    meta = json.dumps({"stamp": stamp, "kinds": ref.kinds, "rows": ref.rows, "scales": ref.scales,
                       "unique_keys": ref.unique_keys})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(path)
        tmp = temp_name(path)
        try:
            # uncompressed: every score reads all of it (snappy's decoding cost 3 ms of a 209k-row reference,
            # for a file 30% smaller)
            con.execute(f"COPY __ref TO {_lit(str(tmp))} (FORMAT parquet, COMPRESSION uncompressed, "
                        f"KV_METADATA {{clinbench_reference: {_lit(meta)}}})")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        for old in path.parent.glob(f"{stem}-*.parquet"):
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, duckdb.Error):
        pass  # best effort: the next score prepares it again


def _kind(typ: str) -> str:
    if typ.startswith(_NUMERIC_TYPES):
        return "numeric"
    if typ.startswith(("TIMESTAMP", "DATE")):
        return "timestamp"
    return "string"


def _ref_expr(col: str, kind: str) -> str:
    if kind == "numeric":
        return f"CAST({_q(col)} AS DOUBLE)"
    if kind == "timestamp":
        return f"CAST({_q(col)} AS TIMESTAMP)"
    # the agent's cells are read trimmed, so the reference's are compared trimmed too
    return f"trim(CAST({_q(col)} AS VARCHAR))"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
