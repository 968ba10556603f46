"""Dependencies between concepts, read from the SQL itself, and their build order.

A concept depends on every schema-qualified table its SQL reads (sqlglot table references):
derived tables make edges to the concepts that produce them, raw tables (mimiciv_hosp.*,
mimiciv_icu.*, eicu_crd.*) are inputs that must exist in the database.

Parsing every concept file takes about a second, so the references found are kept in
``$CLINBENCH_CACHE/concept-references/`` (default ``~/.cache/clinbench``), keyed by the sha256 of
the SQL text, one file per sqlglot version: an edited file, or another sqlglot, is parsed afresh.
"""

from __future__ import annotations

import graphlib
import hashlib
import json
import re
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


@lru_cache(maxsize=512)
def table_references(sql: str, origin: str = "<sql>") -> tuple[str, ...]:
    """Schema-qualified tables read by ``sql`` (CTE names and unqualified names are not tables)."""
    import sqlglot
    from sqlglot import exp

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

    return cache_root() / "concept-references" / f"sqlglot-{_sqlglot_version()}.json"


def _sqlglot_version() -> str:
    """The installed sqlglot's version, from the ``_version.py`` its build writes: importing sqlglot or
    ``importlib.metadata`` (17 ms a process that loads the concepts) is not needed for it; the metadata's
    answer when the file is not there or does not state it."""
    import importlib.util

    spec = importlib.util.find_spec("sqlglot")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = (Path(folder) / "_version.py").read_text(encoding="utf-8")
        except OSError:
            continue
        if found := re.search(r"^__version__ = version = '([^'\\]+)'$", text, flags=re.M):
            return found.group(1)
    from importlib import metadata

    return metadata.version("sqlglot")


def _load_cache(path: Path) -> dict[str, tuple[str, ...]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: tuple(v) for k, v in data.items() if isinstance(v, list) and all(isinstance(r, str) for r in v)}


def dependency_map(concepts: dict[str, Concept]) -> dict[str, Dependencies]:
    """Every concept's dependencies; SQL parsed before (same text, same sqlglot version) is not parsed again."""
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
