"""Built-in agents that need no model: baselines and replays.

* ``reference``: the task's reference answer (a ceiling; it reads the reference database,
  so it runs in the harness, outside any sandbox, and is never mistaken for an agent result).
* ``variant``: a deliberate variant of the reference (a clinically plausible alternative
  convention), to show how the scorer treats near misses.
* ``empty``: a header-only output.csv with the required columns (a floor).
* ``replay``: the output.csv of an earlier campaign's run with the same task, condition,
  schema variant and trial, for re-scoring or comparing scorers. A campaign of several agents
  (or models) is replayed one agent at a time (``--replay-agent``). A run keeps its standing in
  the statistics: a harness error, a run the audit left out, or one the campaign lacks replays
  as a harness error (in no statistic); an agent failure, or a run the audit charged, replays as
  a failure (reward 0), whatever output it left.

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
    """Copies the output.csv of the matching run of an earlier campaign, by one of its agents."""

    name = "replay"

    def __init__(self, source_dir: str | None, agent: str | None = None):
        from clinbench.records.store import Store

        if not source_dir:
            raise AgentError("the replay agent needs --replay-from DIR (an earlier campaign's --out folder)")
        self.source_dir = Path(source_dir)
        runs = [r for r in Store.open(self.source_dir).runs() if r["agent"] != "replay"]
        labels = sorted({_label(r) for r in runs})
        if agent is not None and agent not in labels:
            raise AgentError(f"--replay-agent {agent}: {self.source_dir} holds no runs of it; its agents: "
                             f"{', '.join(labels) or 'none'}")
        if agent is None and len(labels) > 1:
            # which one's output a run got would depend on the store's row order
            raise AgentError(f"{self.source_dir} holds runs of {len(labels)} agents ({', '.join(labels)}): "
                             "name the one to replay with --replay-agent")
        self.agent = agent if agent is not None else (labels[0] if labels else None)
        self.runs = sorted((r for r in runs if _label(r) == self.agent), key=lambda r: r["run_id"])  # read once

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        from clinbench.records import LEGACY_STATUS, RunStatus

        schema = ctx.options.get("schema", "")
        matches = [r for r in self.runs if r["task"] == ctx.task_id and r["condition"] == ctx.condition
                   and r["schema"] == schema and r["trial"] == ctx.trial]
        with TranscriptWriter(ctx.transcript) as log:
            if not matches:  # nothing of the agent's to replay, nor a failure of its: in no statistic
                msg = f"no run of {ctx.task_id}/{ctx.condition}/{schema}/trial {ctx.trial} by {self.agent} in {self.source_dir}"
                log.event("end", status=RunStatus.HARNESS_ERROR.value, error=msg)
                return AgentOutcome(RunStatus.HARNESS_ERROR, None, ctx.transcript, error=msg)
            source = matches[0]
            # the source's standing in the statistics is kept, as a status a later audit of this campaign cannot
            # clear: a harness error, or a run the audit left out, stays out; a run charged for its agent's
            # conduct stays a failure (reward 0); before, a charged run's output replayed as a clean full score
            left_out = (source["status"] == RunStatus.HARNESS_ERROR and "a harness error") or (
                source.get("publishable") is False and not source.get("flag_charged") and "left out by the audit")
            if left_out:
                msg = f"the replayed run {source['run_id']} was {left_out}: {source.get('error') or source.get('flag_reason') or 'no reason recorded'}"
                log.event("end", status=RunStatus.HARNESS_ERROR.value, replayed=source["run_id"], error=msg)
                return AgentOutcome(RunStatus.HARNESS_ERROR, None, ctx.transcript, error=msg)
            failed = (source["status"] in (RunStatus.AGENT_FAILED, *LEGACY_STATUS) and f"an agent failure: {source.get('error')}"
                      or source.get("publishable") is False and f"charged by the audit: {source.get('flag_reason')}")
            if failed:  # whatever output it left: a failure's output was never its score
                msg = f"the replayed run {source['run_id']} was {failed}"
                log.event("end", status="error", replayed=source["run_id"], error=msg)
                return AgentOutcome("error", None, ctx.transcript, error=msg)
            src = self.source_dir / (source["evidence_dir"] or "") / "output.csv"
            if src.is_file():
                shutil.copyfile(src, workspace.output_csv)
            log.event("end", status="ok", replayed=source["run_id"], agent=self.agent, found=src.is_file())
        return AgentOutcome("ok", output_if_written(workspace), ctx.transcript, isolated=True)


def _label(run: dict) -> str:
    """A recorded run's agent as ``--replay-agent`` names it: ``agent``, or ``agent:model`` when it had a model."""
    return run["agent"] if run.get("model") in (None, "", "-") else f"{run['agent']}:{run['model']}"


def make_builtin(name: str, options: AgentOptions) -> Agent:
    if name == "reference":
        return ReferenceAgent("reference")
    if name == "variant":
        if not options.variant:
            raise AgentError("the variant agent needs --variant NAME (a reference-validity variant, e.g. missing_as_null)")
        return ReferenceAgent("variant", options.variant)
    if name == "empty":
        return EmptyAgent()
    return ReplayAgent(options.replay_from, options.replay_agent)
