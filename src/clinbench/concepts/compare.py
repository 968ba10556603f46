"""Whether two tables hold the same rows: the check behind "clinbench equals the anchor".

Rows are compared as multisets (row order is never part of a table's content). Numbers agree
within 1e-6 relative (1e-6 absolute below 1), so a DOUBLE and a FLOAT or DECIMAL holding the same
value agree; every other value must be equal; an empty cell equals only an empty cell. Columns an
anchor's own SQL leaves to the engine (``Profile.undetermined``) are left out of the comparison.
"""

from __future__ import annotations

import decimal

from clinbench.duck import duckdb

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
    theirs = con.execute(f"SELECT {select} FROM {anchor}").fetchall()
    mine = con.execute(f"SELECT {select} FROM {ours}").fetchall()
    if len(theirs) != len(mine):
        return f"{len(mine)} rows, anchor {len(theirs)}"
    differing = _unpaired(theirs, mine)
    if not differing:
        return None
    a, o = differing[0]
    bad = [(c, x, y) for c, x, y in zip(anchor_cols, a, o) if not same_value(x, y)]
    return (f"{len(differing)} of {len(theirs)} rows differ (paired in sorted order); first {dict(zip(anchor_cols, a))}: "
            + "; ".join(f"{c} anchor {x!r} clinbench {y!r}" for c, x, y in bad[:4]))


def _unpaired(theirs: list[tuple], mine: list[tuple]) -> list[tuple[tuple, tuple]]:
    """(anchor row, clinbench row) for each row without an equal partner, paired in sorted order.

    Rows are grouped by their exact columns (no float or decimal value on either side) and matched within a
    group: in sorted order first, then, for rows left over, with any equal partner, since a sort on rounded
    numbers can order a REAL and a DOUBLE of one value differently (0.0645 rounds to 0.064 as a REAL).
    """
    width = len(theirs[0]) if theirs else 0
    approx = [i for i in range(width)
              if any(isinstance(r[i], (float, decimal.Decimal)) for rows in (theirs, mine) for r in rows)]
    exact = [i for i in range(width) if i not in approx]

    def groups(rows):
        found: dict[tuple, list[tuple]] = {}
        for r in rows:
            found.setdefault(tuple(_sort_key([r[i] for i in exact])), []).append(r)
        return found

    ours_by, theirs_by = groups(mine), groups(theirs)
    left_a, left_o = [], []
    for key in sorted(set(theirs_by) | set(ours_by)):
        a_rows = sorted(theirs_by.get(key, []), key=_sort_key)
        o_rows = sorted(ours_by.get(key, []), key=_sort_key)
        unmatched_a = []
        for i, a in enumerate(a_rows):
            o = o_rows[i] if i < len(o_rows) else None
            if o is not None and _same_row(a, o):
                o_rows[i] = None
            else:
                unmatched_a.append(a)
        rest = [o for o in o_rows if o is not None]
        for a in unmatched_a:
            partner = next((j for j, o in enumerate(rest) if _same_row(a, o)), None)
            if partner is None:
                left_a.append(a)
            else:
                rest.pop(partner)
        left_o.extend(rest)
    left_a.sort(key=_sort_key)
    left_o.sort(key=_sort_key)
    pad = max(len(left_a), len(left_o))
    return list(zip(left_a + [(None,) * width] * (pad - len(left_a)), left_o + [(None,) * width] * (pad - len(left_o))))


def _same_row(a: tuple, b: tuple) -> bool:
    return all(same_value(x, y) for x, y in zip(a, b))
