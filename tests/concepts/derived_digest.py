"""What a database's derived layer holds, to compare before and after a command: each table's rows and hashes."""

from __future__ import annotations

from pathlib import Path

from clinbench.duck import duckdb


def derived_tables(db: Path) -> dict[str, tuple]:
    """Every ``mimiciv_derived`` table (qualified name) -> (row count, sum of row hashes)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables() "
                                           "WHERE schema_name = 'mimiciv_derived' ORDER BY 1").fetchall()]
        return {n: con.execute(f"SELECT count(*), sum(hash(t)) FROM {n} t").fetchone() for n in names}
    finally:
        con.close()
