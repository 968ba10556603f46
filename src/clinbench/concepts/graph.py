"""Dependencies between concepts, read from the SQL itself, and their build order.

A concept depends on every schema-qualified table its SQL reads, as DuckDB's own parser reads it
(the engine that runs the SQL: ``json_serialize_sql``): derived tables make edges to the concepts
that produce them, raw tables (mimiciv_hosp.*, mimiciv_icu.*, eicu_crd.*) are inputs that must
exist in the database.

Parsing a profile's 113 concept files takes 0.22 s CPU (sqlglot, which finds the same references in
all 343 files of the three profiles, took 0.51 s with its import), so the references found are kept in
``$CLINBENCH_CACHE/concept-references/`` (default ``~/.cache/clinbench``), keyed by the sha256 of
the SQL text, one file per DuckDB version: an edited file, or another DuckDB, is parsed afresh.
"""

from __future__ import annotations

import graphlib
import hashlib
import json
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clinbench.concepts.catalog import DERIVED_SCHEMAS, Concept
from clinbench.errors import ConceptError

_KNOWN: dict[str, tuple[str, ...]] = {}  # sha256 of a concept's SQL -> its table references
_CACHE_LIMIT = 5000  # entries kept on disk; past it only the concepts of the current map are kept


@dataclass(frozen=True)
class Dependencies:
    derived: tuple[str, ...]  # qualified derived tables this concept reads
    raw: tuple[str, ...]  # qualified raw tables this concept reads


_PARSER: list = []  # one in-memory DuckDB a process parses with, opened on the first parse
_PARSER_LOCK = threading.Lock()


@lru_cache(maxsize=512)
def table_references(sql: str, origin: str = "<sql>") -> tuple[str, ...]:
    """Schema-qualified tables read by ``sql``, as DuckDB parses it (CTE names and unqualified names are not
    tables)."""
    from clinbench.duck import duckdb

    with _PARSER_LOCK:
        if not _PARSER:
            _PARSER.append(duckdb.connect())
        text = _PARSER[0].execute("SELECT json_serialize_sql(?)", [sql.rstrip().rstrip(";")]).fetchone()[0]
    tree = json.loads(text)
    if tree.get("error"):
        first = (str(tree.get("error_message") or "").strip().splitlines() or ["a statement it cannot read"])[0]
        if first.startswith("Only SELECT statements"):
            raise ConceptError(f"{origin} is not a SELECT: a concept file is one SELECT statement")
        raise ConceptError(f"{origin}: DuckDB cannot parse the SQL ({first}): fix the syntax")
    refs: set[str] = set()
    stack: list = [tree]
    while stack:  # every node of the tree, however deep: subqueries, CTEs, joins, set operations
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE" and node.get("schema_name") and node.get("table_name"):
                refs.add(f"{node['schema_name']}.{node['table_name']}".lower())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return tuple(sorted(refs))


def _sha(sql: str) -> str:
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()


def _references(concept: Concept) -> tuple[str, ...]:
    sql = concept.sql
    key = _sha(sql)
    if key not in _KNOWN:
        _KNOWN[key] = table_references(sql, str(concept.path))
    return _KNOWN[key]


def dependencies(concept: Concept, concepts: dict[str, Concept]) -> Dependencies:
    derived: list[str] = []
    raw: list[str] = []
    for ref in _references(concept):
        schema = ref.split(".", 1)[0]
        if schema in DERIVED_SCHEMAS:
            if ref not in concepts:
                raise ConceptError(f"{concept.path} reads {ref}, which no concept file produces: add the concept or fix the name")
            if ref != concept.qualified:
                derived.append(ref)
        else:
            raw.append(ref)
    return Dependencies(tuple(derived), tuple(raw))


def _cache_path() -> Path:
    from clinbench.cache import cache_root
    from clinbench.duck import duckdb

    return cache_root() / "concept-references" / f"duckdb-{duckdb.__version__}.json"


def _load_cache(path: Path) -> dict[str, tuple[str, ...]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: tuple(v) for k, v in data.items() if isinstance(v, list) and all(isinstance(r, str) for r in v)}


def dependency_map(concepts: dict[str, Concept]) -> dict[str, Dependencies]:
    """Every concept's dependencies; SQL parsed before (same text, same DuckDB version) is not parsed again."""
    path = _cache_path()
    stored = _load_cache(path)
    for key, refs in stored.items():
        _KNOWN.setdefault(key, refs)
    result = {name: dependencies(c, concepts) for name, c in concepts.items()}
    used = {_sha(c.sql) for c in concepts.values()}
    if not used <= stored.keys():
        keep = stored if len(stored) < _CACHE_LIMIT else {}
        _save_cache(path, {**keep, **{k: _KNOWN[k] for k in used}})
    return result


def _save_cache(path: Path, entries: dict[str, tuple[str, ...]]) -> None:
    from clinbench.atomic import write_json_atomic
    from clinbench.errors import ClinbenchError

    try:
        write_json_atomic(path, {k: list(v) for k, v in sorted(entries.items())})
    except (OSError, ClinbenchError):
        pass  # an unwritable cache only means parsing again next time


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
