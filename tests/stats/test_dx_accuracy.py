"""Diagnosis accuracy (`dx stats`, the report's diagnosis section): the audit's rule, case-level
resampling, naming an agent with a model. Stores of a few runs, written through the store."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clinbench.records import RunRecord
from clinbench.records.store import Store
from clinbench.stats import accuracy


def _store(path, rows):
    """rows: (agent, model, case, trial, reward, publishable, flag_charged)."""
    store = Store.create(path)
    store.record_many([
        RunRecord(run_id=f"{agent}-{case}-{trial}", benchmark="dx", task=case, agent=agent, model=model, trial=trial,
                  reward=reward, judge_score=5 if reward else 1, cost=300.0, publishable=publishable,
                  flag_charged=charged, flag_reason=None if publishable else "flagged")
        for agent, model, case, trial, reward, publishable, charged in rows])
    return path


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True)


def test_dx_stats_follow_the_audit(tmp_path):
    """c1 judged right but charged for the agent's conduct: wrong. c3 flagged (not charged): left out. So 2 runs,
    accuracy 1/2 (before: all 3 runs, 2/3), and both counts are said."""
    d = _store(tmp_path / "c", [("a", "", "c1", 1, 1.0, False, True), ("a", "", "c2", 1, 1.0, True, False),
                                ("a", "", "c3", 1, 0.0, False, False)])
    (s,) = accuracy.summarise(accuracy.dx_runs(d))
    assert (s.runs, s.accuracy, s.mean_judge) == (2, 0.5, 3.0)
    out = json.loads(_cli("dx", "stats", str(d), "--json").stdout)
    assert (out["agents"][0]["runs"], out["agents"][0]["accuracy"]) == (2, 0.5)
    assert (out["flagged_excluded"], out["flagged_charged"]) == (1, 1)
    assert json.loads(_cli("dx", "stats", str(d), "--json", "--include-flagged").stdout)["agents"][0]["runs"] == 3


def test_trials_of_a_case_are_not_independent(tmp_path):
    """x: c1 right 4 times, c2 and c3 wrong 4 times; y right on every run. Resampling whole cases, x's mean is
    0 (8/27), 1/3, 2/3 or 1 (1/27): 95% CI [0, 1] (resampling the 12 runs as independent gave about [0.08, 0.58]).
    x → y pairs 3 cases (not 12 runs): case deltas 0, 1, 1; flipping signs, a mean ≥ 2/3 has chance 2/8, so
    p ≈ 0.25 (the 12 run pairs gave 1/256 ≈ 0.004). One case is nothing to resample: no CI."""
    rows = [(agent, "m", case, t, float(agent == "y" or case == "c1"), True, False)
            for agent in ("x", "y") for case in ("c1", "c2", "c3") for t in range(4)]
    runs = accuracy.dx_runs(_store(tmp_path / "c", rows + [("z", "m", "c1", t, float(t % 2), True, False)
                                                          for t in range(4)]))
    summaries = {s.agent: s for s in accuracy.summarise(runs)}
    assert summaries["x:m"].ci == (0.0, 1.0) and summaries["z:m"].ci is None
    test = accuracy.compare(runs, "x:m", "y:m")
    assert test.pairs == 3 and test.delta == pytest.approx(2 / 3) and test.p_value == pytest.approx(0.25, abs=0.02)


def test_compare_names_agents_with_their_models(tmp_path):
    """An agent with a model is keyed agent:model, colon and all: --compare splits where both sides are agents."""
    d = _store(tmp_path / "c", [(agent, "gpt-4o", case, 1, 1.0, True, False)
                                for agent in ("ed-instant", "ed-workup") for case in ("c1", "c2")])
    out = _cli("dx", "stats", str(d), "--json", "--compare", "ed-instant:gpt-4o:ed-workup:gpt-4o")
    assert json.loads(out.stdout)["comparison"]["agent_b"] == "ed-workup:gpt-4o"
    bad = _cli("dx", "stats", str(d), "--compare", "ed-instant:gpt-4o:nobody")
    assert bad.stderr.strip().startswith("error: --compare 'ed-instant:gpt-4o:nobody' is not BASE:NEW with two of the "
                                         "agents here: ed-instant:gpt-4o, ed-workup:gpt-4o")


def test_stats_of_dx_runs_never_pool_two_judges(tmp_path):
    """The same encounters re-judged by an LLM (all right) beside the offline judge's verdicts (1 of 2 right):
    one row per judge, as `dx stats` keys them, not 4 runs at 0.75."""
    store = Store.create(tmp_path / "c")
    store.record_many([RunRecord(run_id=f"a-{case}{suffix}", benchmark="dx", task=case, agent="a", model="m",
                                 reward=reward, judge=judge)
                       for case, reward0 in (("c1", 1.0), ("c2", 0.0))
                       for suffix, judge, reward in (("", "offline", reward0), ("~judge-llm", "llm:j", 1.0))])
    out = json.loads(_cli("stats", str(tmp_path / "c"), "--benchmark", "dx", "--summary", "--json", "--draws",
                          "100").stdout)
    assert [(r["value"], r["runs"], r["mean"]) for r in out["per_agent"]] == [("a/m", 2, 0.5), ("a/m (judge=llm:j)", 2, 1.0)]


def test_agent_failures_without_a_reward_count_as_wrong(tmp_path):
    """y wrong on c3 and c4 with an older store's status ('error', 'timeout') and no reward: they count 0
    (judge score 1), as `stats --benchmark dx` counts them (before: y 100.0% of 2 runs, x → y delta +0.5)."""
    d = _store(tmp_path / "c", [(agent, "", case, 1, 1.0 if agent == "y" or case == "c1" else 0.0, True, False)
                                for agent in ("x", "y") for case in ("c1", "c2", "c3", "c4")])
    with Store.open(d).connect() as con:
        con.execute("UPDATE runs SET status = CASE WHEN task = 'c3' THEN 'error' ELSE 'timeout' END, reward = NULL, "
                    "judge_score = NULL WHERE agent = 'y' AND task IN ('c3', 'c4')")
    runs = accuracy.dx_runs(d)
    y = {s.agent: s for s in accuracy.summarise(runs)}["y"]
    assert (y.runs, y.scored, y.accuracy, y.mean_judge, y.errors) == (4, 4, 0.5, 3.0, 2)
    test = accuracy.compare(runs, "x", "y")
    assert (test.pairs, test.accuracy_a, test.accuracy_b) == (4, 0.25, 0.5)
    from clinbench.stats.runs import load_runs
    from clinbench.stats.summary import summarise
    agents = {r.value: r.mean for r in summarise(load_runs(d, benchmark="dx"), draws=100).per_agent}
    assert agents["y"] == y.accuracy


def test_an_agent_failure_scores_the_same_whichever_store_wrote_it(tmp_path):
    """x and y right on c1 (judge 5) and failed c2: x's failure as `dx run` writes it (agent-failed, reward 0, no
    judge score), y's as an older store did ('error', no reward). Both are wrong (50.0%), but the mean judge score
    read 5.00 for x, its failure left out, and 3.00 for y, its failure charged judge score 1 (found by a review).
    Now one rule, ``unscored_failure``, for any failure the judge did not score: 3.00 and 3.00."""
    d = _store(tmp_path / "c", [(agent, "", case, 1, float(case == "c1"), True, False)
                                for agent in ("x", "y") for case in ("c1", "c2")])
    with Store.open(d).connect() as con:
        con.execute("UPDATE runs SET status = 'agent-failed', judge_score = NULL WHERE agent = 'x' AND task = 'c2'")
        con.execute("UPDATE runs SET status = 'error', reward = NULL, judge_score = NULL WHERE agent = 'y' AND task = 'c2'")
    summaries = {s.agent: (s.accuracy, s.mean_judge) for s in accuracy.summarise(accuracy.dx_runs(d))}
    assert summaries == {"x": (0.5, 3.0), "y": (0.5, 3.0)}


def test_accuracy_weighs_cases_not_runs(tmp_path):
    """x right on c1's 3 trials, wrong on c2 and c3, whose other trials were harness errors: accuracy is
    the mean of case accuracies, 1/3, as `stats --benchmark dx` and the paired test say (before: 3 of 5
    runs, 60.0%); mean cost too ($100 on c1's runs, $400 on the others: $300, not $220). The CI resamples
    the 3 case means: [0, 1]."""
    store = Store.create(tmp_path / "c")
    store.record_many([
        RunRecord(run_id=f"x-{case}-{t}", benchmark="dx", task=case, agent="x", trial=t,
                  status="harness-error" if case != "c1" and t > 1 else "ok",
                  reward=None if case != "c1" and t > 1 else float(case == "c1"),
                  judge_score=None if case != "c1" and t > 1 else (5 if case == "c1" else 1),
                  cost=100.0 if case == "c1" else 400.0)
        for case in ("c1", "c2", "c3") for t in (1, 2, 3)])
    (s,) = accuracy.summarise(accuracy.dx_runs(tmp_path / "c"))
    assert (s.scored, s.accuracy, s.ci, s.mean_cost, s.mean_judge) == (5, pytest.approx(1 / 3), (0.0, 1.0), 300.0,
                                                                       pytest.approx(7 / 3))
    from clinbench.stats.runs import load_runs
    from clinbench.stats.summary import summarise
    (row,) = summarise(load_runs(tmp_path / "c", benchmark="dx"), draws=100).per_agent
    assert row.mean == pytest.approx(s.accuracy)


def test_dx_summary_calls_test_cost_what_it_is(tmp_path):
    """A dx run's cost is the simulated price of its tests: `stats --benchmark dx --summary` printed it as
    'spent on every attempt: $600.00', as if money."""
    d = _store(tmp_path / "c", [("a", "", case, 1, 1.0, True, False) for case in ("c1", "c2")])
    out = _cli("stats", str(d), "--benchmark", "dx", "--summary", "--draws", "100").stdout
    assert "spent on every attempt" not in out
    assert "simulated test cost of every attempt (not money spent): $600.00" in " ".join(out.split())


def test_dx_stats_and_report_read_evidence_as_untrusted(tmp_path):
    """Three runs' ledger.json: one holds 4 tests, one is a FIFO, one links to a file outside holding 99. `dx stats`
    and the report's diagnosis section waited on the FIFO for ever, and read the link: 51.5 tests a case. Now
    4.0 within 60 s, the others read as no ledger; the report's section is built."""
    import os

    from clinbench.report.dx_section import build_dx

    d = _store(tmp_path / "c", [("a", "", case, 1, 1.0, True, False) for case in ("c1", "c2", "c3")])
    with Store.open(d).connect() as con:
        con.execute("UPDATE runs SET evidence_dir = 'runs/' || task")
    for case in ("c1", "c2", "c3"):
        (d / "runs" / case).mkdir(parents=True)
    (d / "runs" / "c1" / "ledger.json").write_text('{"tests_ordered": 4}')
    os.mkfifo(d / "runs" / "c2" / "ledger.json")
    (tmp_path / "outside.json").write_text('{"tests_ordered": 99, "data": "SYNTHETIC"}')
    (d / "runs" / "c3" / "ledger.json").symlink_to(tmp_path / "outside.json")
    (d / "runs" / "c3" / "manifest.json").symlink_to(tmp_path / "outside.json")
    out = subprocess.run([sys.executable, "-m", "clinbench", "dx", "stats", str(d), "--json"], capture_output=True,
                         text=True, timeout=60)
    assert json.loads(out.stdout)["agents"][0]["mean_tests"] == 4.0
    os.mkfifo(d / "runs" / "c2" / "manifest.json")
    os.mkfifo(d / "runs" / "c2" / "score.json")
    part = build_dx(d)
    assert "Sequential diagnosis on cases" in part.markdown  # not "synthetic": the linked manifest is not read


def test_dx_stats_and_stats_give_one_accuracy_interval(tmp_path):
    """One agent, 5 cases right in 2, 3, 1, 2 and 0 of 3 trials (53.3%): `dx stats` and `stats --benchmark dx
    --summary` both bootstrap the case means (seed 0), but drew 10,000 and 20,000 times: [26.7%, 80.0%] against
    [20.0%, 80.0%] for the same accuracy (found by a review). One count now (resamples.BOOTSTRAP_DRAWS, 20,000):
    [20.0%, 80.0%] in both."""
    from clinbench.stats.resamples import BOOTSTRAP_DRAWS
    from clinbench.stats.runs import load_runs
    from clinbench.stats.summary import summarise

    right = {"c1": 2, "c2": 3, "c3": 1, "c4": 2, "c5": 0}
    d = _store(tmp_path / "c", [("a", "", case, t, float(t <= n), True, False)
                                for case, n in right.items() for t in (1, 2, 3)])
    (s,) = accuracy.summarise(accuracy.dx_runs(d))
    (row,) = summarise(load_runs(d, benchmark="dx")).per_agent
    assert s.accuracy == row.mean == pytest.approx(8 / 15)
    assert s.ci == (row.ci.lo, row.ci.hi) == (pytest.approx(0.2), pytest.approx(0.8)) and BOOTSTRAP_DRAWS == 20000


def test_the_paired_test_reads_the_accuracy_dx_stats_prints(tmp_path):
    """x and y right on 1, 2 and 3 of c1-c3's 10 trials. The summary's accuracy is exactly summed, 0.6/3 =
    0.19999999999999998; the paired test's summed in order, 0.20000000000000004, for the same cases (`dx stats
    --json` printed both). Now one rule (exact_mean) for both."""
    d = _store(tmp_path / "c", [(agent, "", case, t, float(t <= n), True, False)
                                for agent in ("x", "y") for case, n in (("c1", 1), ("c2", 2), ("c3", 3))
                                for t in range(1, 11)])
    runs = accuracy.dx_runs(d)
    summaries = {s.agent: s.accuracy for s in accuracy.summarise(runs)}
    test = accuracy.compare(runs, "x", "y")
    assert (test.accuracy_a, test.accuracy_b, test.delta) == (summaries["x"], summaries["y"], 0.0) == (0.6 / 3, 0.6 / 3, 0.0)


def test_the_reports_agent_failures_are_the_ones_dx_stats_counts(tmp_path):
    """An older store's 'timeout' and 'error' are agent failures, counted wrong by `dx stats` and `stats`; the
    report's diagnosis table said 0 agent failed for them (found by a review). Now 2."""
    from clinbench.report.dx_section import build_dx

    d = _store(tmp_path / "c", [("a", "", case, 1, 1.0, True, False) for case in ("c1", "c2", "c3")])
    with Store.open(d).connect() as con:
        con.execute("UPDATE runs SET status = CASE WHEN task = 'c1' THEN 'timeout' ELSE 'error' END, reward = NULL, "
                    "judge_score = NULL WHERE task IN ('c1', 'c2')")
    row = next(line for line in build_dx(d).markdown.splitlines() if line.startswith("| a |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert (cells[2], cells[-2], cells[-1]) == ("33.3%", "2", "0")  # accuracy, agent failed, harness errors


def test_the_demo_counts_the_correct_runs_it_says(tmp_path):
    """ed-instant right in c1's 3 trials, wrong in c2's 1: the demo printed "2/4 correct" (its 50.0% case-balanced
    accuracy times 4 runs, found by a review); 3 of the 4 runs were right."""
    from clinbench.dx.demo import _summary

    d = _store(tmp_path / "c", [("ed-instant", "", "c1", t, 1.0, True, False) for t in (1, 2, 3)]
               + [("ed-instant", "", "c2", 1, 0.0, True, False)])
    lines = _summary(d, "head")
    assert "offline baseline ed-instant: 3/4 correct" in lines
    assert any(line.startswith("ed-instant: accuracy 50.0%") for line in lines)


def test_stats_of_dx_runs_count_cases_not_families(tmp_path):
    """A diagnosis case has no family: `stats --benchmark dx` said '2 runs of 2 tasks in 0 families'; it now says
    what the runs cover, as a derivation summary names its tasks' families."""
    from clinbench.stats.formatting import scope_text

    d = _store(tmp_path / "c", [("a", "", "c1", 1, 1.0, True, False), ("a", "", "c2", 1, 0.0, True, False)])
    out = _cli("stats", str(d), "--benchmark", "dx", "--summary", "--draws", "100")
    assert out.returncode == 0, out.stderr
    assert "2 runs of 2 cases; source" in out.stdout and "families" not in out.stdout
    assert (scope_text(28, 15, "derive"), scope_text(1, 1, "derive"), scope_text(3, 0, "derive")) == (
        "28 tasks in 15 families", "1 task in 1 family", "3 tasks")


def test_the_line_dx_run_and_rejudge_print_follows_the_audit():
    """(review 50) `dx rejudge` printed 'accuracy 100.0% of 8 scored' over runs of which the audit left one out and
    charged one, where `dx stats` gives 87.5% of 7: the line now applies the same rule."""
    from clinbench.cli.dx import _scored_line

    records = [RunRecord(run_id=f"o-c{i}", benchmark="dx", task=f"c{i}", agent="oracle", trial=0, reward=1.0,
                         judge_score=5, cost=300.0, publishable=i > 1, flag_charged=i == 0,
                         flag_reason=None if i > 1 else "flagged") for i in range(8)]
    (s,) = accuracy.summarise(accuracy.audited([r.to_json() for r in records]))
    assert (s.scored, s.accuracy) == (7, 6 / 7)
    assert _scored_line(records) == ("oracle: accuracy 85.7% of 7 scored, mean cost $300; 1 flagged by the audit "
                                     "(left out), 1 charged by the audit (counted wrong)")
