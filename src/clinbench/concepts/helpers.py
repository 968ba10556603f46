"""Helper concepts are not tables: a statement that reads one gets it as a CTE.

A helper (``Concept.helper``: clinbench's own intermediate, which no anchor builds) is SQL shared
by several concepts: sofa_hourly_worst and sofa_points feed sofa, first_day_sofa and a Sepsis-3
variant; antibiotic_culture_pairs feeds the suspicion-of-infection reference and its variants.
Written as a table, a helper was compressed, written and read back by each reader (the two SOFA
helpers, 440,000 rows: about 0.11 s CPU of a 2.6 s concept layer at 2,000 patients), and, holding
most of an answer, had to be hidden from every workspace. Instead a concept, reference or variant
that reads helpers runs as one statement::

    WITH "sofa_hourly_worst" AS (<its file>), "sofa_points" AS (<its file>)
    SELECT * FROM (<the concept's file>)

each ``schema.helper`` reference pointing at the CTE, which is named as the table (a column
qualified by the table name still resolves; quoted, as any table name may be a keyword). DuckDB
computes a CTE read twice once.

The build's graph reads through helpers (``inputs``): a concept depends on the concepts and raw
tables its helpers read. The reference manifest keeps hashing every file of a reference's chain,
helpers included (``manifest.chain``), so an edited helper still makes its readers stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clinbench.concepts.catalog import MIMIC_DERIVED, Concept, rewrite_schema
from clinbench.concepts.graph import Dependencies, closure, topological_order
from clinbench.errors import ConceptError


# a CTE named ``table``: quoted or not, with or without a column list (``name(a, b) AS (``)
_CTE_NAME = r'"?{table}"?\s*(?:\([^()]*\)\s*)?AS\s*(?:NOT\s+)?(?:MATERIALIZED\s*)?\('


def inputs(deps: dict[str, Dependencies], concepts: dict[str, Concept]) -> dict[str, Dependencies]:
    """``deps`` read through helpers: what each concept's statement reads once its helpers are CTEs."""
    helper_deps = {q: _helper_edges(deps[q], concepts) for q in deps}
    result = {}
    for name in deps:
        reached = closure([name], helper_deps)
        derived = {d for q in reached for d in deps[q].derived if not concepts[d].helper}
        raw = {t for q in reached for t in deps[q].raw}
        result[name] = Dependencies(tuple(sorted(derived)), tuple(sorted(raw)))
    return result


def _helper_edges(dep: Dependencies, concepts: dict[str, Concept]) -> Dependencies:
    """The helpers among what a concept reads (closure follows ``derived``)."""
    return Dependencies(tuple(d for d in dep.derived if concepts[d].helper), dep.raw)


def _reached_helpers(qualified: str, deps: dict[str, Dependencies], concepts: dict[str, Concept]) -> dict[str, Dependencies]:
    """``_helper_edges`` of ``qualified`` and of each helper it reaches, and of no other concept (a build asks
    for 60-odd statements: the edges of all 115 concepts for each cost 0.06 s)."""
    edges: dict[str, Dependencies] = {}
    todo = [qualified]
    while todo:
        name = todo.pop()
        if name not in edges:
            edges[name] = _helper_edges(deps[name], concepts)
            todo.extend(edges[name].derived)
    return edges


@dataclass(frozen=True)
class Statement:
    """A concept's SQL as the build runs it, and which file each of its lines came from."""

    sql: str  # may end in ";" and blank lines, as a file does: ``body`` is what follows ``CREATE TABLE x AS``
    pieces: tuple[tuple[int, int, Path], ...]  # (first statement line, lines, file), a file's line 1 first

    @property
    def body(self) -> str:
        return self.sql.rstrip().rstrip(";").rstrip()

    def locate(self, line: int) -> tuple[Path, int] | None:
        """The file and file line of the statement's ``line`` (DuckDB's "LINE n"); None on a joining line."""
        for first, count, path in self.pieces:
            if first <= line < first + count:
                return path, line - first + 1
        return None


def statement(qualified: str, concepts: dict[str, Concept], deps: dict[str, Dependencies], schema: str) -> Statement:
    """The SQL the build runs for ``qualified``: its file, with the helpers it reads (transitively) as CTEs.

    ``deps``: the concepts' own dependencies (``graph.dependency_map``); ``schema`` the derived schema's
    name (``catalog.rewrite_schema``). A concept that reads no helper is its file as it is."""
    helper_deps = _reached_helpers(qualified, deps, concepts)
    read = set(helper_deps) - {qualified}
    if not read:  # the file's own text, byte for byte: the build's SQL hash of it stays what it was
        text = rewrite_schema(concepts[qualified].sql, schema)
        return Statement(text, ((1, text.count("\n") + 1, concepts[qualified].path),))
    chunks: list[tuple[str, Path | None]] = []  # statement text, and the file it is (None: joining text)
    for index, helper in enumerate(topological_order(read, helper_deps)):
        chunks.append((f"{'WITH' if index == 0 else '),'} \"{concepts[helper].table}\" AS (", None))
        chunks.append((_text(helper, concepts, helper_deps, schema), concepts[helper].path))
    chunks.append((")\nSELECT * FROM (", None))
    chunks.append((_text(qualified, concepts, helper_deps, schema), concepts[qualified].path))
    chunks.append((")", None))
    pieces, line = [], 1
    for text, path in chunks:
        count = text.count("\n") + 1
        if path is not None:
            pieces.append((line, count, path))
        line += count
    return Statement("\n".join(text for text, _ in chunks), tuple(pieces))


def _text(qualified: str, concepts: dict[str, Concept], helper_deps: dict[str, Dependencies], schema: str) -> str:
    """A concept's file, schema renamed, trailing ``;`` dropped, each helper it reads pointing at its CTE."""
    concept = concepts[qualified]
    # the header comment stays: DuckDB's "LINE n" is a line of a file (``Statement.locate``)
    text = rewrite_schema(concept.sql, schema).rstrip().rstrip(";").rstrip()
    for helper in helper_deps[qualified].derived:
        table = concepts[helper].table
        # a CTE of the helper's name would take the helper's place
        if re.search(rf'(?i)(?<![\w."]){_CTE_NAME.format(table=re.escape(table))}', text):
            raise ConceptError(f"{concept.path} names a CTE {table}, as the helper it reads: rename the CTE")
        out_schema = schema if concepts[helper].schema == MIMIC_DERIVED else concepts[helper].schema
        text, found = re.subn(rf"(?i)\b{out_schema}\.{table}\b", f'"{table}"', text)
        if not found:
            raise ConceptError(f"{concept.path} reads the helper {concepts[helper].qualified} in a form the build cannot "
                               f"point at its CTE (quoted?): write it as {concepts[helper].qualified}")
    return text
