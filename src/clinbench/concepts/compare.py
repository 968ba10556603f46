"""Whether two tables hold the same rows: the check behind "clinbench equals the anchor".

Rows are compared as multisets (row order is never part of a table's content). Numbers agree
within 1e-6 relative (1e-6 absolute below 1), so a DOUBLE and a FLOAT or DECIMAL holding the same
value agree; every other value must be equal; an empty cell equals only an empty cell. Columns an
anchor's own SQL leaves to the engine (``Profile.undetermined``) are left out of the comparison.
"""

from __future__ import annotations

import decimal

import duckdb

TOLERANCE = 1e-6


def _is_number(v) -> bool:
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def _sort_key(row: tuple) -> list:
    # numbers sort by a 3-place rounding so 0.1 (DOUBLE) and 0.1000000015 (FLOAT) pair up
    return [(0, "") if v is None else (1, f"{float(v):020.3f}") if _is_number(v) else (2, str(v)) for v in row]


def same_value(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _is_number(a) and _is_number(b):
        a, b = float(a), float(b)
        return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))
    return a == b


def columns_of(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    return [d[0] for d in con.execute(f"SELECT * FROM {relation} LIMIT 0").description]


def table_mismatch(con: duckdb.DuckDBPyConnection, ours: str, anchor: str, ignore: tuple[str, ...] = ()) -> str | None:
    """None when relation ``ours`` holds the rows of relation ``anchor``, else one line on what differs.

    Both are SQL relations readable on ``con`` (a table name, ``read_parquet(...)``, ``read_csv(...)``);
    the columns named in ``ignore`` are not compared.
    """
    if ignore:
        drop = ", ".join(f'"{c}"' for c in ignore)
        ours, anchor = (f"(SELECT * EXCLUDE ({drop}) FROM {r})" for r in (ours, anchor))
    anchor_cols, ours_cols = columns_of(con, anchor), columns_of(con, ours)
    if anchor_cols != ours_cols:
        return f"columns differ: anchor {anchor_cols}, clinbench {ours_cols}"
    select = ", ".join(f'"{c}"' for c in anchor_cols)
    theirs = sorted(con.execute(f"SELECT {select} FROM {anchor}").fetchall(), key=_sort_key)
    mine = sorted(con.execute(f"SELECT {select} FROM {ours}").fetchall(), key=_sort_key)
    if len(theirs) != len(mine):
        return f"{len(mine)} rows, anchor {len(theirs)}"
    differing = [(a, o) for a, o in zip(theirs, mine) if not all(same_value(x, y) for x, y in zip(a, o))]
    if not differing:
        return None
    a, o = differing[0]
    bad = [(c, x, y) for c, x, y in zip(anchor_cols, a, o) if not same_value(x, y)]
    return (f"{len(differing)} of {len(theirs)} rows differ (paired in sorted order); first {dict(zip(anchor_cols, a))}: "
            + "; ".join(f"{c} anchor {x!r} clinbench {y!r}" for c, x, y in bad[:4]))
