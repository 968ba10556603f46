"""One derive run, start to finish: workspace, agent, score, evidence, record.

``execute_run`` runs in a worker (a local process or a Ray task). It writes evidence to a
partial folder and returns the record; the campaign process publishes the folder and
records the run, so a worker killed mid-run leaves nothing that looks finished.

The run's status says whose failure it was: ``ok`` (the output was scored), ``agent-failed``
(the agent wrote no output, a bad one, or ran out of time: reward 0) or ``harness-error``
(the workspace, sandbox, endpoint or our own code failed: no reward). A full disk or a
read-only campaign folder is not a run's failure: it stops the campaign
(``StorageFailure``).
"""

from __future__ import annotations

import shutil
import time
import traceback
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.factory import BUILTIN_AGENTS, AgentOptions, make_agent
from clinbench.agents.sandbox import HiddenPathVisible
from clinbench.campaign import evidence
from clinbench.campaign.binding import bind_profile, bind_tasks, check_workspaces
from clinbench.campaign.matrix import RunSpec
from clinbench.records import ColumnScore, RunRecord, RunStatus
from clinbench.errors import ClinbenchError, ResourceError
from clinbench.write_errors import WriteError, explain, cannot_write

DEFAULT_TIMEOUT_SECONDS = 30 * 60
AGENT_FAILED = {"error", "timeout"}  # AgentOutcome statuses that are the agent's failure


StorageFailure = WriteError  # the campaign folder cannot be written: every further run would fail too


@dataclass(frozen=True)
class CampaignConfig:
    """What every run of a campaign shares (picklable)."""

    db: str
    out: str
    options: AgentOptions = field(default_factory=AgentOptions)
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    data_digests: dict[str, str] = field(default_factory=dict)  # task -> fingerprint of its data (binding)
    scored_columns: str = "value"  # which columns count towards the reward (derive/score.py)
    profile: str | None = None  # reference profile of the references scored against, name@version
    workspaces: dict[str, str] = field(default_factory=dict)  # task@schema -> what its agents see (check_workspaces)

    def bound(self, store, specs: list[RunSpec]) -> CampaignConfig:
        """This config with the data digest of every task, once the store's data binding is checked and extended,
        and the reference profile of the references (refused when the store's runs have another); what each
        task's agents see is bound too (``check_workspaces``)."""
        tasks = [s.task for s in specs]
        workspaces = check_workspaces(store, [(s.task, s.schema) for s in specs], self.db)
        return replace(self, data_digests=bind_tasks(store, tasks, self.db), profile=bind_profile(store, tasks, self.db),
                       workspaces=workspaces)

    def lost(self, spec: RunSpec, cause: str) -> RunResult:
        return lost_run(spec, self, cause)


@dataclass
class RunResult:
    record: RunRecord
    partial_dir: str  # evidence to publish as runs/<run_id>
    timings: dict[str, float] = field(default_factory=dict)  # harness cost by phase, seconds


def score_into_record(record: RunRecord, task_id: str, output_csv: Path | None, db: str | Path,
                      scored_columns: str = "value", scorer=None) -> dict[str, Any]:
    """Score an output (or its absence) and copy the numbers into ``record``; return score.json content.
    ``scorer`` (a ``derive.score.Scorer``, default: a fresh one) scores it."""
    if record.status == RunStatus.HARNESS_ERROR:
        record.reward = record.strict = record.key_f1 = record.ordered_value_nmae = None
        record.column_scores = []
        return {"task_id": task_id, "reward": None, "strict": None, "reason": "harness error: not scored"}
    if output_csv is None or not Path(output_csv).is_file():
        record.reward, record.strict, record.key_f1, record.ordered_value_nmae = 0.0, False, 0.0, None
        record.column_scores = []
        record.status = RunStatus.AGENT_FAILED
        record.error = record.error or "no output.csv was written"
        return {"task_id": task_id, "reward": 0.0, "strict": False, "scored_columns": scored_columns,
                "reason": "no output.csv was written"}
    from clinbench.derive.score import score_output

    result = (scorer or score_output)(task_id, output_csv, db, scored_columns=scored_columns)
    data = result.as_dict()
    if result.reference_rows == 0:  # every answer would score 0: the database's fault, never the agent's
        record.status = RunStatus.HARNESS_ERROR
        record.error = f"the reference of {task_id} has no rows in this database: not scored"
        record.reward = record.strict = record.key_f1 = record.ordered_value_nmae = None
        record.column_scores = []
        return {**data, "reward": None, "strict": None, "reason": record.error}
    record.reward = float(result.reward)
    record.strict = bool(result.strict)
    record.key_f1 = float(result.key_f1)
    record.ordered_value_nmae = result.ordered_value_nmae
    record.column_scores = [ColumnScore(name, c.match_rate, c.nmae) for name, c in sorted(result.columns.items())]  # the stored part
    return data


def hidden_paths(db: str | Path, campaign_dir: Path) -> list[Path]:
    """What a sandboxed agent must never see, wherever it lives: the source database (and its
    write-ahead log), the campaign folder (store, evidence, other runs) and the whole cache
    (masked databases, raw layers, cached references)."""
    from clinbench.derive.cache_files import cache_root

    db = Path(db)
    return [db, db.with_name(db.name + ".wal"), Path(campaign_dir), cache_root()]


def execute_run(spec: RunSpec, config: CampaignConfig) -> RunResult:
    """Run one cell of the matrix; never raises for agent or task failures (they become the run's status).

    Raises ``StorageFailure`` when the campaign folder cannot be written (disk full, read-only).
    """
    return storage_checked(config.out, _execute_run, spec, config)


def storage_checked(out: str, runner, spec, config) -> RunResult:
    """``runner(spec, config)``, a full disk or read-only campaign folder raised as ``StorageFailure`` (every
    further run would fail too: it stops the campaign); any other OSError is the runner's to handle."""
    try:
        return runner(spec, config)
    except OSError as exc:
        if cannot_write(exc):
            raise StorageFailure(explain(exc, out)) from exc
        raise


def _execute_run(spec: RunSpec, config: CampaignConfig) -> RunResult:
    t0 = time.monotonic()
    campaign_dir = Path(config.out)
    partial = evidence.new_partial_dir(campaign_dir, spec.run_id)
    work = evidence.new_work_dir(campaign_dir, spec.run_id)
    timings: dict[str, float] = {}
    record = RunRecord(run_id=spec.run_id, benchmark="derive", task=spec.task, condition=spec.condition,
                       schema=spec.schema, agent=spec.agent, model=spec.model, trial=spec.trial, status="ok",
                       data_digest=config.data_digests.get(spec.task), profile=config.profile,
                       workspace=config.workspaces.get(f"{spec.task}@{spec.schema}"))
    outcome = None
    error = None
    output_refused = None
    database_check = None
    try:
        from clinbench.derive.catalogue import get_task
        from clinbench.derive.workspace import build_workspace

        record.family = get_task(spec.task).family
        agent = make_agent(spec.agent, config.options, spec.model)
        timings["agent_setup"] = time.monotonic() - t0
        t1 = time.monotonic()
        # only a sandbox (which binds it read-only) or the harness's own read-only tools share the
        # cached database; an unsandboxed agent program writes to a copy of its own
        unsandboxed = getattr(agent, "external", False) and not agent.sandbox.isolated
        _, prepared = build_workspace(spec.task, spec.condition, spec.schema, config.db, work, shared=not unsandboxed)
        sealed = prepared.sha256  # it matched these bytes when the workspace was made
        ws = Workspace.from_dir(work)
        shutil.copyfile(ws.prompt_file, partial / "prompt.md")
        if (work / "skills").is_dir():
            shutil.copytree(work / "skills", partial / "skills")
        timings["workspace"] = time.monotonic() - t1
        ctx = RunContext(evidence_dir=partial, task_id=spec.task, condition=spec.condition,
                         model=None if spec.model in ("", "-") else spec.model,
                         timeout_seconds=config.timeout_seconds, trial=spec.trial,
                         reference_db=Path(config.db) if spec.agent in BUILTIN_AGENTS else None,
                         campaign_dir=campaign_dir, options={"schema": spec.schema},
                         hidden_paths=hidden_paths(config.db, campaign_dir))
        t2 = time.monotonic()
        outcome = agent.run(ws, ctx)
        timings["agent"] = time.monotonic() - t2
        record.status = RunStatus.AGENT_FAILED if outcome.status in AGENT_FAILED else outcome.status
        record.isolated = outcome.isolated
        from clinbench.agents.prices import cost_of

        # the price table's cost, never an agent CLI's own estimate (that is usage.reported_cost)
        record.cost = cost_of(record.model if record.model not in ("", "-") else None, outcome.usage, config.options.prices)
        record.usage = outcome.usage
        record.agent_version = outcome.agent_version
        record.served_model = ",".join(outcome.served_models) or None
        error = outcome.error
        # taken only if a regular file of the workspace under the cap; else the run fails with the reason
        output_refused = evidence.take_output(ws.output_csv, partial / evidence.OUTPUT, config.options.sandbox_limits.output_bytes)
        if output_refused:
            record.status, error = RunStatus.AGENT_FAILED, f"{error}; {output_refused}" if error else output_refused
        if getattr(agent, "external", False) and not outcome.isolated:
            record.publishable, record.flag_reason = False, "not isolated (--unsafe-no-isolation)"
        elif not unsandboxed:
            database_check = _database_check(sealed, ws.root / "database.duckdb")
            if changed := database_changed(database_check):
                record.publishable, record.flag_reason = False, changed
    except (WriteError, HiddenPathVisible):
        raise
    except ClinbenchError as exc:  # workspace, sandbox, endpoint: not the agent's doing
        record.status, error = RunStatus.HARNESS_ERROR, str(exc)
    except OSError as exc:
        if cannot_write(exc):
            raise
        record.status, error = RunStatus.HARNESS_ERROR, f"{type(exc).__name__}: {exc}"
        _write_traceback(partial)
    except Exception as exc:  # a bug must not stop the campaign; the traceback is evidence
        record.status, error = RunStatus.HARNESS_ERROR, f"{type(exc).__name__}: {exc}"
        _write_traceback(partial)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record.error = error
    return _finish(spec, config, record, partial, error, timings, t0, outcome.limit if outcome is not None else None,
                   output_refused, database_check)


def _database_check(sealed: str | None, seen: Path) -> dict[str, str | None]:
    """The sha256 the shared cached database was sealed with and the one the run's workspace
    database has after the run (a hard link to it, or a read-only copy)."""
    from clinbench.derive.cache_files import sha256_file

    return {"sealed": sealed, "after": sha256_file(seen) if seen.is_file() else None}


def database_changed(check: dict | None) -> str | None:
    """Why a run saw another database than the sealed one (None when it did not, or was not checked)."""
    if not check or check.get("after") == check.get("sealed"):
        return None
    return (f"the shared workspace database changed during the run (sha256 {str(check.get('after'))[:12]}…, "
            f"sealed as {str(check.get('sealed'))[:12]}…): something outside the sandbox wrote to it")


def lost_run(spec: RunSpec, config: CampaignConfig, cause: str) -> RunResult:
    """The record of a run whose worker was lost (a Ray node died, twice): a harness error with
    its cause, not scored, retried by ``--retry-failed``; its evidence says what happened."""
    t0 = time.monotonic()
    partial = evidence.new_partial_dir(Path(config.out), spec.run_id)
    record = RunRecord(run_id=spec.run_id, benchmark="derive", task=spec.task, condition=spec.condition,
                       schema=spec.schema, agent=spec.agent, model=spec.model, trial=spec.trial,
                       status=RunStatus.HARNESS_ERROR, data_digest=config.data_digests.get(spec.task), error=cause,
                       profile=config.profile, workspace=config.workspaces.get(f"{spec.task}@{spec.schema}"))
    try:
        from clinbench.derive.catalogue import get_task

        record.family = get_task(spec.task).family
    except ClinbenchError:
        pass
    return _finish(spec, config, record, partial, cause, {}, t0, None)


def _write_traceback(partial: Path) -> None:
    try:
        (partial / "harness_error.txt").write_text(traceback.format_exc(), encoding="utf-8")
    except OSError:
        pass


def _finish(spec: RunSpec, config: CampaignConfig, record: RunRecord, partial: Path, error: str | None,
            timings: dict[str, float], t0: float, limit_hit: str | None, output_refused: str | None = None,
            database_check: dict | None = None) -> RunResult:
    """Score the output, write score.json and the manifest, and return the finished record."""
    t3 = time.monotonic()
    output = partial / "output.csv"
    try:
        score = score_into_record(record, spec.task, output if output.is_file() else None, config.db,
                                  config.scored_columns)
    except ResourceError as exc:  # DuckDB ran out of memory or spill disk: this machine's failure, retried later
        score = {"task_id": spec.task, "reward": None, "strict": None, "reason": str(exc)}
        record.reward = record.strict = record.key_f1 = record.ordered_value_nmae = None
        record.column_scores = []
        record.status, record.error = RunStatus.HARNESS_ERROR, f"{record.error}; {exc}" if record.error else str(exc)
    except ClinbenchError as exc:  # the output is unreadable: the agent's failure
        score = {"task_id": spec.task, "reward": 0.0, "strict": False, "reason": f"scoring failed: {exc}"}
        record.reward, record.strict = 0.0, False
        record.status, record.error = RunStatus.AGENT_FAILED, record.error or f"scoring failed: {exc}"
    if error:
        score["run_error"] = error
    if output_refused:
        score["output_refused"] = output_refused
    evidence.write_json(partial / evidence.SCORE, score)
    timings["score"] = time.monotonic() - t3
    if not (partial / "transcript.jsonl").exists():
        (partial / "transcript.jsonl").write_text("", encoding="utf-8")
    record.elapsed_seconds = time.monotonic() - t0
    if record.usage is not None:  # everything but waiting for the model: workspace, tools, sandbox, scoring
        record.usage.harness_seconds = max(0.0, record.elapsed_seconds - record.usage.model_seconds)
    record.finished_at = datetime.now()
    record.evidence_dir = f"{evidence.RUNS_DIR}/{spec.run_id}"
    evidence.write_manifest(partial, {
        "run": spec.to_dict(),
        "status": record.status,
        "error": record.error,
        "isolated": record.isolated,
        "db": str(Path(config.db).resolve()),
        "timeout_seconds": config.timeout_seconds,
        "limits": {"timeout_seconds": config.timeout_seconds, **config.options.limits(),
                   "max_steps": config.options.max_steps},
        "sandbox_limits": config.options.sandbox_limits.describe(),
        "limit_hit": limit_hit,
        "timings": {k: round(v, 3) for k, v in timings.items()},
        "output_refused": output_refused,
        "database_sha256": database_check,
        "scored_columns": config.scored_columns,
        "usage": vars(record.usage) if record.usage else None,
        "finished_at": record.finished_at.isoformat(),
        "record": record.to_json(),  # what `clinbench store rebuild` restores
    })
    return RunResult(record, str(partial), timings)
