"""Why a run scored what it did, from its evidence folder alone (``manifest.json``, ``score.json``).

* the failure cause: the agent's or harness's error recorded in the manifest, else the
  scorer's reason (``no output.csv was written``, ``missing key column(s) …``);
* per scored column: matched cells, denominator, match rate, nMAE;
* the first mismatching rows, one line per reference key, each mismatching column's
  reference value beside the agent's (``(key missing)`` when the agent has no such row).

``clinbench explain RUN_DIR`` prints it; the report shows it under each run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinbench.errors import ClinbenchError
from clinbench.records import ColumnScore, RunStatus

MAX_ROWS = 5


@dataclass
class Mismatch:
    key: dict[str, str]
    cells: dict[str, tuple[str, str]]  # column -> (reference, agent)


@dataclass
class RunWhy:
    run_id: str
    task: str
    condition: str
    agent: str
    model: str
    trial: int | None
    status: str
    reward: float | None
    strict: bool | None
    cause: str  # empty when the run was scored without complaint
    harness_error: bool
    reference_rows: int | None
    agent_rows: int | None
    columns: list[ColumnScore] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.agent}/{self.model}" if self.agent and self.model and self.model != "-" else (self.agent or self.model)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ClinbenchError(f"{path} is not readable JSON ({exc}); the run's evidence is damaged") from exc
    return data if isinstance(data, dict) else {}


def run_cause(manifest: dict[str, Any], score: dict[str, Any]) -> str:
    """The one line that says why a run failed or lost points ('' when nothing was said)."""
    for text in (manifest.get("error"), score.get("run_error"), score.get("reason")):
        if text:
            line = " ".join(str(text).split())
            return line if len(line) <= 300 else line[:297] + "…"
    return ""


def explain_run(run_dir: str | Path, *, max_rows: int = MAX_ROWS) -> RunWhy:
    """Read a run's evidence folder (``DIR/runs/<run_id>``) into a ``RunWhy``."""
    folder = Path(run_dir)
    if not folder.is_dir():
        raise ClinbenchError(f"{folder} is not a run folder: pass DIR/runs/<run_id> of a campaign")
    manifest = _read_json(folder / "manifest.json")
    score = _read_json(folder / "score.json")
    if not manifest and not score:
        raise ClinbenchError(f"{folder} holds neither manifest.json nor score.json: pass DIR/runs/<run_id> of a campaign")
    spec = manifest.get("run") or {}
    status = str(manifest.get("status") or "")
    columns = []
    rows: dict[tuple, Mismatch] = {}
    for name, col in sorted((score.get("columns") or {}).items()):
        columns.append(ColumnScore(name, float(col.get("match_rate", 0.0)), col.get("nmae"), col.get("matched"),
                                   col.get("denominator")))
        for ex in col.get("examples") or []:
            key = {k: "" if v is None else str(v) for k, v in (ex.get("key") or {}).items()}
            slot = rows.setdefault(tuple(key.items()), Mismatch(key, {}))
            slot.cells[name] = ("" if ex.get("reference") is None else str(ex.get("reference")),
                                "" if ex.get("agent") is None else str(ex.get("agent")))
    return RunWhy(
        run_id=str(spec.get("run_id") or folder.name), task=str(spec.get("task") or score.get("task_id") or ""),
        condition=str(spec.get("condition") or ""), agent=str(spec.get("agent") or ""),
        model=str(spec.get("model") or ""), trial=spec.get("trial"), status=status,
        reward=score.get("reward"), strict=score.get("strict"), cause=run_cause(manifest, score),
        harness_error=status == RunStatus.HARNESS_ERROR or (folder / "harness_error.txt").is_file(),
        reference_rows=score.get("reference_rows"), agent_rows=score.get("agent_rows"),
        columns=columns, mismatches=list(rows.values())[:max_rows],
    )
