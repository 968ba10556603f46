"""One self-contained statement for a concept: every derived table it reads becomes a CTE.

The statement reads only raw tables (mimiciv_hosp, mimiciv_icu, eicu_crd), so it runs on a
database with no derived schema at all: the raw-mode reference and the raw-SQL skill use it.
Dependencies appear as CTEs in dependency order, named ``<schema>_<table>``; a reference that
had no alias keeps its old table name as alias, so ``bg.po2`` still resolves.

Each concept is parsed and printed once a process, and a statement is put together from those
texts: a campaign of every task inlines the same dependencies again and again (26 tasks: 13 s of
sqlglot, 2 s now). The text is sqlglot's own print of the whole tree, byte for byte (every concept
of every profile: tests/concepts/test_builder.py).
"""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp

from clinbench.concepts.catalog import DERIVED_SCHEMAS, Concept, find_concept, load_concepts
from clinbench.concepts.graph import closure, dependency_map, topological_order
from clinbench.errors import ConceptError


def cte_name(qualified: str) -> str:
    return qualified.replace(".", "_")


def _parse(concept: Concept, sql: str) -> exp.Expression:
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as exc:
        raise ConceptError(f"{concept.path}: sqlglot cannot parse the SQL ({str(exc).splitlines()[0]}): fix the syntax") from exc
    if len(statements) != 1:
        raise ConceptError(f"{concept.path} holds {len(statements)} statements: a concept file must be one SELECT")
    return statements[0]


def _point_at_ctes(tree: exp.Expression) -> exp.Expression:
    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and node.db.lower() in DERIVED_SCHEMAS and node.name:
            alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name))
            return exp.Table(this=exp.to_identifier(cte_name(f"{node.db}.{node.name}".lower())), alias=alias)
        return node

    return tree.transform(swap, copy=False)


def _with_key(tree: exp.Expression) -> str:
    return "with_" if "with_" in tree.arg_types else "with"


@functools.lru_cache(maxsize=512)
def _pieces(concept: Concept, sql: str) -> tuple[str, str, tuple[str, ...], str]:
    """(the concept as one CTE, its own CTEs, its body without them): sqlglot's text of each
    (sqlglot joins a WITH's CTEs with ", " and puts a newline before the body), so a concept
    that several statements inline is parsed and printed once a process."""
    tree = _point_at_ctes(_parse(concept, sql))
    whole = tree.sql(dialect="duckdb", pretty=True)
    as_cte = exp.CTE(this=tree.copy(), alias=exp.TableAlias(this=exp.to_identifier(cte_name(concept.qualified))))
    key = _with_key(tree)
    own = tree.args.get(key)
    own_ctes = tuple(c.sql(dialect="duckdb", pretty=True) for c in own.expressions) if own else ()
    tree.set(key, None)
    return whole, as_cte.sql(dialect="duckdb", pretty=True), own_ctes, tree.sql(dialect="duckdb", pretty=True)


def inline_sql(name: str, concepts: dict[str, Concept] | None = None) -> str:
    """``name``'s SQL with all derived dependencies inlined as CTEs (DuckDB dialect)."""
    concepts = concepts if concepts is not None else load_concepts()
    target = find_concept(name, concepts)
    deps = dependency_map(concepts)
    order = topological_order(closure([target.qualified], deps), deps)
    order.remove(target.qualified)
    whole, _, own, body = _pieces(target, target.sql)
    if order:
        ctes = [_pieces(concepts[q], concepts[q].sql)[1] for q in order] + list(own)
        text = f"WITH {', '.join(ctes)}\n{body}"
    else:
        text = whole
    inlined = ", ".join(cte_name(q) for q in order) if order else "none"
    return f"-- {target.name} as one statement ({target.path.name}); dependencies inlined as CTEs: {inlined}\n{text}\n"
