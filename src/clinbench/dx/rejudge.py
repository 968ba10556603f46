"""Re-judging stored encounters (``clinbench dx rejudge``): each becomes a new row
(``<run_id>~judge-<label>``) with its own evidence folder pointing at the original, so sealed
evidence is never rewritten. Done under the campaign's lock, like a campaign.

The re-judged group holds the runs the original holds: an agent's failure is carried over as
agent-failed with no verdict (the statistics score it as every unscored failure,
``clinbench.stats.runs.unscored_failure``), whether or not its evidence can be read; an answered
encounter whose score.json cannot be read (missing, not JSON, over the size cap, a FIFO, a symbolic
link) is recorded as a harness error saying why, never skipped. Evidence is read as untrusted
(``clinbench.untrusted.read_json``)."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from clinbench import untrusted
from clinbench.agents.llm_clients import one_line
from clinbench.campaign import evidence
from clinbench.campaign.campaign import Reporter, campaign_lock
from clinbench.dx.judge import CORRECT
from clinbench.dx.models import ModelCache, ModelError, RoleModel, RoleSpec, check_self_judge
from clinbench.dx.run import JUDGES, UngradableDiagnosis, _safe, grade
from clinbench.errors import ClinbenchError
from clinbench.records import RunRecord, RunStatus, normalise_status
from clinbench.records.store import Store

REJUDGED = " (rejudged)"  # the end of a re-judged row's judge label
CARRY, GRADE = "carry", "grade"  # what a re-judge does with a stored encounter (else: why it cannot)


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
    todo = []  # (row, its score.json, CARRY / GRADE / why it cannot be graded: a harness error)
    for r in rows:
        if (r["judge"] or "").endswith(REJUDGED):
            continue
        score, unreadable = _read_score(out_dir, r)
        if "rejudge_of" in score:
            continue
        gradable = isinstance(score.get("reference"), str) and isinstance(score.get("diagnosis"), str)
        if _agent_failed(r) and not (_judge_could_not_grade(r) and gradable):
            todo.append((r, score, CARRY))  # the agent's failure stays its own: carried over, judged by no one
        elif not gradable:
            if r["status"] == RunStatus.OK:  # answered, but its diagnosis cannot be read: said, never dropped
                todo.append((r, score, unreadable or f"{evidence.SCORE} holds no diagnosis and reference to judge"))
        elif r["status"] == RunStatus.OK or _judge_failed(r) or _judge_could_not_grade(r):
            todo.append((r, score, GRADE))
    if not todo:
        raise ClinbenchError(f"no stored encounters to re-judge in {out_dir}")
    cache = ModelCache(cache_dir) if cache_dir else None
    reporter = reporter or Reporter()
    new: list[RunRecord] = []
    todo_new = []
    for r, score, action in todo:
        self_judge = False
        if spec is not None and r["model"]:
            self_judge = check_self_judge(RoleSpec("agent", r["model"].split(":", 1)[-1],
                                                   r["model"].split(":", 1)[0] if ":" in r["model"] else "openai"),
                                          spec, allow_self_judge)
        label = (judge if spec is None else f"llm:{spec.label}") + ("+self-judge" if self_judge else "") + REJUDGED
        run_id = _safe(f"{r['run_id']}~judge-{label}")
        if run_id not in done:
            todo_new.append((r, score, action, label, run_id))
    reporter.start(len(todo_new), len(todo) - len(todo_new))
    with campaign_lock(out_dir):
        try:
            _judge_all(todo_new, out_dir, store, judge, spec, cache, reporter, new)
        finally:
            reporter.stop()
    return new


def _judge_all(todo_new, out_dir: Path, store: Store, judge: str, spec: RoleSpec | None, cache, reporter: Reporter,
               new: list[RunRecord]) -> None:
    for r, score, action, label, run_id in todo_new:
        started = time.monotonic()
        model = RoleModel(spec, cache=cache) if spec is not None else None
        status, flag, verdict = RunStatus.OK, None, None
        if action == CARRY:
            # the agent gave no gradable answer (or none can be read): wrong under any judge, asked of none
            status, flag = RunStatus.AGENT_FAILED, r["error"] or "agent failed"
        elif action != GRADE:
            status, flag = RunStatus.HARNESS_ERROR, f"harness error: the encounter's {action}"
        else:
            try:  # an unusable reply of an llm judge: as in dx run (dx.run.grade)
                verdict = grade(judge, model, score["reference"], score["diagnosis"])
            except UngradableDiagnosis as exc:
                status, flag = RunStatus.AGENT_FAILED, str(exc)
            except ModelError as exc:
                status, flag = RunStatus.HARNESS_ERROR, f"harness error: {exc}"
        failed = status == RunStatus.AGENT_FAILED
        partial = evidence.new_partial_dir(out_dir, run_id)
        case_id = score.get("case_id", r["task"])
        out = {"rejudge_of": r["run_id"], "original_evidence": r["evidence_dir"], "case_id": case_id,
               "reference": score.get("reference"), "diagnosis": score.get("diagnosis"), "status": str(status), "error": flag,
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
        evidence.write_manifest(partial, {"run_id": run_id, "benchmark": "dx", "case_id": case_id,
                                          "rejudge_of": r["run_id"], "judge": label, "record": rec.to_json()})
        evidence.publish(partial, out_dir, run_id)
        store.record(rec)
        new.append(rec)
        reporter.finished(rec)


def _read_score(out_dir: Path, row: dict) -> tuple[dict, str | None]:
    """The run's score.json as a dict ({} when it cannot be read or is no JSON object), and why it cannot
    be read (None when it can). The folder is the store's record of the run, inside the campaign folder."""
    folder = Path(row["evidence_dir"] or "")
    if not row["evidence_dir"] or folder.is_absolute() or ".." in folder.parts:
        return {}, f"evidence folder {row['evidence_dir']!r} is not a folder of the campaign"
    try:
        score = untrusted.read_json(out_dir / folder / evidence.SCORE)
    except OSError as exc:
        return {}, f"{evidence.SCORE} cannot be read ({exc.strerror or exc})"
    except ValueError as exc:  # json.JSONDecodeError, UntrustedJSONError
        return {}, f"{evidence.SCORE} is not readable JSON ({one_line(exc, 200)})"
    if not isinstance(score, dict):
        return {}, f"{evidence.SCORE} is not a JSON object"
    return score, None


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
