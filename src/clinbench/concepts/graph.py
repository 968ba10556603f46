"""Dependencies between concepts, read from the SQL itself, and their build order.

A concept depends on every schema-qualified table its SQL reads (sqlglot table references):
derived tables make edges to the concepts that produce them, raw tables (mimiciv_hosp.*,
mimiciv_icu.*, eicu_crd.*) are inputs that must exist in the database.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp

from clinbench.concepts.catalog import DERIVED_SCHEMAS, Concept
from clinbench.errors import ConceptError


@dataclass(frozen=True)
class Dependencies:
    derived: tuple[str, ...]  # qualified derived tables this concept reads
    raw: tuple[str, ...]  # qualified raw tables this concept reads


@lru_cache(maxsize=512)
def table_references(sql: str, origin: str = "<sql>") -> tuple[str, ...]:
    """Schema-qualified tables read by ``sql`` (CTE names and unqualified names are not tables)."""
    try:
        statements = sqlglot.parse(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise ConceptError(f"{origin}: sqlglot cannot parse the SQL ({str(exc).splitlines()[0]}): fix the syntax") from exc
    refs: set[str] = set()
    for statement in statements:
        if statement is None:
            continue
        for table in statement.find_all(exp.Table):
            if table.db and table.name:
                refs.add(f"{table.db}.{table.name}".lower())
    return tuple(sorted(refs))


def dependencies(concept: Concept, concepts: dict[str, Concept]) -> Dependencies:
    derived: list[str] = []
    raw: list[str] = []
    for ref in table_references(concept.sql, str(concept.path)):
        schema = ref.split(".", 1)[0]
        if schema in DERIVED_SCHEMAS:
            if ref not in concepts:
                raise ConceptError(f"{concept.path} reads {ref}, which no concept file produces: add the concept or fix the name")
            if ref != concept.qualified:
                derived.append(ref)
        else:
            raw.append(ref)
    return Dependencies(tuple(derived), tuple(raw))


def dependency_map(concepts: dict[str, Concept]) -> dict[str, Dependencies]:
    return {name: dependencies(c, concepts) for name, c in concepts.items()}


def closure(names: list[str], deps: dict[str, Dependencies]) -> set[str]:
    """The named concepts and everything they need, transitively."""
    needed: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        stack.extend(deps[name].derived)
    return needed


def topological_order(names: set[str], deps: dict[str, Dependencies]) -> list[str]:
    """``names`` ordered so that every concept comes after what it reads; ties break by name."""
    sorter: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for name in sorted(names):
        sorter.add(name, *sorted(d for d in deps[name].derived if d in names))
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise ConceptError(f"concepts depend on each other in a cycle ({cycle}): break the cycle") from exc
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order.extend(ready)
        sorter.done(*ready)
    return order
