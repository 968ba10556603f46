"""The run matrix: tasks × conditions × schema variants × agents × models × trials, and its checks.

A run's id is built from its coordinates only, so the same command always names the same
runs: that is what lets a rerun skip the runs already recorded.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from clinbench.errors import ClinbenchError, TaskError

_DATASET_SCHEMAS = {"mimic-iv": {"mimiciv_hosp", "mimiciv_icu"}, "eicu": {"eicu_crd"}}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class MatrixError(ClinbenchError):
    """The requested run matrix is empty or malformed."""


@dataclass(frozen=True, order=True)
class RunSpec:
    task: str
    condition: str
    schema: str
    agent: str
    model: str
    trial: int

    @property
    def run_id(self) -> str:
        parts = [self.task, self.condition, self.schema, self.agent, self.model or "-", f"t{self.trial}"]
        slug = ".".join(_UNSAFE.sub("_", p) for p in parts)
        if slug != ".".join(parts):  # two raw names could slug alike: keep them apart
            slug += "." + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:6]
        return slug

    def to_dict(self) -> dict:
        return {**asdict(self), "run_id": self.run_id}


def split_list(value: str | list[str] | None) -> list[str]:
    """'a,b' or ['a', 'b,c'] -> ['a', 'b', 'c'] (order kept, duplicates dropped)."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        for part in item.split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    return out


def datasets_in(db: str | Path) -> set[str]:
    """The datasets ('mimic-iv', 'eicu') whose source schemas the database holds."""
    from clinbench.duck import RELATIONS, connect_when_free

    if not Path(db).is_file():
        raise MatrixError(f"database {db} not found; build one with `clinbench data synth` or `clinbench data load`")
    con = connect_when_free(db, read_only=True)
    try:
        schemas = {r[0] for r in con.execute(f"SELECT DISTINCT schema_name FROM {RELATIONS}").fetchall()}
    finally:
        con.close()
    return {name for name, needed in _DATASET_SCHEMAS.items() if needed <= schemas}


def expand(tasks: list[str], conditions: list[str], schemas: list[str], agents: list[str],
           models: list[str], trials: int) -> list[RunSpec]:
    if trials < 1:
        raise MatrixError("--trials must be at least 1")
    for name, values in (("--task", tasks), ("--condition", conditions), ("--schema-variant", schemas), ("--agent", agents)):
        if not values:
            raise MatrixError(f"{name} is empty: give at least one value")
    from clinbench.agents.factory import BUILTIN_AGENTS

    models = models or ["-"]
    specs = []
    for t, c, s, a, k in itertools.product(tasks, conditions, schemas, agents, range(trials)):
        # built-ins use no model: one run each, not one per --model
        for m in (["-"] if a in BUILTIN_AGENTS else models):
            specs.append(RunSpec(t, c, s, a, m, k))
    return specs


# Checks of a requested matrix, before anything is recorded (the imports inside them keep `clinbench run
# --help` from loading the catalogue's heavier modules).

def resolve_tasks(names: list[str], db: Path) -> list[str]:
    """Task ids; 'all' means every task whose dataset the database holds. Fails early on a mismatch."""
    from clinbench.derive.catalogue import get_task, load_catalogue

    present = datasets_in(db)
    if names == ["all"]:
        return [t for t, spec in load_catalogue().items() if spec.database in present]
    specs = [get_task(n) for n in names]
    wrong = [s.id for s in specs if s.database not in present]
    if wrong:
        raise TaskError(f"{db} holds no data for {', '.join(wrong)} ({', '.join(sorted(present)) or 'no dataset'} found); "
                        "drop these tasks or pass the matching --db")
    return [s.id for s in specs]


def resolve_conditions(names: list[str]) -> list[str]:
    """Condition names; 'all' means every condition (every mechanism control on every task)."""
    from clinbench.derive.catalogue import CONDITIONS

    return list(CONDITIONS) if names == ["all"] else names


def supported_pairs(task_ids: list[str], conditions: list[str]) -> tuple[set[tuple[str, str]], list[str]]:
    """The task × condition pairs that can run, and a description of each that cannot.

    A condition a task does not offer (``operational-spec`` on a task without one) would be
    recorded as a failed run with reward 0 and pull its agent's mean down.
    """
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.conditions import check_condition

    ok: set[tuple[str, str]] = set()
    unsupported: list[str] = []
    for task in task_ids:
        for condition in conditions:
            try:
                check_condition(get_task(task), condition)
            except TaskError:
                unsupported.append(f"{task} × {condition}")
            else:
                ok.add((task, condition))
    return ok, unsupported


def scorable_tasks(task_ids: list[str], db: Path) -> tuple[list[str], dict[str, str]]:
    """The tasks ``db`` can score, and why each other one cannot; none at all is an error.

    A task whose reference is empty would score 0 for every agent, the reference agent's
    included, and pull a mean down as if the agents had failed it.
    """
    from clinbench.derive.scorable import describe, unscorable_tasks

    unscorable = unscorable_tasks(db, task_ids)
    kept = [t for t in task_ids if t not in unscorable]
    if not kept:
        raise TaskError(f"{db} cannot score {describe(unscorable)}: every answer would score 0, so nothing was run "
                        f"(`clinbench data info {db}` says why; pick another task or database)")
    return kept, unscorable


def check_names(conditions: list[str], schemas: list[str]) -> None:
    """Fail on a condition or schema variant typo (before anything is built or run)."""
    from clinbench.derive.catalogue import CONDITIONS
    from clinbench.derive.schema_variants import plan_variant

    for condition in conditions:
        if condition not in CONDITIONS:
            raise TaskError(f"unknown condition {condition!r}; use one of {', '.join(CONDITIONS)}")
    for schema in schemas:
        plan_variant(schema, [])


def check_matrix(task_ids: list[str], conditions: list[str], schemas: list[str], db: Path) -> None:
    """Fail before any run is recorded on a condition or schema typo, or references not built in ``db``.

    Runs that fail on these are recorded as errors, and a rerun skips recorded runs, so the
    mistake would outlive its fix.
    """
    check_names(conditions, schemas)
    require_references(task_ids, db)


def require_references(task_ids: list[str], db: Path | str) -> None:
    """Fail, saying how to build them, when ``db`` lacks the reference of a task of ``task_ids``."""
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import missing_reference
    from clinbench.duck import RELATIONS, connect_when_free

    specs = [get_task(t) for t in task_ids]
    with connect_when_free(db, read_only=True) as con:
        tables = con.execute(f"SELECT schema_name, table_name FROM {RELATIONS}").fetchall()
    built = {f"{s}.{t}" for s, t in tables}
    missing = [s for s in specs if s.target_table not in built]
    if len(missing) == 1:
        raise TaskError(missing_reference(missing[0], Path(db), {s for s, _ in tables}))
    if missing:
        raise TaskError(f"reference tables {', '.join(s.target_table for s in missing)} not in {db}; "
                        f"run `clinbench concepts build {db} --only {','.join(s.id for s in missing)}`")
