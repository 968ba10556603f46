"""Running diagnostic encounters as a campaign: cases x agent x trials -> store + evidence.

Each run (one case, one agent, one trial) plays an encounter, judges the diagnosis and
writes its evidence to ``DIR/runs/<run_id>/`` (prompt.md, transcript.jsonl, ledger.json,
score.json, manifest.json with sha256 of each file) through the campaign's evidence
module, then records a row in ``DIR/results.duckdb`` (benchmark 'dx', task = case id,
reward 1.0 when the judge gives 4 or more, strict when it gives 5; ``condition`` holds the
gatekeeper kind and ``schema`` the judge kind, the two settings that change a dx run's
meaning). Runs already in the store are skipped, so rerunning the command resumes a
killed campaign.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.store import RunRecord, Store, Usage
from clinbench.dx.agents import make_agent
from clinbench.dx.cases import Case
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import INSTRUCTIONS, MAX_TURNS, run_encounter, transcript_jsonl
from clinbench.dx.gatekeeper import make_gatekeeper
from clinbench.dx.judge import CORRECT, make_judge
from clinbench.errors import ClinbenchError


@dataclass
class DxConfig:
    agent: str
    gatekeeper: str = "offline"
    judge: str = "offline"
    trials: int = 1
    max_turns: int = MAX_TURNS
    model: str = ""  # for the llm agent / gatekeeper / judge
    base_url: str | None = None
    api_key: str | None = None


def agent_label(spec: str) -> str:
    """'scripted:/path/to/file.txt' -> 'scripted-file'; others unchanged."""
    if spec.startswith("scripted:"):
        return "scripted-" + Path(spec.split(":", 1)[1]).stem
    return spec


def run_id_for(case: Case, cfg: DxConfig, trial: int) -> str:
    raw = f"dx-{agent_label(cfg.agent)}-{cfg.model or 'none'}-{cfg.gatekeeper}-{cfg.judge}-case{case.case_id}-t{trial}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)


def _chat(cfg: DxConfig):
    from clinbench.dx.llm import JsonChat

    return JsonChat.from_env(cfg.model or None, cfg.base_url, cfg.api_key)


def run_one(case: Case, cfg: DxConfig, trial: int, out_dir: Path, prices: PriceTable) -> RunRecord:
    run_id = run_id_for(case, cfg, trial)
    started = time.monotonic()
    chat = _chat(cfg) if cfg.agent in ("llm", "dxo") or "llm" in (cfg.gatekeeper, cfg.judge) else None
    agent = make_agent(cfg.agent, case, chat=chat)
    gk = make_gatekeeper(cfg.gatekeeper, case, chat=chat)
    judge = make_judge(cfg.judge, chat=chat)
    status, flag = "ok", None
    try:
        result = run_encounter(case, agent, gk, prices, max_turns=cfg.max_turns)
        verdict = judge.score(case.final_diagnosis, result.diagnosis)
    except ClinbenchError as exc:
        status, flag, result, verdict = "error", str(exc), None, None
    partial = evidence.new_partial_dir(out_dir, run_id)
    (partial / "prompt.md").write_text(f"{INSTRUCTIONS}\n\nPatient: {case.case_summary}\n", encoding="utf-8")
    score = {"case_id": case.case_id, "reference": case.final_diagnosis, "status": status, "error": flag}
    if result is not None and verdict is not None:
        (partial / "transcript.jsonl").write_text(transcript_jsonl(result), encoding="utf-8")
        evidence.write_json(partial / "ledger.json", {**result.ledger.summary(), "price_table": prices.label})
        score.update(diagnosis=result.diagnosis, forced=result.forced, turns=result.turns,
                     judge_score=verdict.score, judge_reason=verdict.reason, correct=verdict.correct,
                     cost=result.cost, sources=result.sources())
    evidence.write_json(partial / evidence.SCORE, score)
    evidence.write_manifest(partial, {"run_id": run_id, "benchmark": "dx", "case_id": case.case_id,
                                      "agent": cfg.agent, "gatekeeper": cfg.gatekeeper, "judge": cfg.judge,
                                      "trial": trial, "data": "SYNTHETIC" if case.synthetic else "REAL"})
    final = evidence.publish(partial, out_dir, run_id)
    usage = None
    if chat is not None:
        usage = Usage(chat.usage["input_tokens"], chat.usage["output_tokens"], chat.usage["requests"])
    return RunRecord(
        run_id=run_id, benchmark="dx", task=str(case.case_id), family="dx", condition=cfg.gatekeeper,
        schema=cfg.judge, agent=agent_label(cfg.agent), model=cfg.model or getattr(agent, "model", ""),
        trial=trial, status=status,
        reward=None if verdict is None else (1.0 if verdict.score >= CORRECT else 0.0),
        strict=None if verdict is None else verdict.score == 5,
        judge_score=None if verdict is None else verdict.score,
        cost=None if result is None else result.cost, flag_reason=flag,
        isolated=False, elapsed_seconds=time.monotonic() - started,
        evidence_dir=str(final.relative_to(out_dir)), finished_at=datetime.now(), usage=usage,
    )


def run_campaign(cases: list[Case], cfg: DxConfig, out_dir: str | Path, *, prices: PriceTable | None = None,
                 progress: Callable[[RunRecord], None] | None = None) -> list[RunRecord]:
    """Run every (case, trial) not yet in ``out_dir``'s store; returns the new records."""
    out_dir = Path(out_dir)
    if cases:  # fail on a bad agent, gatekeeper or judge name before creating anything
        make_agent(cfg.agent, cases[0], chat=_chat(cfg) if cfg.agent in ("llm", "dxo") else None)
        for role, kind in (("gatekeeper", cfg.gatekeeper), ("judge", cfg.judge)):
            if kind not in ("offline", "llm"):
                raise ClinbenchError(f"unknown {role} {kind!r}: use offline or llm")
    store = Store.create(out_dir)
    evidence.clear_leftovers(out_dir)
    done = store.run_ids()
    prices = prices or PriceTable.bundled()
    new: list[RunRecord] = []
    for case in cases:
        for trial in range(1, cfg.trials + 1):
            if run_id_for(case, cfg, trial) in done:
                continue
            rec = run_one(case, cfg, trial, out_dir, prices)
            store.record(rec)
            new.append(rec)
            if progress:
                progress(rec)
    return new

