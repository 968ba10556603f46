"""Re-judging stored encounters (``clinbench dx rejudge``): each becomes a new row
(``<run_id>~judge-<label>``) with its own evidence folder pointing at the original, so sealed
evidence is never rewritten. Done under the campaign's lock, like a campaign."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from clinbench.campaign import evidence
from clinbench.campaign.campaign import Reporter, campaign_lock
from clinbench.dx.judge import CORRECT
from clinbench.dx.models import ModelCache, ModelError, RoleModel, RoleSpec, check_self_judge
from clinbench.dx.run import JUDGES, UngradableDiagnosis, _safe, grade
from clinbench.errors import ClinbenchError
from clinbench.records import RunRecord, RunStatus, normalise_status
from clinbench.records.store import Store


def rejudge(out_dir: str | Path, judge: str, spec: RoleSpec | None = None, *, allow_self_judge: bool = False,
            cache_dir: Path | None = None, reporter: Reporter | None = None) -> list[RunRecord]:
    """Score every stored encounter of ``out_dir`` again with ``judge`` (new rows; skips done ones)."""
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
        if "rejudge_of" in score:
            continue
        if _agent_failed(r) and not _judge_could_not_grade(r):
            todo.append((r, score))  # the agent's failure stays its own: carried over, judged by no one
            continue
        if "diagnosis" not in score or (r["status"] != "ok" and not _judge_failed(r)
                                        and not _judge_could_not_grade(r)):
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
    with campaign_lock(out_dir):
        try:
            _judge_all(todo_new, out_dir, store, judge, spec, cache, reporter, new)
        finally:
            reporter.stop()
    return new


def _judge_all(todo_new, out_dir: Path, store: Store, judge: str, spec: RoleSpec | None, cache, reporter: Reporter,
               new: list[RunRecord]) -> None:
    for r, score, label, run_id in todo_new:
        started = time.monotonic()
        model = RoleModel(spec, cache=cache) if spec is not None else None
        status, flag, verdict = RunStatus.OK, None, None
        if _agent_failed(r) and not _judge_could_not_grade(r):
            # the agent gave no gradable answer: it is wrong under any judge (reward 0), asked of none
            status, flag = RunStatus.AGENT_FAILED, r["error"] or "agent failed"
        else:
            try:  # an unusable reply of an llm judge: as in dx run (dx.run.grade)
                verdict = grade(judge, model, score["reference"], score["diagnosis"])
            except UngradableDiagnosis as exc:
                status, flag = RunStatus.AGENT_FAILED, str(exc)
            except ModelError as exc:
                status, flag = RunStatus.HARNESS_ERROR, f"harness error: {exc}"
        failed = status == RunStatus.AGENT_FAILED
        partial = evidence.new_partial_dir(out_dir, run_id)
        out = {"rejudge_of": r["run_id"], "original_evidence": r["evidence_dir"], "case_id": score["case_id"],
               "reference": score["reference"], "diagnosis": score.get("diagnosis"), "status": str(status), "error": flag,
               "judge": label, "self_judge": "+self-judge" in label,
               "roles": {"judge": model.report()} if model else {}}
        if verdict is not None:
            out.update(judge_score=verdict.score, judge_reason=verdict.reason, correct=verdict.correct)
        evidence.write_json(partial / evidence.SCORE, out)
        rec = RunRecord(
            run_id=run_id, benchmark="dx", task=r["task"], family="dx", gatekeeper=r["gatekeeper"], judge=label,
            agent=r["agent"], model=r["model"], trial=r["trial"], status=status,
            reward=(0.0 if failed else None) if verdict is None else (1.0 if verdict.score >= CORRECT else 0.0),
            strict=(False if failed else None) if verdict is None else verdict.score == 5,
            judge_score=None if verdict is None else verdict.score, cost=r["cost"], error=flag,
            elapsed_seconds=time.monotonic() - started, evidence_dir=f"{evidence.RUNS_DIR}/{run_id}",
            finished_at=datetime.now(), usage=model.usage if model else None,
            # the audit's verdict on the encounter holds whatever judge scores it
            publishable=r.get("publishable") is not False, flag_reason=r.get("flag_reason"),
            flag_charged=bool(r.get("flag_charged") or False))
        evidence.write_manifest(partial, {"run_id": run_id, "benchmark": "dx", "case_id": score["case_id"],
                                          "rejudge_of": r["run_id"], "judge": label, "record": rec.to_json()})
        evidence.publish(partial, out_dir, run_id)
        store.record(rec)
        new.append(rec)
        reporter.finished(rec)


def _agent_failed(row: dict) -> bool:
    """An agent failure, the older stores' ``error`` and ``timeout`` included."""
    try:
        return normalise_status(row["status"]) == RunStatus.AGENT_FAILED
    except ValueError:
        return False


def _judge_could_not_grade(row: dict) -> bool:
    """An agent failure the stored judge declared (no usable grade): another judge may grade it."""
    return bool(row.get("error")) and row["error"].startswith("the judge could not grade")


def _judge_failed(row: dict) -> bool:
    return bool(row.get("error")) and row["error"].startswith("harness error: judge")
