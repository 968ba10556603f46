"""Running diagnostic encounters as a campaign: cases x agent x trials -> store + evidence.

Each run (one case, one agent, one trial) plays an encounter, judges the diagnosis and
writes its evidence to ``DIR/runs/<run_id>/`` (prompt.md, transcript.jsonl, ledger.json,
roles.json, score.json, manifest.json with sha256 of each file) through the campaign's
evidence module, then records a row in ``DIR/results.duckdb`` (benchmark 'dx', task = case
id, reward 1.0 when the judge gives 4 or more, strict when it gives 5; ``gatekeeper`` and
``judge`` hold the two settings that change a dx run's meaning; a judge that is the agent's own
model is marked ``+self-judge``; a failure's reason is in ``error``).

Model roles (agent, gatekeeper, judge) each have their own ``RoleSpec``; each role's
tokens, requests, cache hits, errors and cost go to roles.json, their sum to the store's
usage table. A failed model call never loses the run: the transcript and ledger kept so
far are written and the run is recorded with its reason (a failure of the gatekeeper or
judge, which are the harness, says ``harness error:``); the campaign goes on. The status says whose failure it was, as for derivation runs: ``agent-failed`` (the
agent's model failed: reward 0, counted) or ``harness-error`` (gatekeeper, judge or a bug:
no reward, left out of statistics). Runs already in the store are skipped (``retry_failed`` redoes errored ones), so
rerunning the command resumes a killed campaign. ``jobs`` runs encounters in threads.

``rejudge`` re-scores stored encounters with another judge: each becomes a new row
(``<run_id>~judge-<label>``) with its own evidence folder pointing at the original, so sealed
evidence is never rewritten.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.records import RunRecord, Usage
from clinbench.records.store import Store
from clinbench.dx.agents import LLM_AGENTS, make_agent
from clinbench.dx.cases import Case
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import INSTRUCTIONS, MAX_TURNS, EncounterResult, run_encounter, transcript_jsonl
from clinbench.dx.gatekeeper import make_gatekeeper
from clinbench.dx.judge import CORRECT, make_judge
from clinbench.dx.models import ModelCache, ModelError, RoleModel, RoleSpec, check_self_judge
from clinbench.dx.orchestrator import DxoSettings, run_ensemble
from clinbench.errors import ClinbenchError

GATEKEEPERS = ("offline", "llm")
JUDGES = ("offline", "llm")


@dataclass
class DxConfig:
    agent: str
    gatekeeper: str = "offline"
    judge: str = "offline"
    trials: int = 1
    max_turns: int = MAX_TURNS
    roles: dict[str, RoleSpec] = field(default_factory=dict)  # 'agent' | 'gatekeeper' | 'judge'
    dxo: DxoSettings = field(default_factory=DxoSettings)
    allow_self_judge: bool = False
    cache_dir: Path | None = None
    jobs: int = 1
    retry_failed: bool = False
    mimic_db: Path | None = None  # lab orders answered from this database's labevents (grounded)
    self_judge: bool = field(default=False, init=False)  # set by check(): the judge is the agent's model

    def check(self) -> None:
        """Fail on a bad agent, gatekeeper, judge or role before anything is created."""
        if self.gatekeeper not in GATEKEEPERS:
            raise ClinbenchError(f"unknown gatekeeper {self.gatekeeper!r}: use offline or llm")
        if self.judge not in JUDGES:
            raise ClinbenchError(f"unknown judge {self.judge!r}: use offline or llm")
        if self.mimic_db is not None and not Path(self.mimic_db).is_file():
            raise ClinbenchError(f"no MIMIC-IV database at {self.mimic_db}: pass --mimic-db PATH.duckdb")
        for role, needed in (("agent", self.agent in LLM_AGENTS), ("gatekeeper", self.gatekeeper == "llm"),
                             ("judge", self.judge == "llm")):
            if needed and role not in self.roles:
                raise ClinbenchError(f"the {role} needs a model: pass --{role}-model (and its endpoint)")
        self.self_judge = check_self_judge(self.roles.get("agent") if self.agent in LLM_AGENTS else None,
                                           self.roles.get("judge") if self.judge == "llm" else None,
                                           self.allow_self_judge)

    def judge_label(self) -> str:
        label = self.judge if self.judge != "llm" else f"llm:{self.roles['judge'].label}"
        return label + ("+self-judge" if self.self_judge else "")

    def gatekeeper_label(self) -> str:
        label = self.gatekeeper if self.gatekeeper != "llm" else f"llm:{self.roles['gatekeeper'].label}"
        return label + ("+grounded" if self.mimic_db else "")

    def agent_model(self) -> str:
        return self.roles["agent"].label if self.agent in LLM_AGENTS and "agent" in self.roles else ""


def agent_label(spec: str, dxo: DxoSettings | None = None) -> str:
    """'scripted:/path/to/file.txt' -> 'scripted-file'; 'dxo' -> 'dxo-<mode>'; others unchanged."""
    if spec.startswith("scripted:"):
        return "scripted-" + Path(spec.split(":", 1)[1]).stem
    if spec == "dxo":
        return f"dxo-{(dxo or DxoSettings()).label}"
    return spec


def _safe(raw: str) -> str:
    return re.sub(r"[^A-Za-z0-9._~-]+", "_", raw)


def run_id_for(case: Case, cfg: DxConfig, trial: int) -> str:
    return _safe(f"dx-{agent_label(cfg.agent, cfg.dxo)}-{cfg.agent_model() or 'none'}-{cfg.gatekeeper_label()}-"
                 f"{cfg.judge_label()}-case{case.case_id}-t{trial}")


def _models(cfg: DxConfig) -> dict[str, RoleModel]:
    cache = ModelCache(cfg.cache_dir) if cfg.cache_dir else None
    used = {"agent": cfg.agent in LLM_AGENTS, "gatekeeper": cfg.gatekeeper == "llm", "judge": cfg.judge == "llm"}
    return {role: RoleModel(spec, cache=cache) for role, spec in cfg.roles.items() if used.get(role)}


def _usage(models: dict[str, RoleModel], elapsed: float) -> Usage | None:
    """The roles' usage summed; harness seconds are the run's other time (encounter loop, judging, evidence)."""
    if not models:
        return None
    total = Usage()
    for m in models.values():
        total = total.add(m.usage)
    total.harness_seconds = max(0.0, elapsed - total.model_seconds)
    return total


def _play(case: Case, cfg: DxConfig, models: dict[str, RoleModel], prices: PriceTable,
          agent=None) -> EncounterResult:
    def new_gatekeeper():
        gk = make_gatekeeper(cfg.gatekeeper, case, models.get("gatekeeper"))
        if cfg.mimic_db:
            from clinbench.dx.grounded import GroundedGatekeeper

            gk = GroundedGatekeeper(case, gk, cfg.mimic_db)
        return gk

    if agent is None and cfg.agent == "dxo" and cfg.dxo.mode == "ensemble":
        return run_ensemble(case, models["agent"], new_gatekeeper, prices, cfg.dxo.panels, max_turns=cfg.max_turns)
    if agent is None:
        agent = make_agent(cfg.agent, case, model=models.get("agent"), dxo=cfg.dxo, prices=prices)
    return run_encounter(case, agent, new_gatekeeper(), prices, max_turns=cfg.max_turns)


def run_one(case: Case, cfg: DxConfig, trial: int, out_dir: Path, prices: PriceTable, *, agent=None) -> RunRecord:
    """Play, judge and record one encounter; ``agent`` plays it instead of ``make_agent(cfg.agent)`` (a
    clinician's turns, ``clinbench serve``), recorded under ``cfg.agent`` like any agent's."""
    run_id = run_id_for(case, cfg, trial)
    started = time.monotonic()
    models = _models(cfg)
    status, flag, result, verdict, crash = "ok", None, None, None, None
    try:
        result = _play(case, cfg, models, prices, agent)
        if result.error and result.error_role == "agent":
            status, flag = "agent-failed", result.error
        elif result.error:
            status, flag = "harness-error", f"harness error: {result.error}"
        else:
            verdict = make_judge(cfg.judge, models.get("judge")).score(case.final_diagnosis, result.diagnosis)
    except ModelError as exc:  # the judge
        status, flag = "harness-error", f"harness error: {exc}"
    except Exception as exc:  # noqa: BLE001 - a harness bug must not end the campaign
        status, flag, crash = "harness-error", f"harness error: {type(exc).__name__}: {exc}", traceback.format_exc()
    partial = evidence.new_partial_dir(out_dir, run_id)
    (partial / "prompt.md").write_text(f"{INSTRUCTIONS}\n\nPatient: {case.case_summary}\n", encoding="utf-8")
    if crash:
        (partial / "harness_error.txt").write_text(crash, encoding="utf-8")
    score = {"case_id": case.case_id, "reference": case.final_diagnosis, "status": status, "error": flag,
             "self_judge": cfg.self_judge, "roles": {r: m.report() for r, m in models.items()}}
    if result is not None:
        (partial / "transcript.jsonl").write_text(transcript_jsonl(result), encoding="utf-8")
        evidence.write_json(partial / "ledger.json", {**result.ledger.summary(), "price_table": prices.label})
        score.update(diagnosis=result.diagnosis, forced=result.forced, turns=result.turns, cost=result.cost,
                     sources=result.sources())
    if verdict is not None:
        score.update(judge_score=verdict.score, judge_reason=verdict.reason, correct=verdict.correct)
    evidence.write_json(partial / "roles.json", score["roles"])
    evidence.write_json(partial / evidence.SCORE, score)
    evidence.write_manifest(partial, {"run_id": run_id, "benchmark": "dx", "case_id": case.case_id,
                                      "agent": agent_label(cfg.agent, cfg.dxo), "gatekeeper": cfg.gatekeeper_label(),
                                      "judge": cfg.judge_label(), "trial": trial,
                                      "data": "SYNTHETIC" if case.synthetic else "REAL"})
    final = evidence.publish(partial, out_dir, run_id)
    return RunRecord(
        run_id=run_id, benchmark="dx", task=str(case.case_id), family="dx", gatekeeper=cfg.gatekeeper_label(),
        judge=cfg.judge_label(), agent=agent_label(cfg.agent, cfg.dxo), model=cfg.agent_model(),
        trial=trial, status=status,
        reward=(0.0 if status == "agent-failed" else None) if verdict is None else (1.0 if verdict.score >= CORRECT else 0.0),
        strict=(False if status == "agent-failed" else None) if verdict is None else verdict.score == 5,
        judge_score=None if verdict is None else verdict.score,
        cost=None if result is None else result.cost, error=flag,
        isolated=False, elapsed_seconds=(elapsed := time.monotonic() - started),
        evidence_dir=str(final.relative_to(out_dir)), finished_at=datetime.now(), usage=_usage(models, elapsed),
    )


class Reporter:
    """Progress callbacks of a campaign (``campaign.progress.RichReporter`` fits)."""

    def start(self, total: int, skipped: int) -> None: ...

    def finished(self, record: RunRecord) -> None: ...

    def stop(self) -> None: ...


def run_campaign(cases: list[Case], cfg: DxConfig, out_dir: str | Path, *, prices: PriceTable | None = None,
                 reporter: Reporter | None = None,
                 progress: Callable[[RunRecord], None] | None = None) -> list[RunRecord]:
    """Run every (case, trial) not yet in ``out_dir``'s store; returns the new records."""
    out_dir = Path(out_dir)
    cfg.check()
    if cases and not (cfg.agent in LLM_AGENTS or cfg.agent.startswith("scripted:")):
        make_agent(cfg.agent, cases[0])  # an unknown name fails before the store exists
    store = Store.create(out_dir)
    evidence.clear_leftovers(out_dir)
    done = {r["run_id"]: r["status"] for r in store.runs(benchmark="dx")}
    prices = prices or PriceTable.bundled()
    todo = [(c, t) for c in cases for t in range(1, cfg.trials + 1)
            if run_id_for(c, cfg, t) not in done or (cfg.retry_failed and done[run_id_for(c, cfg, t)] != "ok")]
    reporter = reporter or Reporter()
    reporter.start(len(todo), len(cases) * cfg.trials - len(todo))
    new: list[RunRecord] = []

    def finish(rec: RunRecord) -> None:
        store.record(rec)
        new.append(rec)
        reporter.finished(rec)
        if progress:
            progress(rec)

    try:
        if cfg.jobs <= 1:
            for case, trial in todo:
                finish(run_one(case, cfg, trial, out_dir, prices))
        else:
            with ThreadPoolExecutor(max_workers=cfg.jobs) as pool:
                futures = [pool.submit(run_one, c, cfg, t, out_dir, prices) for c, t in todo]
                for fut in as_completed(futures):
                    finish(fut.result())
    finally:
        reporter.stop()
    return new


# --- re-judging stored encounters -----------------------------------------------------

def rejudge(out_dir: str | Path, judge: str, spec: RoleSpec | None = None, *, allow_self_judge: bool = False,
            cache_dir: Path | None = None, reporter: Reporter | None = None) -> list[RunRecord]:
    """Score every stored encounter of ``out_dir`` again with ``judge`` (new rows; skips done ones)."""
    import json

    out_dir = Path(out_dir)
    if judge not in JUDGES:
        raise ClinbenchError(f"unknown judge {judge!r}: use offline or llm")
    if judge == "llm" and spec is None:
        raise ClinbenchError("the llm judge needs a model: pass --judge-model (and its endpoint)")
    store = Store.open(out_dir)
    rows = store.runs(benchmark="dx")
    done = {r["run_id"] for r in rows}
    todo = []
    for r in rows:
        path = out_dir / (r["evidence_dir"] or "") / evidence.SCORE
        try:
            score = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if "rejudge_of" in score or "diagnosis" not in score or (r["status"] != "ok" and not _judge_failed(r)):
            continue
        todo.append((r, score))
    if not todo:
        raise ClinbenchError(f"no stored encounters to re-judge in {out_dir}")
    cache = ModelCache(cache_dir) if cache_dir else None
    reporter = reporter or Reporter()
    new: list[RunRecord] = []
    todo_new = []
    for r, score in todo:
        self_judge = False
        if spec is not None and r["model"]:
            self_judge = check_self_judge(RoleSpec("agent", r["model"].split(":", 1)[-1],
                                                   r["model"].split(":", 1)[0] if ":" in r["model"] else "openai"),
                                          spec, allow_self_judge)
        label = (judge if spec is None else f"llm:{spec.label}") + ("+self-judge" if self_judge else "") + " (rejudged)"
        run_id = _safe(f"{r['run_id']}~judge-{label}")
        if run_id not in done:
            todo_new.append((r, score, label, run_id))
    reporter.start(len(todo_new), len(todo) - len(todo_new))
    try:
        for r, score, label, run_id in todo_new:
            started = time.monotonic()
            model = RoleModel(spec, cache=cache) if spec is not None else None
            status, flag, verdict = "ok", None, None
            try:
                verdict = make_judge(judge, model).score(score["reference"], score["diagnosis"])
            except ModelError as exc:
                status, flag = "harness-error", f"harness error: {exc}"
            partial = evidence.new_partial_dir(out_dir, run_id)
            out = {"rejudge_of": r["run_id"], "original_evidence": r["evidence_dir"], "case_id": score["case_id"],
                   "reference": score["reference"], "diagnosis": score["diagnosis"], "status": status, "error": flag,
                   "judge": label, "self_judge": "+self-judge" in label,
                   "roles": {"judge": model.report()} if model else {}}
            if verdict is not None:
                out.update(judge_score=verdict.score, judge_reason=verdict.reason, correct=verdict.correct)
            evidence.write_json(partial / evidence.SCORE, out)
            evidence.write_manifest(partial, {"run_id": run_id, "benchmark": "dx", "case_id": score["case_id"],
                                              "rejudge_of": r["run_id"], "judge": label})
            final = evidence.publish(partial, out_dir, run_id)
            rec = RunRecord(
                run_id=run_id, benchmark="dx", task=r["task"], family="dx", gatekeeper=r["gatekeeper"], judge=label,
                agent=r["agent"], model=r["model"], trial=r["trial"], status=status,
                reward=None if verdict is None else (1.0 if verdict.score >= CORRECT else 0.0),
                strict=None if verdict is None else verdict.score == 5,
                judge_score=None if verdict is None else verdict.score, cost=r["cost"], error=flag,
                elapsed_seconds=time.monotonic() - started, evidence_dir=str(final.relative_to(out_dir)),
                finished_at=datetime.now(), usage=model.usage if model else None)
            store.record(rec)
            new.append(rec)
            reporter.finished(rec)
    finally:
        reporter.stop()
    return new


def _judge_failed(row: dict) -> bool:
    return bool(row.get("error")) and row["error"].startswith("harness error: judge")
