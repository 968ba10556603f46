"""One interface for every agent: a workspace goes in; output.csv, a transcript and usage come out.

A workspace is the folder the derive benchmark prepares for one run: the masked database,
the prompt and the skill documents given for the condition. The agent writes
``output.csv`` in it. Evidence (transcript, egress log) goes to a separate folder the
agent never sees.
"""

from __future__ import annotations

import abc
import json
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from clinbench.records import Usage
from clinbench.errors import AgentError

OUTPUT_FILE = "output.csv"
TRANSCRIPT_FILE = "transcript.jsonl"
PROMPT_NAMES = ("prompt.md", "PROMPT.md", "instruction.md")
SKILL_DIR_NAMES = ("skills",)


@dataclass
class Workspace:
    """What an agent is given: the folder, the prompt, the database and the skill folders."""

    root: Path
    prompt_file: Path
    database: Path | None
    skills: list[Path] = field(default_factory=list)  # folders each holding SKILL.md

    @property
    def prompt(self) -> str:
        return self.prompt_file.read_text(encoding="utf-8")

    @property
    def output_csv(self) -> Path:
        return self.root / OUTPUT_FILE

    @classmethod
    def from_dir(cls, root: str | Path) -> Workspace:
        """Read a prepared workspace: ``prompt.md``, one ``*.duckdb`` file, ``skills/<name>/SKILL.md``."""
        root = Path(root).resolve()
        if not root.is_dir():
            raise AgentError(f"workspace {root} does not exist: prepare it with clinbench.derive.workspace.prepare_workspace")
        prompt = next((root / n for n in PROMPT_NAMES if (root / n).is_file()), None)
        if prompt is None:
            raise AgentError(f"workspace {root} has no prompt.md: prepare it with clinbench.derive.workspace.prepare_workspace")
        dbs = sorted(root.glob("*.duckdb")) + sorted(root.glob("*/*.duckdb"))
        skills: list[Path] = []
        for name in SKILL_DIR_NAMES:
            base = root / name
            if base.is_dir():
                skills.extend(sorted(p.parent for p in base.glob("*/SKILL.md")))
        return cls(root=root, prompt_file=prompt, database=dbs[0] if dbs else None, skills=skills)


@dataclass
class AgentOutcome:
    """What an agent run produced."""

    status: str  # 'ok' | 'error' | 'timeout' (the agent's failures) | RunStatus.HARNESS_ERROR (e.g. endpoint down)
    output_csv: Path | None
    transcript: Path | None
    usage: Usage = field(default_factory=Usage)
    isolated: bool = False
    cost: float | None = None
    error: str | None = None
    final_message: str | None = None
    limit: str | None = None  # the limit the run hit: 'timeout', 'token_budget', 'max_tokens' or 'max_steps'
    agent_version: str | None = None  # the agent program's version, as it printed it
    served_models: tuple[str, ...] = ()  # models the endpoint said answered (routing or overrides show here)


@dataclass
class RunContext:
    """Everything an agent needs for one run besides the workspace."""

    evidence_dir: Path
    task_id: str
    condition: str = ""
    model: str | None = None
    timeout_seconds: float = 1800.0
    trial: int = 0
    reference_db: Path | None = None  # only built-in agents may read it; never passed into a sandbox
    campaign_dir: Path | None = None
    hidden_paths: list[Path] = field(default_factory=list)  # must stay invisible to a sandboxed agent
    options: dict[str, Any] = field(default_factory=dict)
    deadline: float | None = None  # time.monotonic() when the run's wall-clock time is up (default: now + timeout)

    def __post_init__(self) -> None:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.timeout_seconds

    def remaining(self) -> float:
        """Seconds left before the deadline (at least 0): the bound for any request or process of the run."""
        return max(0.0, self.deadline - time.monotonic())

    @property
    def transcript(self) -> Path:
        return self.evidence_dir / TRANSCRIPT_FILE


class Agent(abc.ABC):
    """Base class: subclasses implement ``run``."""

    name: str = "agent"
    external: bool = False  # runs a program of its own, so it must be sandboxed

    @abc.abstractmethod
    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        """Run in ``workspace``; write the transcript to ``ctx.transcript``."""

    def describe(self) -> str:
        return self.name


def place_skills(skills: list[Path], dest: Path) -> list[Path]:
    """Copy skill folders to ``dest/<name>/`` (where a coding agent looks for them)."""
    placed = []
    for skill in skills:
        target = dest / skill.name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(skill, target)
        placed.append(target)
    return placed


def output_if_written(workspace: Workspace) -> Path | None:
    out = workspace.output_csv
    return out if out.is_file() else None


def timestamp() -> str:
    """Now, as an ISO 8601 UTC time with milliseconds (what transcript events carry as ``time``)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class TranscriptWriter:
    """Appends JSON events, each stamped with its ``time``, to the run's transcript.jsonl."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("a", encoding="utf-8")

    def event(self, kind: str, **data: Any) -> None:
        self._fh.write(json.dumps({"type": kind, "time": timestamp(), **data}, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
