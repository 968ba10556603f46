"""Built-in agents that need no model: baselines and replays.

* ``reference``: the task's reference answer (a ceiling; it reads the reference database,
  so it runs in the harness, outside any sandbox, and is never mistaken for an agent result).
* ``variant``: a deliberate variant of the reference (a clinically plausible alternative
  convention), to show how the scorer treats near misses.
* ``empty``: a header-only output.csv with the required columns (a floor).
* ``replay``: the output.csv of an earlier campaign's run with the same task, condition,
  schema variant and trial, for re-scoring or comparing scorers.

``reference`` and ``variant`` come from ``clinbench.agents.builtin.run_builtin``.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from clinbench.agents.base import Agent, AgentOutcome, RunContext, TranscriptWriter, Workspace, output_if_written
from clinbench.agents.factory import AgentOptions
from clinbench.errors import AgentError


class ReferenceAgent(Agent):
    """Runs the derive helper's reference/variant builder against the reference database."""

    isolated = False

    def __init__(self, name: str, variant: str | None = None):
        self.name = name
        self.variant = variant

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        from clinbench.agents.builtin import run_builtin

        if ctx.reference_db is None:
            raise AgentError(f"the {self.name} agent needs the reference database (--db)")
        with TranscriptWriter(ctx.transcript) as log:
            log.event("start", agent=self.name, variant=self.variant)
            try:
                out = run_builtin(self.name, workspace.root, ctx.task_id, ctx.reference_db, variant=self.variant)
            except AgentError as exc:
                log.event("end", status="error", error=str(exc))
                return AgentOutcome("error", None, ctx.transcript, error=str(exc))
            if Path(out) != workspace.output_csv and Path(out).is_file():
                shutil.copyfile(out, workspace.output_csv)
            log.event("end", status="ok", output=str(workspace.output_csv.name))
        return AgentOutcome("ok", output_if_written(workspace), ctx.transcript, isolated=False)


class EmptyAgent(Agent):
    """Answers nothing: a header-only output.csv with the task's required columns."""

    name = "empty"

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        from clinbench.derive.catalogue import get_task

        columns = get_task(ctx.task_id).required_columns
        with workspace.output_csv.open("w", newline="") as fh:
            csv.writer(fh).writerow(columns)
        with TranscriptWriter(ctx.transcript) as log:
            log.event("end", status="ok", columns=columns)
        return AgentOutcome("ok", workspace.output_csv, ctx.transcript, isolated=True)


class ReplayAgent(Agent):
    """Copies the output.csv of the matching run of an earlier campaign."""

    name = "replay"

    def __init__(self, source_dir: str | None):
        if not source_dir:
            raise AgentError("the replay agent needs --replay-from DIR (an earlier campaign's --out folder)")
        self.source_dir = Path(source_dir)

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        from clinbench.records.store import Store

        store = Store.open(self.source_dir)
        schema = ctx.options.get("schema", "")
        matches = [r for r in store.runs() if r["task"] == ctx.task_id and r["condition"] == ctx.condition
                   and r["schema"] == schema and r["trial"] == ctx.trial and r["agent"] != "replay"]
        with TranscriptWriter(ctx.transcript) as log:
            if not matches:
                msg = f"no run of {ctx.task_id}/{ctx.condition}/{schema}/trial {ctx.trial} in {self.source_dir}"
                log.event("end", status="error", error=msg)
                return AgentOutcome("error", None, ctx.transcript, error=msg)
            source = matches[0]
            src = self.source_dir / (source["evidence_dir"] or "") / "output.csv"
            if src.is_file():
                shutil.copyfile(src, workspace.output_csv)
            log.event("end", status="ok", replayed=source["run_id"], found=src.is_file())
        return AgentOutcome("ok", output_if_written(workspace), ctx.transcript, isolated=True)


def make_builtin(name: str, options: AgentOptions) -> Agent:
    if name == "reference":
        return ReferenceAgent("reference")
    if name == "variant":
        if not options.variant:
            raise AgentError("the variant agent needs --variant NAME (a reference-validity variant, e.g. missing_as_null)")
        return ReferenceAgent("variant", options.variant)
    if name == "empty":
        return EmptyAgent()
    return ReplayAgent(options.replay_from)
