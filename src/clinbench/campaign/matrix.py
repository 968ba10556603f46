"""The run matrix: tasks × conditions × schema variants × agents × models × trials.

A run's id is built from its coordinates only, so the same command always names the same
runs: that is what lets a rerun skip the runs already recorded.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from clinbench.errors import ClinbenchError

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
    import duckdb

    if not Path(db).is_file():
        raise MatrixError(f"database {db} not found; build one with `clinbench data synth` or `clinbench data load`")
    con = duckdb.connect(str(db), read_only=True)
    try:
        schemas = {r[0] for r in con.execute("SELECT DISTINCT schema_name FROM duckdb_tables()").fetchall()}
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
