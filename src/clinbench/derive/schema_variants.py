"""Schema variants: the same data under different table layouts.

A variant says, for each source relation, which physical tables of the workspace hold it
(``outputs``: name + SELECT over the source) and how to get the original relation back from
those tables (``reconstruct``: a SELECT over the workspace names that returns the original
columns under their original names). The reconstruction is the variant's mapping: it is
kept outside the workspace, used to rewrite reference SQL (``rewrite_sql``) and tested to
return the native rows for every task. Output columns of a task never change, so the
scorer is the same for every variant.

- ``native``: unchanged.
- ``obfuscated``: every schema, table and column gets an opaque name derived from a
  secret salt; the same original column name maps to the same opaque name everywhere, so
  joins stay discoverable from the data while names carry no meaning.
- ``restructured``: ``chartevents`` split by value type (numeric rows / text rows),
  ``labevents`` merged with its dictionary ``d_labitems`` into ``lab_results``, and eICU
  ``nursecharting`` split into score rows and other rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from clinbench.errors import TaskError

VARIANTS = ("native", "obfuscated", "restructured")


@dataclass(frozen=True)
class Relation:
    schema: str
    name: str
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True)
class Output:
    schema: str
    name: str
    select: str  # SELECT over ``src.<schema>.<name>`` (the attached source database)


@dataclass
class VariantPlan:
    variant: str
    outputs: list[Output] = field(default_factory=list)
    reconstruct: dict[str, str] = field(default_factory=dict)  # original qualified name -> SELECT
    notes: list[str] = field(default_factory=list)  # what an agent is told about the layout

    def to_json(self) -> dict:
        return {"variant": self.variant, "reconstruct": self.reconstruct, "notes": self.notes}


def plan_variant(variant: str, relations: list[Relation], salt: str = "") -> VariantPlan:
    """The variant's physical tables and mapping for ``relations`` (the tables a workspace keeps)."""
    if variant not in VARIANTS:
        raise TaskError(f"unknown schema variant {variant!r}; use one of {', '.join(VARIANTS)}")
    plan = VariantPlan(variant)
    if variant == "native":
        for rel in relations:
            plan.outputs.append(Output(rel.schema, rel.name, f"SELECT * FROM src.{_qq(rel.schema, rel.name)}"))
            plan.reconstruct[rel.qualified] = f"SELECT * FROM {_qq(rel.schema, rel.name)}"
        return plan
    if variant == "obfuscated":
        _plan_obfuscated(plan, relations, salt)
    else:
        _plan_restructured(plan, relations)
    return plan


def opaque(kind: str, name: str, salt: str) -> str:
    """A stable opaque identifier for ``name``; without the salt it cannot be guessed back."""
    digest = hashlib.sha256(f"{salt}\0{kind}\0{name}".encode()).hexdigest()[:10]
    return f"{kind[0]}_{digest}"


def _plan_obfuscated(plan: VariantPlan, relations: list[Relation], salt: str) -> None:
    for rel in relations:
        schema, table = opaque("schema", rel.schema, salt), opaque("table", rel.qualified, salt)
        cols = [(c, opaque("column", c, salt)) for c, _ in rel.columns]
        plan.outputs.append(Output(
            schema, table,
            "SELECT " + ", ".join(f"{_q(c)} AS {_q(o)}" for c, o in cols) + f" FROM src.{_qq(rel.schema, rel.name)}",
        ))
        plan.reconstruct[rel.qualified] = (
            "SELECT " + ", ".join(f"{_q(o)} AS {_q(c)}" for c, o in cols) + f" FROM {_qq(schema, table)}"
        )
    plan.notes.append(
        "Schema, table and column names in this database are opaque codes; the values are unchanged. "
        "Table and column names mentioned in the task text or skills refer to the original layout: "
        "explore the catalogue and the data to find where they are. Write the output columns exactly as named."
    )


def _plan_restructured(plan: VariantPlan, relations: list[Relation]) -> None:
    by_name = {rel.qualified: rel for rel in relations}
    for rel in relations:
        src = f"src.{_qq(rel.schema, rel.name)}"
        names = [c for c, _ in rel.columns]
        if rel.qualified == "mimiciv_icu.chartevents" and "valuenum" in names:
            rest = [c for c in names if c != "valuenum"]
            plan.outputs.append(Output(rel.schema, "chartevents_numeric", f"SELECT * FROM {src} WHERE valuenum IS NOT NULL"))
            plan.outputs.append(Output(rel.schema, "chartevents_text",
                                       f"SELECT {_cols(rest)} FROM {src} WHERE valuenum IS NULL"))
            text_cols = ", ".join("CAST(NULL AS DOUBLE) AS valuenum" if c == "valuenum" else _q(c) for c in names)
            plan.reconstruct[rel.qualified] = (
                f"SELECT {_cols(names)} FROM {_qq(rel.schema, 'chartevents_numeric')} "
                f"UNION ALL SELECT {text_cols} FROM {_qq(rel.schema, 'chartevents_text')}"
            )
        elif rel.qualified == "mimiciv_hosp.labevents" and "mimiciv_hosp.d_labitems" in by_name:
            extra = [c for c, _ in by_name["mimiciv_hosp.d_labitems"].columns if c != "itemid"]
            plan.outputs.append(Output(
                rel.schema, "lab_results",
                f"SELECT l.*, " + ", ".join(f"d.{_q(c)} AS {_q('item_' + c)}" for c in extra)
                + f" FROM {src} l LEFT JOIN src.mimiciv_hosp.d_labitems d USING (itemid)",
            ))
            plan.reconstruct[rel.qualified] = f"SELECT {_cols(names)} FROM {_qq(rel.schema, 'lab_results')}"
        elif rel.qualified == "eicu_crd.nursecharting" and "nursingchartcelltypecat" in names:
            cond = "nursingchartcelltypecat IS NOT DISTINCT FROM 'Scores'"
            plan.outputs.append(Output(rel.schema, "nursecharting_scores", f"SELECT * FROM {src} WHERE {cond}"))
            plan.outputs.append(Output(rel.schema, "nursecharting_other", f"SELECT * FROM {src} WHERE NOT ({cond})"))
            plan.reconstruct[rel.qualified] = (
                f"SELECT {_cols(names)} FROM {_qq(rel.schema, 'nursecharting_scores')} "
                f"UNION ALL SELECT {_cols(names)} FROM {_qq(rel.schema, 'nursecharting_other')}"
            )
        else:
            plan.outputs.append(Output(rel.schema, rel.name, f"SELECT * FROM {src}"))
            plan.reconstruct[rel.qualified] = f"SELECT * FROM {_qq(rel.schema, rel.name)}"
    changed = {o.name for o in plan.outputs} - {r.name for r in relations}
    if {"chartevents_numeric", "chartevents_text"} <= changed:
        plan.notes.append("Charted ICU events are split by value type: `mimiciv_icu.chartevents_numeric` holds rows "
                          "with a numeric value, `mimiciv_icu.chartevents_text` rows with text only (no `valuenum`).")
    if "lab_results" in changed:
        plan.notes.append("Laboratory results live in `mimiciv_hosp.lab_results`, already joined to the lab item "
                          "dictionary (`item_label`, `item_fluid`, `item_category`).")
    if "nursecharting_scores" in changed:
        plan.notes.append("Nurse charting is split into `eicu_crd.nursecharting_scores` (cell type category "
                          "'Scores') and `eicu_crd.nursecharting_other` (everything else).")


def rewrite_sql(sql: str, plan: VariantPlan) -> str:
    """Rewrite SQL written against native names to run on the variant's tables.

    Each schema-qualified reference to a mapped relation becomes the relation's
    reconstruction as a subquery under the same alias; everything else is untouched.
    """
    import sqlglot  # only variants rewrite SQL; a native workspace never loads the parser
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise TaskError(f"cannot parse SQL for rewriting: {str(exc).splitlines()[0]}") from exc
    for table in list(tree.find_all(exp.Table)):
        key = f"{table.db}.{table.name}".lower() if table.db else None
        if not key or key not in plan.reconstruct:
            continue
        alias = table.alias or table.name
        sub = exp.Subquery(this=sqlglot.parse_one(plan.reconstruct[key], read="duckdb"),
                           alias=exp.TableAlias(this=exp.to_identifier(alias)))
        table.replace(sub)
    return tree.sql(dialect="duckdb")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qq(schema: str, name: str) -> str:
    return f"{_q(schema)}.{_q(name)}"


def _cols(names: list[str]) -> str:
    return ", ".join(_q(c) for c in names)
