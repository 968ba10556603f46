"""Which tasks a database can score: none whose reference has no rows or whose sources are empty.

An empty reference scores every answer 0, the reference agent's included, so a run of such a
task measures the database, not the agent; an empty source table a task family needs
(``ehr.requirements``) makes its reference silently look normal or empty. Such a task is
refused by ``run``, skipped in a matrix with its reason, marked by ``tasks list --db`` and
never averaged into a statistic. The MIMIC-IV demo's rebuilt ``chartevents`` holds no text
values, so both ventilation tasks are unscorable there.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from clinbench.derive.catalogue import get_task
from clinbench.duck import RELATIONS, connect_when_free
from clinbench.ehr.requirements import family_requirements


def unscorable_tasks(db_path: str | Path, task_ids: Iterable[str]) -> dict[str, str]:
    """Task id -> why ``db_path`` cannot score it (a short clause), for the tasks it cannot score.

    A task whose reference table is absent is not listed: building the concepts is the fix for
    that, and ``run`` says so on its own.
    """
    specs = [get_task(t) for t in task_ids]
    with connect_when_free(db_path, read_only=True) as con:
        present = {f"{s}.{t}" for s, t in con.execute(
            f"SELECT schema_name, table_name FROM {RELATIONS} WHERE database_name = current_database()").fetchall()}

        def rows(table: str) -> int:
            schema, name = table.split(".", 1)
            return con.execute(f'SELECT count(*) FROM "{schema}"."{name}"').fetchone()[0]

        counts: dict[str, int] = {}

        def count(table: str) -> int:
            if table not in counts:
                counts[table] = rows(table) if table in present else 0
            return counts[table]

        reasons: dict[str, str] = {}
        for spec in specs:
            if spec.target_table not in present:
                continue
            needs = sorted(family_requirements(spec.database).get(spec.family, ()))
            empty = [t for t in needs if count(t) == 0]
            if empty:
                reasons[spec.id] = f"source table{'s' if len(empty) > 1 else ''} {', '.join(empty)} empty"
            elif count(spec.target_table) == 0:
                reasons[spec.id] = f"reference {spec.target_table} has no rows"
    return reasons


def describe(reasons: dict[str, str]) -> str:
    """``reasons`` in one line, the tasks that share a reason together: 'a, b: reason; c: reason'."""
    grouped: dict[str, list[str]] = {}
    for task, why in reasons.items():
        grouped.setdefault(why, []).append(task)
    return "; ".join(f"{', '.join(tasks)}: {why}" for why, tasks in grouped.items())
