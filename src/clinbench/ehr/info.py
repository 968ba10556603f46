"""What a clinbench DuckDB database holds: schemas, tables, row counts, supported task families."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clinbench.duck import RELATIONS, duckdb
from clinbench.ehr.requirements import family_requirements, required_tables
from clinbench.ehr.schema import foreign_kinds, listed
from clinbench.errors import DataError

# The schema that marks a dataset's raw tables.
DATASET_SCHEMAS = {"mimic-iv": ("mimiciv_hosp", "mimiciv_icu"), "eicu": ("eicu_crd",)}


@dataclass
class DatabaseInfo:
    path: Path
    tables: dict[str, int] = field(default_factory=dict)  # qualified name -> rows, sorted
    datasets: list[str] = field(default_factory=list)
    supported: dict[str, list[str]] = field(default_factory=dict)  # dataset -> families it can derive
    unsupported: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # dataset -> family -> lacking
    caveats: list[str] = field(default_factory=list)  # present-but-degraded sources, one line each

    @property
    def schemas(self) -> list[str]:
        return sorted({name.split(".", 1)[0] for name in self.tables})


CHARTEVENTS = "mimiciv_icu.chartevents"


def _has_text_values(con: duckdb.DuckDBPyConnection) -> bool:
    # Stops at the first text value, so it is quick on a real chartevents of any size.
    return con.execute(f"SELECT 1 FROM {CHARTEVENTS} WHERE value IS NOT NULL "
                       "AND TRY_CAST(value AS DOUBLE) IS NULL LIMIT 1").fetchone() is not None


def database_info(db_path: str | Path) -> DatabaseInfo:
    """Inspect ``db_path`` read-only. A family is supported when all its source tables have rows."""
    path = Path(db_path)
    if not path.is_file():
        raise DataError(f"{path} does not exist: build it with `clinbench data load` or `clinbench data synth`")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or ["unknown error"])[0]
        raise DataError(f"{path} cannot be opened as a DuckDB database ({first})") from exc
    try:
        names = con.execute(
            f"SELECT schema_name, table_name FROM {RELATIONS} WHERE database_name = current_database() "
            "ORDER BY schema_name, table_name"
        ).fetchall()
        info = DatabaseInfo(path=path)
        for schema, table in names:
            info.tables[f"{schema}.{table}"] = con.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()[0]
        if info.tables.get(CHARTEVENTS, 0) and not _has_text_values(con):
            info.caveats.append(
                f"{CHARTEVENTS} holds no text values (ventilator modes, O2 devices, 'No Response-ETT'): "
                "ventilation comes out empty and the scores that use it, GCS 'unable' and CRRT modes are wrong; "
                "a chartevents rebuilt from the MEDS export of the demo is like this, the official file is not")
        # the tables the task families read (another kind in a table no concept reads changes nothing)
        needed = sorted({t for dataset in DATASET_SCHEMAS for t in required_tables(dataset)} & set(info.tables))
        if foreign := foreign_kinds(con, needed):
            info.caveats.append(
                f"columns hold another kind of value than the dataset declares: {listed(foreign)}; a concept "
                "comparing one with its declared kind fails: load the raw files (CSV, or M4's Parquet) with the "
                "declared types (`clinbench data load DATASET DIR --out DB`)")
    finally:
        con.close()

    with_rows = {name for name, rows in info.tables.items() if rows > 0}
    for dataset, marks in DATASET_SCHEMAS.items():
        if not any(name.split(".", 1)[0] in marks for name in info.tables):
            continue
        info.datasets.append(dataset)
        info.supported[dataset] = []
        info.unsupported[dataset] = {}
        for family, needs in sorted(family_requirements(dataset).items()):
            lacking = sorted(needs - with_rows)
            if lacking:
                info.unsupported[dataset][family] = lacking
            else:
                info.supported[dataset].append(family)
    return info
