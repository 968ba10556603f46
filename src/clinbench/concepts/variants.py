"""Reference-validity variants: documented alternatives to a task's default target.

A variant file ``variants/<reference>__<label>.sql`` builds ``variant_<...>`` beside the
default ``target_<reference>``; both have the task's columns and grain. ``variant_diff``
shows what the alternative convention changes on a database: keys only one side has, and
keys whose values differ, column by column.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from clinbench.concepts.catalog import Concept, find_concept, load_concepts
from clinbench.duck import connect_when_free, duckdb
from clinbench.errors import ConceptError

SEPARATOR = "__"


@dataclass(frozen=True)
class Variant:
    name: str  # file stem, e.g. 'sofa-24h__missing_as_null'
    reference: str  # the target it is an alternative to, e.g. 'sofa-24h'
    label: str  # 'missing_as_null'
    table: str  # qualified variant table
    target_table: str  # qualified default target table
    definition: str
    reason: str  # the header's Source/Deviations text, where the clinical reason is written


@dataclass
class VariantDiff:
    variant: Variant
    keys: list[str]
    default_rows: int
    variant_rows: int
    only_default: int  # keys in the default target, absent from the variant
    only_variant: int
    changed: int  # keys in both whose values differ in at least one column
    changed_by_column: dict[str, int]
    examples: list[dict] = field(default_factory=list)  # moved rows: key, column, default, variant
    unit: str = ""  # what moved_units counts: 'stay_id', else 'hadm_id', else the first key column
    moved_units: int = 0  # distinct stays (or admissions, ...) with a row only one side has or that differs

    @property
    def differs(self) -> bool:
        return bool(self.only_default or self.only_variant or self.changed)


def _variant(concept: Concept, concepts: dict[str, Concept]) -> Variant:
    if SEPARATOR not in concept.name:
        raise ConceptError(f"variant file {concept.path.name} must be named <reference>{SEPARATOR}<label>.sql")
    reference, label = concept.name.split(SEPARATOR, 1)
    target = next((c for c in concepts.values() if c.kind == "target" and c.name == reference), None)
    if target is None:
        raise ConceptError(f"variant {concept.name} names no existing target {reference!r}: rename the file after a targets/*.sql stem")
    return Variant(
        name=concept.name, reference=reference, label=label, table=concept.qualified,
        target_table=target.qualified, definition=concept.header.get("definition", ""),
        reason=" ".join(v for k, v in concept.header.items() if k in ("source", "deviations")),
    )


def list_variants() -> list[Variant]:
    """Every variant, sorted by name."""
    concepts = load_concepts()
    return sorted((_variant(c, concepts) for c in concepts.values() if c.kind == "variant"), key=lambda v: v.name)


def _columns(con: duckdb.DuckDBPyConnection, qualified: str) -> list[str]:
    schema, table = qualified.split(".")
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
        [schema, table],
    ).fetchall()]


def find_variant(name: str) -> Variant:
    """The variant called ``name`` (file stem or table); anything else is a one-line error."""
    concepts = load_concepts()
    concept = find_concept(name, concepts)
    if concept.kind != "variant":
        raise ConceptError(f"{name!r} is not a variant: run `clinbench concepts variants DB` to list them")
    return _variant(concept, concepts)


def variant_diff(db_path: str | os.PathLike[str], name: str, *, examples: int = 10) -> VariantDiff:
    """Rows and values of variant ``name`` that differ from its default target in ``db_path``."""
    concepts = load_concepts()
    variant = find_variant(name)
    if not os.path.exists(db_path):
        raise ConceptError(f"database {db_path} does not exist: build it with `clinbench data synth` or `clinbench data load`")
    con = connect_when_free(db_path, read_only=True)
    try:
        missing = [t for t in (variant.table, variant.target_table) if not _columns(con, t)]
        if missing:
            raise ConceptError(f"{', '.join(missing)} not built in {db_path}: run `clinbench concepts build {db_path} --only {variant.name}`")
        columns = _columns(con, variant.target_table)
        target = find_concept(variant.target_table, concepts)
        keys = target.grain_columns(columns)
        if not keys:
            raise ConceptError(f"target {variant.reference} declares no grain columns: fix its '-- Grain:' header")
        values = [c for c in columns if c not in keys]
        on = " AND ".join(f'd."{k}" = v."{k}"' for k in keys)
        joined = f"FROM {variant.target_table} AS d FULL OUTER JOIN {variant.table} AS v ON {on}"
        in_d = " AND ".join(f'd."{k}" IS NOT NULL' for k in keys)
        in_v = " AND ".join(f'v."{k}" IS NOT NULL' for k in keys)
        differs = " OR ".join(f'd."{c}" IS DISTINCT FROM v."{c}"' for c in values) or "FALSE"
        per_column = ", ".join(f'count(*) FILTER (WHERE ({in_d}) AND ({in_v}) AND d."{c}" IS DISTINCT FROM v."{c}")' for c in values)
        counts = con.execute(
            f"SELECT count(*) FILTER (WHERE {in_d}), count(*) FILTER (WHERE {in_v}), "
            f"count(*) FILTER (WHERE ({in_d}) AND NOT ({in_v})), count(*) FILTER (WHERE ({in_v}) AND NOT ({in_d})), "
            f"count(*) FILTER (WHERE ({in_d}) AND ({in_v}) AND ({differs})){', ' + per_column if per_column else ''} {joined}"
        ).fetchone()
        key_sel = ", ".join(f'COALESCE(d."{k}", v."{k}") AS "{k}"' for k in keys)
        unpivot = " UNION ALL ".join(
            f"SELECT {key_sel}, '{c}' AS column_name, CAST(d.\"{c}\" AS VARCHAR) AS default_value, "
            f"CAST(v.\"{c}\" AS VARCHAR) AS variant_value {joined} "
            f"WHERE NOT ({in_d}) OR NOT ({in_v}) OR d.\"{c}\" IS DISTINCT FROM v.\"{c}\""
            for c in values
        )
        order = ", ".join(f'"{k}"' for k in keys)
        cur = con.execute(f"SELECT * FROM ({unpivot}) ORDER BY {order}, column_name LIMIT {int(examples)}")
        names = [d[0] for d in cur.description]
        sample = [dict(zip(names, row)) for row in cur.fetchall()]
        unit = next((u for u in ("stay_id", "hadm_id") if u in columns), keys[0])
        moved_sel = f'COALESCE(d."{unit}", v."{unit}")'
        moved_units = con.execute(
            f"SELECT count(DISTINCT {moved_sel}) {joined} WHERE NOT ({in_d}) OR NOT ({in_v}) OR ({differs})"
        ).fetchone()[0]
        # row counts of the tables themselves (a default whose key repeats would inflate the join's)
        default_rows, variant_rows = (con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in (variant.target_table, variant.table))
    finally:
        con.close()
    return VariantDiff(
        variant=variant, keys=keys, default_rows=default_rows, variant_rows=variant_rows, only_default=counts[2],
        only_variant=counts[3], changed=counts[4], changed_by_column=dict(zip(values, counts[5:])), examples=sample,
        unit=unit, moved_units=moved_units,
    )
