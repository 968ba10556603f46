"""The task catalogue: one ``tasks/<family>/<task-id>/task.toml`` per task, validated here.

The thresholds, tolerances, keys and scored columns are the public M4Bench v1 catalogue, so
results compare task by task. Everything else that reads a task goes through ``TaskSpec``.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clinbench.errors import TaskError

TASKS_DIR = Path(__file__).parent / "tasks"
SKILLS_DIR = Path(__file__).parent / "skills"

CONDITIONS = (
    "no-skill", "with-skill", "with-skill-all", "with-skill-decoy", "with-skill-rawsql", "operational-spec",
)


class TaskSpec(BaseModel):
    """One derivation task as declared in its ``task.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    family: str
    database: Literal["mimic-iv", "eicu"]
    mode: Literal["standard", "raw"]
    reference: str = Field(description="target name; built as <schema>.target_<name with - as _>")
    keys: list[str] = Field(min_length=1)
    scored_columns: list[str] = Field(min_length=1)
    required_columns: list[str] = Field(min_length=1)
    tolerances: dict[str, float] = Field(default_factory=dict)
    timestamp_tolerance_seconds: float = Field(default=0.0, ge=0)
    coverage_threshold: float = Field(ge=0, le=1)
    accuracy_threshold: float = Field(ge=0, le=1)
    skills: list[str] = Field(min_length=1)
    decoy_skill: str
    operational_spec: bool | str = Field(
        default=False,
        description="true: this task's folder holds operational-spec.md; a sibling task id (same "
                    "family and reference): that task's file is this task's spec; false: none",
    )
    drop: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _columns_consistent(self) -> "TaskSpec":
        missing = [c for c in [*self.keys, *self.scored_columns] if c not in self.required_columns]
        if missing:
            raise ValueError(f"keys/scored columns not in required_columns: {', '.join(missing)}")
        if self.decoy_skill in self.skills:
            raise ValueError("decoy_skill must be a skill of another family")
        if self.operational_spec == self.id:
            raise ValueError("operational_spec names the task itself; write operational_spec = true")
        if any(v < 0 for v in self.tolerances.values()):
            raise ValueError("tolerances must be >= 0")
        return self

    @property
    def derived_schema(self) -> str:
        return "mimiciv_derived" if self.database == "mimic-iv" else "eicu_derived"

    @property
    def target_table(self) -> str:
        """Qualified name of the built reference table."""
        return f"{self.derived_schema}.target_{self.reference.replace('-', '_')}"

    @property
    def task_dir(self) -> Path:
        return TASKS_DIR / self.family / self.id

    @property
    def operational_spec_owner(self) -> str | None:
        """Id of the task whose folder holds this task's operational-spec.md (None: no spec)."""
        if isinstance(self.operational_spec, str):
            return self.operational_spec
        return self.id if self.operational_spec else None

    def operational_spec_path(self, tasks_dir: Path | None = None) -> Path | None:
        """The operational-spec.md this task shows under the operational-spec condition."""
        owner = self.operational_spec_owner
        return None if owner is None else (tasks_dir or TASKS_DIR) / self.family / owner / "operational-spec.md"

    def tolerance(self, column: str) -> float:
        return float(self.tolerances.get(column, 0.0))


def load_task_file(path: Path) -> TaskSpec:
    """Read and validate one task.toml; errors name the file and the field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{path}: cannot read task file ({exc}); fix the TOML syntax") from exc
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(task)"
        raise TaskError(f"{path}: field '{field}': {first['msg']}") from exc
    expected = (path.parent.parent.name, path.parent.name)
    if (spec.family, spec.id) != expected:
        raise TaskError(
            f"{path}: field 'id'/'family' ({spec.family}/{spec.id}) must match the folder "
            f"{expected[0]}/{expected[1]}"
        )
    return spec


def load_catalogue(tasks_dir: Path | None = None) -> dict[str, TaskSpec]:
    """All tasks by id, sorted by id."""
    if tasks_dir is None:
        return dict(_cached_catalogue())
    return _read_catalogue(tasks_dir)


@lru_cache(maxsize=1)
def _cached_catalogue() -> tuple[tuple[str, TaskSpec], ...]:
    return tuple(_read_catalogue(TASKS_DIR).items())


def _read_catalogue(tasks_dir: Path) -> dict[str, TaskSpec]:
    specs: dict[str, TaskSpec] = {}
    for path in sorted(tasks_dir.glob("*/*/task.toml")):
        spec = load_task_file(path)
        if spec.id in specs:
            raise TaskError(f"{path}: field 'id': duplicate task id {spec.id}")
        specs[spec.id] = spec
    if not specs:
        raise TaskError(f"no task.toml files under {tasks_dir}; reinstall clinbench")
    return dict(sorted(specs.items()))


def get_task(task_id: str) -> TaskSpec:
    """One task by id, with a helpful error listing near matches."""
    catalogue = load_catalogue()
    if task_id not in catalogue:
        near = [t for t in catalogue if task_id in t or t in task_id][:5]
        hint = f" (did you mean: {', '.join(near)})" if near else ""
        raise TaskError(f"unknown task '{task_id}'{hint}; run `clinbench tasks list`")
    return catalogue[task_id]
