"""Table declarations shared by the loaders, the synthetic generators and test fixtures.

A ``Table`` is a schema-qualified name with its official columns and DuckDB types, plus
``source``: the file stem in the PhysioNet layout (``hosp/patients`` for MIMIC-IV,
``apacheApsVar`` for eICU). The column lists themselves live in ``mimic_iv_tables`` and
``eicu_tables``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinbench.duck import duckdb
from clinbench.errors import DataError

DATASETS = ("mimic-iv", "eicu")
_TYPES = {"INTEGER", "BIGINT", "SMALLINT", "DOUBLE", "VARCHAR", "TIMESTAMP", "DATE", "BOOLEAN", "TIME"}


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB type: INTEGER, BIGINT, SMALLINT, DOUBLE, VARCHAR, TIMESTAMP, DATE, BOOLEAN


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    columns: tuple[Column, ...]
    source: str = ""  # file stem in the PhysioNet layout, without extension

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def ddl(self) -> str:
        body = ",\n  ".join(f'"{c.name}" {c.type}' for c in self.columns)
        return f"CREATE TABLE {self.qualified} (\n  {body}\n)"


def cols(*pairs: tuple[str, str]) -> tuple[Column, ...]:
    return tuple(Column(name, type_) for name, type_ in pairs)


def columns(spec: str) -> tuple[Column, ...]:
    """Parse ``"name TYPE, name TYPE, ..."`` (DDL-like, so declarations read like the official scripts)."""
    out = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        name, _, type_ = item.partition(" ")
        type_ = type_.strip().upper()
        if type_ not in _TYPES or not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise ValueError(f"bad column declaration {item!r}")
        out.append(Column(name, type_))
    return tuple(out)


def dataset_tables(dataset: str) -> tuple[Table, ...]:
    """All declared tables of ``dataset`` ('mimic-iv' or 'eicu')."""
    if dataset == "mimic-iv":
        from clinbench.ehr.mimic_iv_tables import MIMIC_IV_TABLES

        return MIMIC_IV_TABLES
    if dataset == "eicu":
        from clinbench.ehr.eicu_tables import EICU_TABLES

        return EICU_TABLES
    raise DataError(f"unknown dataset {dataset!r}: use 'mimic-iv' or 'eicu'")


def find_table(dataset: str, qualified: str) -> Table:
    for table in dataset_tables(dataset):
        if table.qualified == qualified:
            return table
    raise DataError(f"{qualified} is not a declared {dataset} table")


def create_empty(con: duckdb.DuckDBPyConnection, dataset: str, only: set[str] | None = None) -> None:
    """Create the dataset's schemas and empty tables (all, or the qualified names in ``only``)."""
    for table in dataset_tables(dataset):
        if only is not None and table.qualified not in only:
            continue
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {table.schema}")
        con.execute(table.ddl())


# What a type holds, as far as SQL over it cares: a number compared with text, or text added to a number, fails
_KINDS = (("VARCHAR", "text"), ("TIMESTAMP", "time"), ("DATE", "time"), ("TIME", "time"), ("BOOLEAN", "boolean"))


def type_kind(duckdb_type: str) -> str:
    """'text', 'time', 'boolean' or 'number' (every integer, decimal and floating type) for a DuckDB type name."""
    upper = duckdb_type.upper()
    return next((kind for prefix, kind in _KINDS if upper.startswith(prefix)), "number")


def foreign_kinds(con: duckdb.DuckDBPyConnection, tables: list[str]) -> list[str]:
    """``table.column TYPE (declared: TYPE)`` for each column of the declared ``tables`` (qualified names) whose
    type in the database holds another kind of value than the dataset declares: what a loader that guesses types
    gives on a file whose rows never show the column's kind (M4's `m4 init` reads a chartevents without text
    values with a DOUBLE ``value``). Integer widths, DATE for TIMESTAMP and such are the same kind."""
    declared = {t.qualified: t for dataset in DATASETS for t in dataset_tables(dataset) if t.qualified in tables}
    if not declared:
        return []
    found = con.execute(
        "SELECT lower(schema_name || '.' || table_name), lower(column_name), data_type FROM duckdb_columns() "
        f"WHERE lower(schema_name || '.' || table_name) IN ({', '.join('?' * len(declared))})", list(declared)).fetchall()
    have = {(table, column): type_ for table, column, type_ in found}
    return [f"{name}.{c.name} {have[name, c.name]} (declared: {c.type})" for name, table in sorted(declared.items())
            for c in table.columns if (name, c.name) in have and type_kind(have[name, c.name]) != type_kind(c.type)]


def listed(items: list[str], limit: int = 6) -> str:
    """The first ``limit`` items joined, then how many more (a line a reader can take in)."""
    more = f", and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more
