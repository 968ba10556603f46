"""What two reference profiles change on one database: per derived table and per task reference,
the rows each profile has that the other lacks and the keys (the table's grain) they touch.

Both profiles are built into a temporary copy of the database, each into its own derived schema,
so the database itself is not written. Rows are compared as multisets, numbers to 6 significant
digits (a DECIMAL(18, 3), a REAL and a DOUBLE holding the same value agree, as in
``concepts.compare``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clinbench.concepts.build import build_concepts
from clinbench.concepts.catalog import MIMIC_DERIVED, load_concepts
from clinbench.concepts.profiles import get_profile
from clinbench.duck import duckdb
from clinbench.errors import DataError

_NUMERIC = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "NUMERIC")


@dataclass(frozen=True)
class TableDiff:
    table: str  # table name in mimiciv_derived (target_<ref> for a task reference)
    kind: str  # 'concept' | 'target'
    rows_a: int | None  # None: the profile does not build it
    rows_b: int | None
    only_a: int = 0  # rows of A absent from B (multiset)
    only_b: int = 0
    keys: tuple[str, ...] = ()  # the grain columns keys are counted by
    keys_moved: int = 0  # distinct keys with a row only one side has

    @property
    def differs(self) -> bool:
        return self.rows_a != self.rows_b or bool(self.only_a or self.only_b)


Side = tuple[str, str]  # (catalog, schema) a profile's tables were built into


def _columns(con: duckdb.DuckDBPyConnection, side: Side) -> dict[str, list[tuple[str, str]]]:
    """table -> its (column, type) pairs, for every table of one side (one query)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? "
            "ORDER BY table_name, column_index", [side[0], side[1]]).fetchall():
        out.setdefault(table, []).append((column, kind))
    return out


def _normalised(side: Side, table: str, columns: list[tuple[str, str]]) -> str:
    def one(column: str, kind: str) -> str:
        if kind.upper().startswith(_NUMERIC):
            return f"printf('%.6g', CAST(\"{column}\" AS DOUBLE)) AS \"{column}\""
        return f'"{column}"'

    cols = ", ".join(one(c, t) for c, t in columns)
    return f'SELECT {cols} FROM "{side[0]}".{side[1]}."{table}"'


def diff_profiles(db_path: str | os.PathLike[str], a: str, b: str, *, workers: int | None = None) -> list[TableDiff]:
    """Every MIMIC-IV derived table and task reference either profile builds, compared on ``db_path``."""
    a, b = get_profile(a).name, get_profile(b).name
    path = Path(db_path)
    if not path.is_file():
        raise DataError(f"database {path} does not exist: create it with `clinbench data synth` or `clinbench data load`")
    schemas = {a: "profile_a_derived", b: "profile_b_derived"}
    with tempfile.TemporaryDirectory(prefix="clinbench-diff-", dir=path.parent) as tmp:
        copy = Path(tmp) / path.name
        shutil.copy(path, copy)
        for name, schema in schemas.items():
            build_concepts(copy, schema=schema, profile=name, workers=workers)
        con = duckdb.connect(str(copy), read_only=True)
        try:
            catalog = con.execute("SELECT current_database()").fetchone()[0]
            return compare_built(con, a, b, (catalog, schemas[a]), (catalog, schemas[b]))
        finally:
            con.close()


def compare_built(con: duckdb.DuckDBPyConnection, a: str, b: str, side_a: Side, side_b: Side) -> list[TableDiff]:
    """The comparison of profile ``a`` built at ``side_a`` with ``b`` built at ``side_b``, both readable on ``con``."""
    concepts = {**load_concepts(profile=b), **load_concepts(profile=a)}
    # a helper is no table (a CTE of the statements that read it): counted, it made every helper an identical table
    wanted = sorted({c.table: c.kind for c in concepts.values()
                     if c.schema == MIMIC_DERIVED and (c.in_layer or c.kind == "target")}.items(),
                    key=lambda kv: (kv[1] != "concept", kv[0]))
    out = []
    columns_a, columns_b = _columns(con, side_a), _columns(con, side_b)
    for table, kind in wanted:
        cols_a, cols_b = columns_a.get(table), columns_b.get(table)
        if not cols_a or not cols_b or [c for c, _ in cols_a] != [c for c, _ in cols_b]:
            rows = [con.execute(f'SELECT count(*) FROM "{s[0]}".{s[1]}."{table}"').fetchone()[0] if c else None
                    for s, c in ((side_a, cols_a), (side_b, cols_b))]
            out.append(TableDiff(table, kind, rows[0], rows[1], rows[0] or 0, rows[1] or 0))
            continue
        left, right = _normalised(side_a, table, cols_a), _normalised(side_b, table, cols_b)
        (rows_a, digest_a), (rows_b, digest_b) = (
            con.execute(f"SELECT count(*), coalesce(sum(hash(x)), 0) FROM ({side}) AS x").fetchone() for side in (left, right))
        if rows_a == rows_b and digest_a == digest_b:  # the same multiset (up to a hash collision)
            out.append(TableDiff(table, kind, rows_a, rows_b))
            continue
        only_a = con.execute(f"SELECT count(*) FROM ({left} EXCEPT ALL {right})").fetchone()[0]
        only_b = con.execute(f"SELECT count(*) FROM ({right} EXCEPT ALL {left})").fetchone()[0]
        concept = next(c for c in concepts.values() if c.table == table and c.schema == MIMIC_DERIVED)
        keys = tuple(concept.grain_columns([c for c, _ in cols_a]))
        moved = 0
        if (only_a or only_b) and keys:
            key_list = ", ".join(f'"{k}"' for k in keys)
            moved = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {key_list} FROM "
                                f"(({left} EXCEPT ALL {right}) UNION ALL ({right} EXCEPT ALL {left})))").fetchone()[0]
        out.append(TableDiff(table, kind, rows_a, rows_b, only_a, only_b, keys, moved))
    return out
