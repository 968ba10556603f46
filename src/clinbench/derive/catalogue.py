"""The task catalogue: one ``tasks/<family>/<task-id>/task.toml`` per task, validated here.

The thresholds, tolerances, keys and scored columns are the public M4Bench v1 catalogue, so
results compare task by task. Everything else that reads a task goes through ``TaskSpec``.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from clinbench.errors import TaskError
from clinbench.plain import Frozen

TASKS_DIR = Path(__file__).parent / "tasks"
SKILLS_DIR = Path(__file__).parent / "skills"

CONDITIONS = (
    "no-skill", "with-skill", "with-skill-all", "with-skill-decoy", "with-skill-rawsql", "operational-spec",
)


class SpecError(ValueError):
    """A task field that does not validate; ``field`` names it ('(task)' for a rule across fields)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


class TaskSpec(Frozen):
    """One derivation task as declared in its ``task.toml``, validated on construction (a record
    written by hand, not a dataclass: a scoring process imports this, ``clinbench.plain`` says why)."""

    def __init__(self, id: str, family: str, database: Literal["mimic-iv", "eicu"], mode: Literal["standard", "raw"],
                 reference: str, keys: list[str], scored_columns: list[str], required_columns: list[str],
                 coverage_threshold: float, accuracy_threshold: float, skills: list[str], decoy_skill: str,
                 tolerances: dict[str, float] | None = None, timestamp_tolerance_seconds: float = 0.0,
                 operational_spec: bool | str = False, drop: list[str] | None = None) -> None:
        # reference: the target name, built as <schema>.target_<name with - as _>; operational_spec: true (this
        # task's folder holds operational-spec.md), a sibling task id (same family and reference: that task's
        # file is this task's spec) or false (none)
        self._set(id=id, family=family, database=database, mode=mode, reference=reference, keys=keys,
                  scored_columns=scored_columns, required_columns=required_columns,
                  coverage_threshold=coverage_threshold, accuracy_threshold=accuracy_threshold, skills=skills,
                  decoy_skill=decoy_skill, tolerances={} if tolerances is None else tolerances,
                  timestamp_tolerance_seconds=timestamp_tolerance_seconds, operational_spec=operational_spec,
                  drop=[] if drop is None else drop)
        self._validate()

    @classmethod
    def from_mapping(cls, raw: dict[str, Any]) -> "TaskSpec":
        """A task from a parsed task.toml: unknown and missing fields are errors naming the field."""
        for name in raw:
            if name not in _FIELDS:
                raise SpecError(name, "Extra inputs are not permitted")
        for name in _REQUIRED:
            if name not in raw:
                raise SpecError(name, "Field required")
        return cls(**raw)

    def _validate(self) -> None:
        for name in ("id", "family", "reference", "decoy_skill"):
            if not isinstance(getattr(self, name), str):
                raise SpecError(name, "Input should be a valid string")
        for name, allowed in (("database", ("mimic-iv", "eicu")), ("mode", ("standard", "raw"))):
            if getattr(self, name) not in allowed:
                raise SpecError(name, f"Input should be {' or '.join(repr(a) for a in allowed)}")
        for name in ("keys", "scored_columns", "required_columns", "skills", "drop"):
            value = getattr(self, name)
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise SpecError(name, "Input should be a valid list of strings")
            if not value and name != "drop":
                raise SpecError(name, "List should have at least 1 item after validation, not 0")
            self._set(**{name: list(value)})
        for name, low, high in (("coverage_threshold", 0, 1), ("accuracy_threshold", 0, 1),
                                ("timestamp_tolerance_seconds", 0, None)):
            value = _number(name, getattr(self, name))
            if value < low or (high is not None and value > high):
                bound = f"greater than or equal to {low}" if value < low else f"less than or equal to {high}"
                raise SpecError(name, f"Input should be {bound}")
            self._set(**{name: value})
        if not isinstance(self.tolerances, dict) or not all(isinstance(k, str) for k in self.tolerances):
            raise SpecError("tolerances", "Input should be a valid dictionary of column -> number")
        self._set(tolerances={k: _number(f"tolerances.{k}", v) for k, v in self.tolerances.items()})
        if not isinstance(self.operational_spec, (bool, str)):
            raise SpecError("operational_spec", "Input should be true, false or a task id")
        missing = [c for c in [*self.keys, *self.scored_columns] if c not in self.required_columns]
        if missing:
            raise SpecError("(task)", f"keys/scored columns not in required_columns: {', '.join(missing)}")
        if self.decoy_skill in self.skills:
            raise SpecError("(task)", "decoy_skill must be a skill of another family")
        if self.operational_spec == self.id:
            raise SpecError("(task)", "operational_spec names the task itself; write operational_spec = true")
        if any(v < 0 for v in self.tolerances.values()):
            raise SpecError("(task)", "tolerances must be >= 0")

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


# task.toml's fields are TaskSpec's parameters, in one place: its __init__ (those without a default are required)
_FIELDS = TaskSpec.__init__.__code__.co_varnames[1:TaskSpec.__init__.__code__.co_argcount]
_REQUIRED = _FIELDS[:len(_FIELDS) - len(TaskSpec.__init__.__defaults__ or ())]


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(name, "Input should be a valid number")
    return float(value)


def load_task_file(path: Path) -> TaskSpec:
    """Read and validate one task.toml; errors name the file and the field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{path}: cannot read task file ({exc}); fix the TOML syntax") from exc
    try:
        spec = TaskSpec.from_mapping(raw)
    except SpecError as exc:
        raise TaskError(f"{path}: field '{exc.field}': {exc}") from exc
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


def task_families() -> dict[str, str]:
    """Every catalogue task's family by task id: what the statistics group tasks by."""
    return {task_id: spec.family for task_id, spec in _cached_catalogue()}


@lru_cache(maxsize=None)
def _task_files(task_id: str) -> tuple[Path, ...]:
    """The task.toml files of the folders named ``task_id``: looked up once (a rescore asks for each of its runs'
    tasks: walking the families each time was 0.5 ms a call, 1,120 calls)."""
    return tuple(p for family in sorted(TASKS_DIR.iterdir()) if (p := family / task_id / "task.toml").is_file())


@lru_cache(maxsize=None)
def _single_task(path: Path) -> TaskSpec:
    return load_task_file(path)


def _catalogue_read() -> bool:
    """Whether the whole catalogue is in memory, or given in its place (a test's catalogue: then every task
    comes from it, none from its file)."""
    info = getattr(_cached_catalogue, "cache_info", None)
    return info is None or info().currsize > 0


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
    """One task by id, with a helpful error listing near matches.

    Before the catalogue is read, a task is read from its own file alone (a scoring process needs one
    task: parsing all 28 cost 20 ms, 5% of a `clinbench score`); the id is then checked against its
    folder as ``load_task_file`` always does, and a name no folder holds reads the whole catalogue."""
    if not _catalogue_read() and task_id.isascii() and task_id.replace("-", "").isalnum():
        found = _task_files(task_id)
        if len(found) == 1:
            return _single_task(found[0])
    catalogue = load_catalogue()
    if task_id not in catalogue:
        near = [t for t in catalogue if task_id in t or t in task_id][:5]
        hint = f" (did you mean: {', '.join(near)})" if near else ""
        raise TaskError(f"unknown task '{task_id}'{hint}; run `clinbench tasks list`")
    return catalogue[task_id]
