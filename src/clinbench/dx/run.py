"""Diagnostic encounters as a campaign of the one campaign engine: cases x agents x trials.

A ``DxSpec`` is one run (a case, an agent's settings, a trial); ``execute_encounter`` is its
runner: it plays the encounter, judges the diagnosis and writes the evidence (prompt.md,
transcript.jsonl, ledger.json, roles.json, score.json, manifest.json with the sha256 of each
file and the full record) into a partial folder. ``campaign.run_campaign`` does the rest, as
for derivation: the campaign lock, ``versions.json``, resume (recorded runs are skipped;
``retry_failed`` redoes harness errors, ``retry_agent_failed`` agent failures too), Ctrl-C and SIGTERM (``CampaignInterrupted``), ``jobs``
worker processes or the Ray executor, publishing the evidence and recording the run, and
``clinbench store rebuild`` from the manifests.

A run's record: benchmark 'dx', task = case id, reward 1.0 when the judge gives 4 or more,
strict when it gives 5, ``gatekeeper`` and ``judge`` the two settings that change a dx run's
meaning (a judge that is the agent's own model is marked ``+self-judge``), a failure's reason
in ``error``. The status says whose failure it was: ``agent-failed`` (the agent's model failed
or answered unusably, or its endpoint failed after it had answered, or its diagnosis made the llm
judge's reply unusable while the judge grades the reference: reward 0, counted; see ``grade``) or ``harness-error`` (the gatekeeper, the judge, an endpoint
that never answered, or a bug: no reward, left out of statistics). A failed model
call never loses the run: the transcript and ledger kept so far are written with it.

Model roles (agent, gatekeeper, judge) each have their own ``RoleSpec``; each role's tokens,
requests, cache hits, errors and cost go to roles.json, their sum to the store's usage table.
"""

from __future__ import annotations

import os
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.campaign import CampaignSummary, Reporter, run_campaign
from clinbench.campaign.execute import RunResult, storage_checked
from clinbench.campaign.preflight import check_model
from clinbench.dx.agents import LLM_AGENTS, make_agent
from clinbench.dx.cases import Case
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import INSTRUCTIONS, MAX_TURNS, EncounterResult, run_encounter, transcript_jsonl
from clinbench.dx.gatekeeper import make_gatekeeper
from clinbench.dx.grounded import GroundedGatekeeper
from clinbench.dx.judge import CORRECT, Verdict, make_judge
from clinbench.dx.models import ModelCache, ModelError, RoleModel, RoleSpec, check_self_judge
from clinbench.dx.orchestrator import DxoSettings, run_ensemble
from clinbench.errors import ClinbenchError
from clinbench.records import RunRecord, RunStatus, Usage
from clinbench.agents.llm_clients import one_line

GATEKEEPERS = ("offline", "llm")
JUDGES = ("offline", "llm")


JUDGE_FALLBACK = "graded by the offline judge: the llm judge's reply could not be read"


class UngradableDiagnosis(ClinbenchError):
    """The llm judge grades the reference against itself but not this diagnosis: the diagnosis (its
    words are in the judge's prompt) made the reply unusable. The agent's failure."""


MAX_DIAGNOSIS_CHARS = 2000  # a final diagnosis is a phrase: the 32 demo references are 18-66 characters


def grade(judge: str, model, reference: str, diagnosis: str) -> Verdict:
    """The ``judge``'s verdict on ``diagnosis`` (``dx run`` and ``dx rejudge`` alike).

    A diagnosis longer than ``MAX_DIAGNOSIS_CHARS`` is graded by no judge: ``UngradableDiagnosis``, the
    agent's failure (a 1.45-million-emoji diagnosis was judged wrong by ``dx run``, then made a 17 MB
    score.json that ``dx rejudge`` could not read, which dropped the wrong answer from the re-judged group).

    An llm judge that answered but gave no usable grade, even after its corrective message, is asked once
    more, as a control, to grade the reference against itself. If it can, the diagnosis caused the failure
    (an injected "answer in prose": the agent must not be able to drop its run, nor choose the offline
    judge): ``UngradableDiagnosis``, the agent's failure. If it cannot either, the judge model cannot grade
    (no tool calls) and the offline judge grades this diagnosis, the reason saying so. A judge endpoint that
    fails raises ``ModelError`` (a harness error)."""
    if len(diagnosis) > MAX_DIAGNOSIS_CHARS:
        raise UngradableDiagnosis(f"a diagnosis of {len(diagnosis):,} characters, over the {MAX_DIAGNOSIS_CHARS:,} "
                                  "a final diagnosis may have")
    try:
        return make_judge(judge, model).score(reference, diagnosis)
    except ModelError as exc:
        if exc.role != "judge" or not exc.unusable:
            raise
        failure = exc
    try:
        make_judge(judge, model).score(reference, reference)
    except ModelError as control:
        if control.role != "judge" or not control.unusable:
            raise
        offline = make_judge("offline").score(reference, diagnosis)
        return Verdict(offline.score, f"{JUDGE_FALLBACK} ({one_line(failure, 200)}): {offline.reason}")
    raise UngradableDiagnosis(f"the judge graded the reference but not this diagnosis: {one_line(failure, 300)}")


@dataclass
class DxConfig:
    """One agent's settings in a diagnosis campaign (with the referees it is played and judged by)."""

    agent: str
    gatekeeper: str = "offline"
    judge: str = "offline"
    trials: int = 1
    max_turns: int = MAX_TURNS
    roles: dict[str, RoleSpec] = field(default_factory=dict)  # 'agent' | 'gatekeeper' | 'judge'
    dxo: DxoSettings = field(default_factory=DxoSettings)
    allow_self_judge: bool = False
    cache_dir: Path | None = None
    mimic_db: Path | None = None  # lab orders answered from this database's labevents (grounded)
    agent_answered: bool = False  # the agent's endpoint answered the pre-run check (set by ``preflight``)
    self_judge: bool = field(default=False, init=False)  # set by check(): the judge is the agent's model

    def check(self) -> None:
        """Fail on a bad agent, gatekeeper, judge or role before anything is created."""
        if self.gatekeeper not in GATEKEEPERS:
            raise ClinbenchError(f"unknown gatekeeper {self.gatekeeper!r}: use offline or llm")
        if self.judge not in JUDGES:
            raise ClinbenchError(f"unknown judge {self.judge!r}: use offline or llm")
        if self.mimic_db is not None and not Path(self.mimic_db).is_file():
            raise ClinbenchError(f"no MIMIC-IV database at {self.mimic_db}: pass --mimic-db PATH.duckdb")
        for role, needed in self.used_roles().items():
            if needed and role not in self.roles:
                raise ClinbenchError(f"the {role} needs a model: pass --{role}-model (and its endpoint)")
        self.self_judge = check_self_judge(self.roles.get("agent") if self.agent in LLM_AGENTS else None,
                                           self.roles.get("judge") if self.judge == "llm" else None,
                                           self.allow_self_judge)

    def used_roles(self) -> dict[str, bool]:
        """Which roles talk to a model in this configuration."""
        return {"agent": self.agent in LLM_AGENTS, "gatekeeper": self.gatekeeper == "llm", "judge": self.judge == "llm"}

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


@dataclass(frozen=True, eq=False)
class DxSpec:
    """One encounter of a campaign; two specs are the same run when their ids are."""

    case: Case
    cfg: DxConfig
    trial: int

    @property
    def run_id(self) -> str:
        return run_id_for(self.case, self.cfg, self.trial)

    @property
    def agent(self) -> str:
        return agent_label(self.cfg.agent, self.cfg.dxo)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DxSpec) and other.run_id == self.run_id

    def __hash__(self) -> int:
        return hash(self.run_id)


@dataclass(frozen=True)
class DxCampaignConfig:
    """What every encounter of a campaign shares (picklable: it travels to worker processes and Ray)."""

    out: str
    prices: PriceTable

    def bound(self, store, specs: list[DxSpec]) -> DxCampaignConfig:
        return self  # the cases travel in the specs; nothing to bind

    def lost(self, spec: DxSpec, cause: str) -> RunResult:
        """The record of an encounter whose worker was lost: a harness error, its evidence saying so."""
        partial = evidence.new_partial_dir(Path(self.out), spec.run_id)
        record = _record(spec, RunStatus.HARNESS_ERROR, f"harness error: {cause}", None, None, {}, time.monotonic())
        _seal(partial, spec, record, {"case_id": spec.case.case_id, "status": record.status, "error": record.error})
        return RunResult(record, str(partial))


def _models(cfg: DxConfig) -> dict[str, RoleModel]:
    cache = ModelCache(cfg.cache_dir) if cfg.cache_dir else None
    used = cfg.used_roles()
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
        return GroundedGatekeeper(case, gk, cfg.mimic_db) if cfg.mimic_db else gk

    if agent is None and cfg.agent == "dxo" and cfg.dxo.mode == "ensemble":
        return run_ensemble(case, models["agent"], new_gatekeeper, prices, cfg.dxo.panels, max_turns=cfg.max_turns)
    if agent is None:
        agent = make_agent(cfg.agent, case, model=models.get("agent"), dxo=cfg.dxo, prices=prices)
    return run_encounter(case, agent, new_gatekeeper(), prices, max_turns=cfg.max_turns)


def _unreachable(models: dict[str, RoleModel], agent_answered: bool) -> str | None:
    """An endpoint that could not be reached is the harness's failure for the gatekeeper and the
    judge. The agent's endpoint is the agent: once it has answered (the pre-run check, or a reply in
    this run), its failing is the agent's, or an endpoint could refuse (HTTP 404) the cases it would
    get wrong and have them left out of accuracy; only one that never answered is a setup fault."""
    for role, m in models.items():
        if not m.unreachable or (role == "agent" and (agent_answered or m.usage.requests or m.cache_hits)):
            continue
        return f"harness error: {role} model endpoint unreachable: {m.unreachable}"
    return None


def execute_encounter(spec: DxSpec, config: DxCampaignConfig) -> RunResult:
    """Play, judge and seal one encounter; never raises for a model's or the harness's failure (they
    become the run's status). Raises ``StorageFailure`` when the campaign folder cannot be written."""
    return storage_checked(config.out, _execute, spec, config)


def run_one(case: Case, cfg: DxConfig, trial: int, out_dir: Path, prices: PriceTable, *, agent=None) -> RunRecord:
    """Play, judge and publish one encounter outside a campaign (the caller records it); ``agent`` plays it
    instead of ``make_agent(cfg.agent)`` (a clinician's turns, ``clinbench serve``), recorded under ``cfg.agent``."""
    out_dir = Path(out_dir)
    result = _execute(DxSpec(case, cfg, trial), DxCampaignConfig(str(out_dir), prices), agent)
    evidence.publish(Path(result.partial_dir), out_dir, result.record.run_id)
    return result.record


def _execute(spec: DxSpec, config: DxCampaignConfig, agent=None) -> RunResult:
    case, cfg, prices = spec.case, spec.cfg, config.prices
    started = time.monotonic()
    models = _models(cfg)
    status, error, result, verdict, crash = RunStatus.OK, None, None, None, None
    try:
        result = _play(case, cfg, models, prices, agent)
        if result.error and result.error_role == "agent":
            status, error = RunStatus.AGENT_FAILED, result.error
        elif result.error:
            status, error = RunStatus.HARNESS_ERROR, f"harness error: {result.error}"
        else:
            verdict = grade(cfg.judge, models.get("judge"), case.final_diagnosis, result.diagnosis)
    except UngradableDiagnosis as exc:
        status, error = RunStatus.AGENT_FAILED, str(exc)
    except ModelError as exc:  # the judge's endpoint
        status, error = RunStatus.HARNESS_ERROR, f"harness error: {exc}"
    except Exception as exc:  # noqa: BLE001 - a harness bug must not end the campaign
        status, error, crash = RunStatus.HARNESS_ERROR, f"harness error: {type(exc).__name__}: {exc}", traceback.format_exc()
    if status != RunStatus.OK and (unreachable := _unreachable(models, cfg.agent_answered)):
        status, error = RunStatus.HARNESS_ERROR, unreachable
    partial = evidence.new_partial_dir(Path(config.out), spec.run_id)
    (partial / "prompt.md").write_text(f"{INSTRUCTIONS}\n\nPatient: {case.case_summary}\n", encoding="utf-8")
    if crash:
        (partial / "harness_error.txt").write_text(crash, encoding="utf-8")
    score = {"case_id": case.case_id, "reference": case.final_diagnosis, "status": str(status), "error": error,
             "self_judge": cfg.self_judge, "roles": {r: m.report() for r, m in models.items()}}
    if result is not None:
        (partial / "transcript.jsonl").write_text(transcript_jsonl(result), encoding="utf-8")
        evidence.write_json(partial / "ledger.json", {**result.ledger.summary(), "price_table": prices.label})
        score.update(diagnosis=result.diagnosis, forced=result.forced, turns=result.turns, cost=result.cost,
                     sources=result.sources())
    if verdict is not None:
        score.update(judge_score=verdict.score, judge_reason=verdict.reason, correct=verdict.correct,
                     **({"judge_prompt": verdict.prompt} if verdict.prompt else {}))
    evidence.write_json(partial / "roles.json", score["roles"])
    record = _record(spec, status, error, result, verdict, models, started)
    _seal(partial, spec, record, score)
    return RunResult(record, str(partial))


def _record(spec: DxSpec, status: RunStatus, error: str | None, result: EncounterResult | None, verdict,
            models: dict[str, RoleModel], started: float) -> RunRecord:
    cfg = spec.cfg
    failed = status == RunStatus.AGENT_FAILED
    return RunRecord(
        run_id=spec.run_id, benchmark="dx", task=str(spec.case.case_id), family="dx", agent=spec.agent,
        model=cfg.agent_model(), trial=spec.trial, status=status, gatekeeper=cfg.gatekeeper_label(),
        judge=cfg.judge_label(),
        reward=(0.0 if failed else None) if verdict is None else (1.0 if verdict.score >= CORRECT else 0.0),
        strict=(False if failed else None) if verdict is None else verdict.score == 5,
        judge_score=None if verdict is None else verdict.score,
        cost=None if result is None else result.cost, error=error, isolated=False,
        elapsed_seconds=(elapsed := time.monotonic() - started), evidence_dir=f"{evidence.RUNS_DIR}/{spec.run_id}",
        finished_at=datetime.now(), usage=_usage(models, elapsed),
    )


def _seal(partial: Path, spec: DxSpec, record: RunRecord, score: dict) -> None:
    evidence.write_json(partial / evidence.SCORE, score)
    evidence.write_manifest(partial, {"run_id": record.run_id, "benchmark": "dx", "case_id": spec.case.case_id,
                                      "agent": record.agent, "gatekeeper": record.gatekeeper, "judge": record.judge,
                                      "trial": spec.trial, "status": str(record.status), "error": record.error,
                                      "data": "SYNTHETIC" if spec.case.synthetic else "REAL",
                                      "record": record.to_json()})  # what `clinbench store rebuild` restores


class _Progress(Reporter):
    def __init__(self, inner: Reporter | None, progress: Callable[[RunRecord], None] | None):
        self.inner, self.progress = inner or Reporter(), progress

    def start(self, total: int, skipped: int) -> None:
        self.inner.start(total, skipped)

    def finished(self, record: RunRecord) -> None:
        self.inner.finished(record)
        if self.progress:
            self.progress(record)

    def stop(self) -> None:
        self.inner.stop()


def check_configs(cases: list[Case], configs: list[DxConfig]) -> None:
    """Every agent, referee and role is checked before anything is created."""
    for cfg in configs:
        cfg.check()
        if cases and not (cfg.agent in LLM_AGENTS or cfg.agent.startswith("scripted:")):
            make_agent(cfg.agent, cases[0])  # an unknown name fails before the store exists


def preflight(configs: list[DxConfig]) -> None:
    """One tiny request to each model role's endpoint; ``EndpointError`` (nothing recorded) when one does not
    answer. A config whose agent endpoint answered is marked ``agent_answered``: from then on its failing is the agent's."""
    seen = set()
    for cfg in configs:
        for role, used in cfg.used_roles().items():
            s = cfg.roles.get(role)
            if not used or s is None:
                continue
            if (s.provider, s.model, s.base_url, s.api_key) not in seen:
                key = s.api_key or os.environ.get("ANTHROPIC_API_KEY" if s.provider == "anthropic" else "OPENAI_API_KEY")
                check_model(s.provider, s.model, s.base_url, key, f"the {role} (--{role}-model)")
                seen.add((s.provider, s.model, s.base_url, s.api_key))
            if role == "agent":
                cfg.agent_answered = True


def run_dx_campaign(cases: list[Case], configs: DxConfig | list[DxConfig], out_dir: str | Path, *,
                    prices: PriceTable | None = None, reporter: Reporter | None = None,
                    progress: Callable[[RunRecord], None] | None = None, jobs: int = 1, executor: str = "local",
                    ray_address: str | None = None, retry_failed: bool = False, retry_agent_failed: bool = False,
                    started: Callable[[], object] | None = None) -> CampaignSummary:
    """Run every (agent, case, trial) not yet in ``out_dir``'s store through the campaign engine."""
    configs = [configs] if isinstance(configs, DxConfig) else list(configs)
    check_configs(cases, configs)
    specs = [DxSpec(c, cfg, t) for cfg in configs for c in cases for t in range(1, cfg.trials + 1)]
    config = DxCampaignConfig(str(Path(out_dir).resolve()), prices or PriceTable.bundled())
    return run_campaign(specs, config, runner=execute_encounter, jobs=jobs, executor=executor,
                        ray_address=ray_address, reporter=_Progress(reporter, progress), retry_failed=retry_failed,
                        retry_agent_failed=retry_agent_failed,
                        started=started, allow_mixed=True)


def run_dx(cases: list[Case], configs: DxConfig | list[DxConfig], out_dir: str | Path, **kw) -> list[RunRecord]:
    """``run_dx_campaign``, returning the runs it recorded."""
    return run_dx_campaign(cases, configs, out_dir, **kw).records
