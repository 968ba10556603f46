"""A campaign is bound to its data: each task reference's content and its source tables' identity,
and, per task and schema variant, what its agents see (``check_workspaces``).

The first run of a campaign stores, per reference table, one fingerprint: the table's content
hash and the fingerprint of every raw table its concept chain reads (``concepts.manifest``).
Every later ``run`` and ``rescore`` recomputes the fingerprints on the database it is given and
refuses a different or changed one, saying which reference differs and what to do; each run
records the fingerprint it was scored against (``runs.data_digest``), so a store can never pool
runs of one task scored against different data without saying so.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from clinbench.duck import RELATIONS, connect_when_free
from clinbench.records.store import Store
from clinbench.errors import ClinbenchError


class BindingError(ClinbenchError):
    """The database given is not the one the campaign's runs were scored against."""


def fingerprints(db: str | Path, tables: list[str]) -> dict[str, str]:
    """Reference table -> digest of its content and its source tables, read from ``db``."""
    from clinbench.concepts.catalog import load_concepts
    from clinbench.concepts.graph import dependency_map
    from clinbench.concepts.manifest import chain, file_cache, persist_cache, source_fingerprint, table_hash

    if not Path(db).is_file():
        raise BindingError(f"database {db} not found; pass --db the database the campaign runs on")
    concepts = load_concepts()
    deps = dependency_map(concepts)
    cache = file_cache(db)
    out: dict[str, str] = {}
    with connect_when_free(db, read_only=True) as con:
        existing = {f"{s}.{t}" for s, t in con.execute(f"SELECT schema_name, table_name FROM {RELATIONS}").fetchall()}
        for table in sorted(set(tables) & existing):  # an absent reference fails its runs, not the binding
            concept = concepts.get(table)
            raw = chain(concept, concepts, deps)[1] if concept is not None else []
            text = f"{table_hash(con, table)[1]}\n{source_fingerprint(con, raw, cache)}"
            out[table] = hashlib.sha256(text.encode()).hexdigest()[:32]
    persist_cache(db)
    return out


def bind_tasks(store: Store, tasks: list[str], db: str) -> dict[str, str]:
    """Check the campaign's data binding and extend it to new tasks; return task -> data digest."""
    from clinbench.derive.catalogue import get_task

    tables = {task: get_task(task).target_table for task in tasks}
    if not tables:
        return {}
    current = check(store, db, sorted(set(tables.values())))
    store.bind(current, str(Path(db).resolve()))
    return {task: current[table] for task, table in tables.items() if table in current}


def check_workspaces(store: Store, pairs: list[tuple[str, str]], db: str) -> dict[str, str]:
    """Per ``task@schema`` variant, the digest of what its agents would see in ``db`` (``view_digest``: tables and
    columns); raise BindingError when the store holds runs of it whose agents saw something else (``runs.workspace``),
    since a comparison would pool two setups.

    A pair whose database cannot be masked is left out (its runs fail and say why); runs recorded before
    the digest was kept are not compared."""
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.workspace import read_catalog, view_digest

    _, catalog = read_catalog(Path(db))  # once: a campaign of 28 tasks x 3 variants asked 84 times, 1 ms each
    current = {}
    for task, schema in sorted(set(pairs)):
        try:
            current[f"{task}@{schema}"] = view_digest(get_task(task), schema, catalog)
        except ClinbenchError:
            continue
    seen = {(f"{r['task']}@{r['schema']}", r["workspace"]) for r in store.runs(benchmark="derive") if r.get("workspace")}
    differing = sorted(pair for pair, digest in seen if pair in current and digest != current[pair])
    if differing:
        raise BindingError(f"campaign {store.path.parent}: an agent of {differing[0]} would see other tables or columns "
                           f"in {db} than the campaign's earlier runs of it saw (the database's tables, or clinbench's "
                           "masking rules, changed); pass --out a new folder, so that no comparison pools the two")
    return current


def bind_profile(store: Store, tasks: list[str], db: str) -> str | None:
    """The reference profile of the tasks' references in ``db`` (``check_profile``)."""
    from clinbench.derive.catalogue import get_task

    return check_profile(store, db, sorted({get_task(task).target_table for task in tasks})) if tasks else None


def check(store: Store, db: str | Path, tables: list[str], *, command: str = "run") -> dict[str, str]:
    """The fingerprints of ``tables`` in ``db``; raise BindingError when one differs from the store's binding."""
    db = str(Path(db).resolve())
    current = fingerprints(db, tables)
    bound = store.binding()
    differing = [t for t in sorted(current) if t in bound and bound[t][0] != current[t]]
    if differing:
        was = bound[differing[0]][1]
        kind = (f"the database at {db} changed since the campaign's runs were scored against it"
                if was == db else f"--db {db} is a different database from the one its runs were scored against ({was})")
        names = ", ".join(differing[:3]) + (f" and {len(differing) - 3} more" if len(differing) > 3 else "")
        out = store.path.parent
        advice = (f"pass --out a new folder for this database, or re-score the campaign against it with "
                  f"`clinbench rescore {out} --db {db} --new-data` (its runs are then marked as re-scored)")
        if command == "rescore":
            advice = "pass --new-data to re-score every run against it (the runs are marked as re-scored against it)"
        raise BindingError(f"campaign {out} is bound to other data: {kind} (reference {names} differs); {advice}")
    return current


def check_profile(store: Store, db: str | Path, tables: list[str], *, command: str = "run") -> str | None:
    """The reference profile ``db``'s references of ``tables`` were built with; raise BindingError when
    the store holds runs scored against another profile (two profiles are never pooled)."""
    from clinbench.concepts.manifest import profile_of

    current = profile_of(db, tables)
    recorded = sorted({r.get("profile") for r in store.runs(benchmark="derive")} - {None})
    other = [p for p in recorded if p != current]
    if other:
        out = store.path.parent
        advice = (f"pass --out a new folder for this profile, or re-score the campaign against it with "
                  f"`clinbench rescore {out} --db {db} --new-data`")
        if command == "rescore":
            advice = "pass --new-data to re-score every run against it"
        raise BindingError(f"campaign {out} holds runs scored against reference profile {other[0]}; the references in "
                           f"{db} are {current or 'of no recorded profile'}; {advice}")
    return current
