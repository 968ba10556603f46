"""The paired comparison on a 3-task, 2-family example worked by hand.

Runs (two per task and condition, models m1 then m2; reward, strict):

    task                 family  no-skill (A)          with-skill (B)        task delta
    mimic-sofa-24h       sofa    0.5 F, 0.7 F → 0.6    0.8 T, 1.0 T → 0.9    +0.3
    mimic-sofa-24h-raw   sofa    0.4 F, 0.6 F → 0.5    0.6 T, 0.6 F → 0.6    +0.1
    mimic-meld-24h       meld    0.9 T, 0.7 F → 0.8    0.6 F, 0.8 F → 0.7    −0.1

Task-balanced means: A = (0.6 + 0.5 + 0.8)/3 = 0.6333, B = (0.9 + 0.6 + 0.7)/3 = 0.7333;
delta = (0.3 + 0.1 − 0.1)/3 = 0.1; 2 of 3 tasks improve; strict passes 1/6 vs 3/6.
Families: sofa mean delta 0.2, meld −0.1; family-balanced delta 0.05.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pytest

from clinbench.derive.catalogue import task_families
from clinbench.stats.analysis import analyse
from clinbench.stats.compare import compare
from clinbench.stats.groups import GroupPair, parse_compare
from clinbench.stats.formatting import strict_text
from clinbench.stats.errors import StatsError
from clinbench.stats.runs import load_runs

from stats_fixtures import write_hand_csv, write_hand_store


def test_point_estimates(hand_csv):
    c = analyse(hand_csv, "no-skill:with-skill", families=task_families())
    assert c.mean_a == pytest.approx(1.9 / 3)
    assert c.mean_b == pytest.approx(2.2 / 3)
    assert c.delta == pytest.approx(0.1)
    assert (c.improving, c.tasks, c.families) == (2, 3, 2)
    assert (c.strict_a.passed, c.strict_a.runs, c.strict_b.passed, c.strict_b.runs) == (1, 6, 3, 6)
    fam = {r.family: r for r in c.per_family}
    assert fam["sofa"].delta == pytest.approx(0.2) and fam["sofa"].tasks == 2
    assert fam["meld"].delta == pytest.approx(-0.1) and fam["meld"].improving == 0
    assert c.family_balanced_delta == pytest.approx(0.05)


def test_task_cluster_ci_matches_enumeration(hand_csv):
    """Resampling 3 deltas from {+0.3, +0.1, −0.1}: 27 equally likely triples. Their sums (in
    0.1s) and counts: 9:1, 7:3, 5:6, 3:7, 1:6, −1:3, −3:1, so the mean's CDF is
    −0.1: 1/27 = .037, −1/30: 4/27 = .148, 1/30: .370, 0.1: .630, 1/6: .852, 7/30: .963, 0.3: 1.
    An 80% interval takes the 10% and 90% quantiles: 10% falls in (.037, .148] → −1/30 and
    90% in (.852, .963] → 7/30. A 95% interval is the extremes: [−0.1, 0.3]."""
    runs = load_runs(hand_csv)
    c80 = compare(runs, "no-skill", "with-skill", level=0.8)
    assert c80.ci_task.lo == pytest.approx(-1 / 30) and c80.ci_task.hi == pytest.approx(7 / 30)
    c95 = compare(runs, "no-skill", "with-skill")
    assert c95.ci_task.lo == pytest.approx(-0.1) and c95.ci_task.hi == pytest.approx(0.3)


def test_family_cis_match_enumeration(hand_csv):
    """Family-cluster: draw 2 families from sofa (deltas sum 0.4, 2 tasks) and meld (−0.1, 1 task):
    sofa+sofa → 0.8/4 = 0.2 (1/4), sofa+meld → 0.3/3 = 0.1 (1/2), meld+meld → −0.2/2 = −0.1 (1/4).
    Family-balanced: draw 2 family means from {0.2, −0.1}: 0.2 (1/4), 0.05 (1/2), −0.1 (1/4).
    So both 95% intervals are [−0.1, 0.2]; the 40% intervals (30%/70% quantiles, inside the
    1/2 mass) are [0.1, 0.1] and [0.05, 0.05]."""
    runs = load_runs(hand_csv)
    c = compare(runs, "no-skill", "with-skill", families=task_families())
    assert (c.ci_family.lo, c.ci_family.hi) == pytest.approx((-0.1, 0.2))
    assert (c.ci_family_balanced.lo, c.ci_family_balanced.hi) == pytest.approx((-0.1, 0.2))
    c40 = compare(runs, "no-skill", "with-skill", level=0.4, families=task_families())
    assert (c40.ci_family.lo, c40.ci_family.hi) == pytest.approx((0.1, 0.1))
    assert (c40.ci_family_balanced.lo, c40.ci_family_balanced.hi) == pytest.approx((0.05, 0.05))


def test_sign_flip_p_matches_enumeration(hand_csv):
    """Flipping the signs of (+0.3, +0.1, −0.1) gives sums ±0.3, ±0.5, ±0.1, ±0.3: 6 of 8 reach
    |sum| ≥ 0.3, so p = 0.75 (Monte-Carlo s.e. 0.001 at 200,000 draws)."""
    c = analyse(hand_csv, "no-skill:with-skill")
    assert c.sign_flip_p == pytest.approx(0.75, abs=0.005)


def test_per_task_ci_resamples_each_cells_trials(hand_csv, tmp_path):
    """The hand runs have one trial per cell (model) and side: nothing to resample, no per-task CI (the
    runs pooled across models gave [0.2, 0.4] at 50%). A task with cells m1 (A {0.5, 0.7}, B {0.8, 1.0})
    and m2 (A {0.2}, B {0.2}): m1's B − A is 0.1…0.5 with weights 1,4,6,4,1 (of 16), m2's 0, the task
    delta their mean, 0.05…0.25; the 50% interval (25%/75% quantiles) is [0.1, 0.2]."""
    c = compare(load_runs(hand_csv), "no-skill", "with-skill", level=0.5)
    row = next(r for r in c.per_task if r.task == "mimic-sofa-24h")
    assert row.ci is None and (row.runs_a, row.runs_b, row.delta) == (2, 2, pytest.approx(0.3))
    assert [r.task for r in c.per_task] == sorted(["mimic-sofa-24h", "mimic-sofa-24h-raw", "mimic-meld-24h"])
    path = tmp_path / "cells.csv"
    path.write_text("task,condition,model,trial,reward\n" + "".join(
        f"mimic-sofa-24h,{cond},{model},{t},{r}\n" for cond, model, rewards in (
            ("no-skill", "m1", (0.5, 0.7)), ("with-skill", "m1", (0.8, 1.0)),
            ("no-skill", "m2", (0.2,)), ("with-skill", "m2", (0.2,))) for t, r in enumerate(rewards)))
    (row,) = compare(load_runs(path), "no-skill", "with-skill", level=0.5, draws=200, permutation_draws=200).per_task
    assert row.delta == pytest.approx(0.15) and (row.ci.lo, row.ci.hi) == pytest.approx((0.1, 0.2))


def test_strict_and_per_task_ci_pair_within_cells(tmp_path):
    """Per task, reference (reward 1, strict) ran 1 no-skill and 3 with-skill trials, empty (0) the reverse:
    every cell's delta is 0. Strict is a cell-balanced share, 50.0% on both sides (the pooled runs gave
    3/12 -> 9/12), printed as such; each task's CI resamples trials within cells: [0, 0] (pooled: [0, 1])."""
    path = tmp_path / "trials.csv"
    rows = ["task,condition,agent,model,trial,reward,strict"]
    for task in ("mimic-meld-24h", "mimic-gcs-24h-raw", "mimic-charlson-raw"):
        for cond, n_ref, n_empty in (("no-skill", 1, 3), ("with-skill", 3, 1)):
            rows += [f"{task},{cond},reference,m,{k},1.0,True" for k in range(n_ref)]
            rows += [f"{task},{cond},empty,m,{k},0.0,False" for k in range(n_empty)]
    path.write_text("\n".join(rows) + "\n")
    c = compare(load_runs(path), "no-skill", "with-skill", draws=200, permutation_draws=200, task_draws=200)
    assert c.delta == 0.0
    assert (c.strict_a.passed, c.strict_a.runs, c.strict_a.share) == (3, 12, 0.5)
    assert (c.strict_b.passed, c.strict_b.runs, c.strict_b.share) == (9, 12, 0.5)
    assert strict_text(c.strict_a) == "50.0% cell-balanced (3/12 runs)"
    assert all((t.delta, t.ci.lo, t.ci.hi) == (0.0, 0.0, 0.0) for t in c.per_task)


def test_secondary_metrics(hand_csv):
    """key F1 task means: A 1, 1, 1; B 1, 1, 0.6 → delta −0.4/3.
    ordered nMAE (empty cells skipped): A sofa 0.2 (one value), raw 0.1, meld none → meld unpaired;
    B sofa 0.0, raw 0.2 → deltas −0.2, +0.1 over 2 tasks → −0.05."""
    c = analyse(hand_csv, "no-skill:with-skill")
    assert c.key_f1.delta == pytest.approx(-0.4 / 3) and c.key_f1.n_tasks == 3
    assert c.ordered_value_nmae.n_tasks == 2
    assert c.ordered_value_nmae.delta == pytest.approx(-0.05)
    assert c.ordered_value_nmae.mean_a == pytest.approx(0.15)


def test_by_model(hand_csv):
    """m1: A (0.5, 0.4, 0.9), B (0.8, 0.6, 0.6) → deltas 0.3, 0.2, −0.3, mean 0.2/3, 2 improving.
    m2: A (0.7, 0.6, 0.7), B (1.0, 0.6, 0.8) → deltas 0.3, 0.0, 0.1, mean 0.4/3, 2 improving (0 is not)."""
    c = analyse(hand_csv, "no-skill:with-skill", by="model")
    rows = {g.value: g for g in c.groups}
    assert rows["m1"].delta == pytest.approx(0.2 / 3) and rows["m1"].improving == 2
    assert rows["m2"].delta == pytest.approx(0.4 / 3) and rows["m2"].improving == 2
    assert (rows["m1"].strict_a.passed, rows["m1"].strict_b.passed) == (1, 2)


@pytest.mark.slow
def test_flagged_runs_excluded_unless_asked(tmp_path):
    """A flagged no-skill run of mimic-sofa-24h (codex/m1) with reward 0: excluded, nothing changes; included,
    that task's m1 cell under A is (0.5 + 0)/2 = 0.25, its A mean (0.25 + 0.7)/2 = 0.475 and its delta
    0.425, so delta = (0.425+0.1−0.1)/3."""
    store = write_hand_store(tmp_path / "campaign")
    kept = analyse(store, "no-skill:with-skill")
    assert kept.delta == pytest.approx(0.1) and kept.flagged_excluded == 1 and kept.runs_a == 6
    allr = analyse(store, "no-skill:with-skill", include_flagged=True)
    assert allr.delta == pytest.approx(0.425 / 3) and allr.runs_a == 7
    assert allr.strict_a.runs == 7


def test_a_run_flagged_for_its_agents_conduct_counts_as_0_never_excluded(tmp_path):
    """An agent that peeks at the reference (or floods its log, writes outside its workspace...) in a run it
    would fail must not take that run out of the numbers: flagged and charged, the no-skill sofa run stored with
    reward 1.0 counts as 0, as a failure, so that task's codex/m1 cell under A is (0.5 + 0)/2, its A mean
    (0.25 + 0.7)/2 = 0.475 and delta = (0.425+0.1−0.1)/3.
    Before, it was left out like any flagged run, and the condition's mean rose by misbehaving."""
    store = write_hand_store(tmp_path / "campaign", flagged=False)
    with duckdb.connect(str(store / "results.duckdb")) as con:
        con.execute("INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, reward, "
                    "strict, publishable, flag_reason, flag_charged) VALUES ('x-peeked', 'derive', 'mimic-sofa-24h', "
                    "'no-skill', 'native', 'codex', 'm1', 2, 'ok', 1.0, TRUE, FALSE, 'transcript mentions target_sofa_24h', TRUE)")
    charged = analyse(store, "no-skill:with-skill")
    assert charged.delta == pytest.approx(0.425 / 3) and charged.runs_a == 7 and charged.strict_a.runs == 7
    assert (charged.flagged_excluded, charged.flagged_charged) == (0, 1)
    as_stored = analyse(store, "no-skill:with-skill", include_flagged=True)  # asked for: as recorded
    assert as_stored.runs_a == 7 and as_stored.flagged_charged == 0 and as_stored.delta < charged.delta


def test_store_and_csv_agree(tmp_path, hand_csv):
    store = write_hand_store(tmp_path / "campaign")
    a = analyse(store, "no-skill:with-skill").to_dict()
    b = analyse(hand_csv, "no-skill:with-skill").to_dict()
    for d in (a, b):
        d.pop("source"), d.pop("flagged_excluded"), d.pop("flagged_charged")
    assert a == b


def test_missing_reward_counts_as_zero(tmp_path):
    path = write_hand_csv(tmp_path / "r.csv", extra=[dict(task="mimic-meld-24h", condition="with-skill", model="m2", trial=2,
                                                         reward="", strict="", publishable=True, schema="native")])
    c = analyse(path, "no-skill:with-skill")
    # meld B: m1 0.6, m2 (0.8 + 0)/2 = 0.4 → 0.5, delta −0.3; headline (0.3 + 0.1 − 0.3)/3
    assert c.delta == pytest.approx(0.1 / 3)
    assert c.missing_reward == 1 and c.strict_b.runs == 7 and c.strict_b.passed == 3


def test_passed_total_tests_gives_strict(tmp_path):
    path = tmp_path / "pt.csv"
    path.write_text(
        "task,condition,model,trial,reward,passed,total_tests\n"
        "mimic-sofa-24h,no-skill,m,1,0.5,3,4\n"
        "mimic-sofa-24h,with-skill,m,1,1.0,4,4\n"
        "mimic-sofa-24h,with-skill,m,2,0.9,4,5\n"
    )
    c = analyse(path, "no-skill:with-skill")
    assert (c.strict_a.passed, c.strict_a.runs, c.strict_b.passed, c.strict_b.runs) == (0, 1, 1, 2)
    assert c.ci_family is None  # one family: no family resampling to speak of


def test_unknown_task_is_named(tmp_path):
    path = write_hand_csv(tmp_path / "u.csv", extra=[dict(task="my-own-task", condition="no-skill", model="m", trial=1, reward=1,
                                                         publishable=True, schema="native"),
                                                    dict(task="my-own-task", condition="with-skill", model="m", trial=1, reward=1,
                                                         publishable=True, schema="native")])
    with pytest.raises(StatsError, match="my-own-task"):
        analyse(path, "no-skill:with-skill", families=task_families())
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(path)], capture_output=True, text=True)
    assert out.returncode != 0 and "task ids not in the task catalogue: my-own-task" in out.stderr  # the CLI passes them


def test_without_the_catalogue_families_there_are_no_family_figures(hand_csv):
    """Statistics import nothing of derive: the caller passes the families (the CLI and the report pass the
    catalogue's); without them the headline is the same and there are no family figures."""
    bare, full = analyse(hand_csv, "no-skill:with-skill"), analyse(hand_csv, "no-skill:with-skill", families=task_families())
    assert bare.delta == full.delta and bare.ci_task == full.ci_task and bare.sign_flip_p == full.sign_flip_p
    assert (bare.families, bare.per_family, bare.ci_family) == (0, [], None) and full.families == 2


def test_unpaired_tasks_are_listed(tmp_path):
    path = write_hand_csv(tmp_path / "p.csv", extra=[dict(task="mimic-kdigo-48h", condition="no-skill", model="m", trial=1,
                                                         reward=0.1, publishable=True, schema="native")])
    c = analyse(path, "no-skill:with-skill")
    assert c.unpaired_tasks == ["mimic-kdigo-48h"] and c.tasks == 3 and c.delta == pytest.approx(0.1)


@pytest.mark.parametrize(
    "spec,message",
    [("no-skill", "A:B"), ("a:a", "two different condition values"), ("no-skill:nothing", "conditions present: no-skill, with-skill")],
)
def test_bad_compare(hand_csv, spec, message):
    with pytest.raises(StatsError, match=message):
        analyse(hand_csv, spec)


def test_bad_sources(tmp_path):
    with pytest.raises(StatsError, match="holds no results.duckdb"):
        load_runs(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("task,condition,score\nx,y,1\n")
    with pytest.raises(StatsError, match="lacks column.*model, trial, reward"):
        load_runs(bad)


def test_mixed_schemas_need_a_choice(tmp_path):
    path = write_hand_csv(tmp_path / "s.csv", extra=[dict(task="mimic-sofa-24h", condition="with-skill", model="m", trial=1,
                                                         reward=0.0, publishable=True, schema="obfuscated")])
    with pytest.raises(StatsError, match="--schema-variant"):
        analyse(path, "no-skill:with-skill")
    assert analyse(path, "no-skill:with-skill", schema="native").delta == pytest.approx(0.1)


def test_parse_compare():
    assert parse_compare("no-skill:with-skill") == GroupPair("condition", "no-skill", "with-skill")
    assert parse_compare("agent:codex/gpt-5.4-mini:claude/sonnet") == GroupPair("agent", "codex/gpt-5.4-mini", "claude/sonnet")
    with pytest.raises(StatsError, match="DIM:BASE:NEW"):
        parse_compare("no-skill")
    with pytest.raises(StatsError, match="two different"):
        parse_compare("model:m1:m1")


@pytest.mark.slow
def test_m4bench_headline_reproduced(m4bench_runs):
    """The published M4Bench v1 Codex headline from its per-run table, as shipped.

    The 280 runs per condition are 28 tasks × 2 models (gpt-5.4-mini, gpt-5.5) × 5 trials, all
    on the native schema and all publishable; decoy and raw-SQL control runs (100 each, 10 tasks)
    are other conditions and stay out. A run is a strict pass when passed == total_tests.
    """
    out = subprocess.run(
        [sys.executable, "-m", "clinbench", "stats", str(m4bench_runs), "--compare", "no-skill:with-skill", "--json"],
        capture_output=True, text=True, check=True,
    )
    r = json.loads(out.stdout)
    assert round(r["mean_a"], 3) == 0.703 and round(r["mean_b"], 3) == 0.839
    assert round(r["delta"], 3) == 0.136
    assert abs(r["ci_task"]["lo"] - 0.085) <= 0.005 and abs(r["ci_task"]["hi"] - 0.191) <= 0.005
    assert (r["improving"], r["tasks"], r["families"]) == (26, 28, 15)
    assert r["sign_flip_p"] < 1e-4
    assert (r["strict_a"]["passed"], r["strict_a"]["runs"]) == (13, 280)
    assert (r["strict_b"]["passed"], r["strict_b"]["runs"]) == (25, 280)
    assert r["seed"] == 0 and r["draws"] == 20000 and r["permutation_draws"] == 200000


@pytest.mark.slow
def test_cli_error_is_one_line(hand_csv):
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(hand_csv), "--compare", "x:y"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error: no runs under condition 'x'") and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_reads_the_campaign_store_as_written(tmp_path, hand_csv):
    """Runs recorded through clinbench.records.store give the same comparison as the CSV."""
    from stats_fixtures import HAND_RUNS

    from clinbench.records import ColumnScore, RunRecord
    from clinbench.records.store import Store

    store = Store.create(tmp_path / "campaign")
    store.record_many(
        RunRecord(run_id=f"r{i}", benchmark="derive", task=t, condition=c, schema="native", model=m, trial=1,
                  reward=r, strict=s, key_f1=f1, ordered_value_nmae=nm, column_scores=[ColumnScore("sofa", r, nm)])
        for i, (t, c, m, r, s, f1, nm) in enumerate(HAND_RUNS)
    )
    store.record(RunRecord(run_id="flagged", benchmark="derive", task="mimic-meld-24h", condition="with-skill",
                           model="m1", trial=2, reward=1.0, publishable=False, flag_reason="touched the reference"))
    from_store = analyse(tmp_path / "campaign", "no-skill:with-skill").to_dict()
    from_csv = analyse(hand_csv, "no-skill:with-skill").to_dict()
    assert from_store.pop("flagged_excluded") == 1
    for d in (from_store, from_csv):
        d.pop("source"), d.pop("flagged_excluded", None)
    assert from_store == from_csv
    assert len(load_runs(tmp_path / "campaign").column_scores) == 12


def test_runs_without_any_reward_are_refused(tmp_path):
    path = tmp_path / "dx.csv"
    path.write_text("task,condition,model,trial,reward\nmimic-sofa-24h,no-skill,m,1,\nmimic-sofa-24h,with-skill,m,1,\n")
    with pytest.raises(StatsError, match="has a reward"):
        analyse(path, "no-skill:with-skill")


@pytest.mark.slow
def test_cli_tables(hand_csv):
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(hand_csv), "--by", "model", "--seed", "3"],
                         capture_output=True, text=True, check=True).stdout
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert "delta B − A +0.100" in lines
    assert "tasks improving 2/3" in lines
    assert "strict passes A 1/6" in lines
    assert "seed 3" in out
    assert any(line.startswith("m2 3 0.667 0.800 +0.133 ") for line in lines)


@pytest.mark.slow
def test_stats_fits_80_columns_without_cutting_task_ids(m4bench_runs):
    """At 80 columns every line fits, every task id is whole on its row, and the dropped columns are named."""
    for args in (["--by", "model"], ["--summary"]):
        out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(m4bench_runs), *args, "--draws", "200",
                              "--permutation-draws", "200"], capture_output=True, text=True, check=True,
                             env={**os.environ, "COLUMNS": "80"}).stdout
        assert max(len(line) for line in out.splitlines()) <= 80
        first_words = {line.split()[0] for line in out.splitlines() if line.strip()}
        tasks = set(load_runs(m4bench_runs).task.tolist())
        assert len(tasks) == 28 and tasks <= first_words
        assert "…" not in out
        assert "not shown at 80 columns" in out


def test_filters_by_agent_and_model(tmp_path):
    """Only m2's runs: A (0.7, 0.6, 0.7), B (1.0, 0.6, 0.8) → delta 0.4/3 (see test_by_model)."""
    path = write_hand_csv(tmp_path / "r.csv")
    c = analyse(path, "no-skill:with-skill", model="m2")
    assert c.delta == pytest.approx(0.4 / 3) and c.runs_a == 3
    with pytest.raises(StatsError, match="no runs with agent 'codex'; agents present: none"):
        analyse(path, "no-skill:with-skill", agent="codex")


def test_dx_runs_compare_without_families(tmp_path):
    """dx cases are not catalogue tasks: the comparison pairs cases and reports no family figures.
    Cases c1: A 0, B 1; c2: A 1, B 1 → means 0.5 vs 1.0, delta +0.5, 1 of 2 improving."""
    from clinbench.records import RunRecord
    from clinbench.records.store import Store

    store = Store.create(tmp_path / "campaign")
    store.record_many([
        RunRecord(run_id=f"{case}-{cond}", benchmark="dx", task=case, condition=cond, model="m", reward=reward)
        for case, cond, reward in [("c1", "no-skill", 0.0), ("c1", "with-skill", 1.0),
                                   ("c2", "no-skill", 1.0), ("c2", "with-skill", 1.0)]
    ])
    c = analyse(tmp_path / "campaign", "no-skill:with-skill", benchmark="dx")
    assert (c.mean_a, c.mean_b, c.delta, c.improving, c.tasks) == (0.5, 1.0, 0.5, 1, 2)
    assert c.families == 0 and c.ci_family is None and c.per_family == []
    with pytest.raises(StatsError, match="holds no derive runs.*pass --benchmark dx"):
        analyse(tmp_path / "campaign", "no-skill:with-skill")  # no derive runs in this store


def test_default_conditions(tmp_path, hand_csv):
    """No --compare: no-skill:with-skill when both exist; the only two otherwise (no-skill first);
    a summary with one row per condition when the choice is not obvious."""
    assert (analyse(hand_csv).condition_a, analyse(hand_csv).condition_b) == ("no-skill", "with-skill")
    two = tmp_path / "two.csv"
    two.write_text("task,condition,model,trial,reward\n"
                   "mimic-sofa-24h,with-skill-decoy,m,1,0.2\nmimic-sofa-24h,no-skill,m,1,0.5\n")
    c = analyse(two)
    assert (c.condition_a, c.condition_b, c.delta) == ("no-skill", "with-skill-decoy", pytest.approx(-0.3))
    three = tmp_path / "three.csv"
    three.write_text(two.read_text() + "mimic-sofa-24h,with-skill-rawsql,m,1,1.0\n")
    s = analyse(three)
    assert s.kind == "summary" and s.runs == 3
    assert [(r.value, r.mean) for r in s.per_condition] == [
        ("no-skill", 0.5), ("with-skill-decoy", pytest.approx(0.2)), ("with-skill-rawsql", 1.0)]


@pytest.mark.parametrize("option", ["--draws", "--permutation-draws", "--seed"])
@pytest.mark.slow
def test_negative_draws_are_a_one_line_error(hand_csv, option):
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(hand_csv), option, "-5"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip().startswith(f"error: Invalid value for '{option}'") and len(out.stderr.strip().splitlines()) == 1


def _csv(path, text):
    path.write_text(text)
    return path


def test_runs_pair_within_agent_model_cells(tmp_path):
    """Two agents, equal under both conditions on every task (reference 1, empty 0). On mimic-sofa-24h the
    harness failed empty's with-skill run, on mimic-meld-24h empty's with-skill run is missing. Pooling every run
    of a side gave sofa A (1+0)/2 = 0.5, B 1.0, meld likewise: delta +0.5 where each agent's is 0. Paired within
    cells: sofa and meld pair reference only (1 → 1), raw pairs both (0.5 → 0.5): delta 0, 0 of 3 improving,
    2 cells (empty on sofa and meld) left out with their 3 runs."""
    path = _csv(tmp_path / "he.csv", "task,condition,agent,model,trial,reward,status\n"
                "mimic-sofa-24h,no-skill,reference,-,0,1,ok\nmimic-sofa-24h,with-skill,reference,-,0,1,ok\n"
                "mimic-sofa-24h,no-skill,empty,-,0,0,agent-failed\nmimic-sofa-24h,with-skill,empty,-,0,,harness-error\n"
                "mimic-meld-24h,no-skill,reference,-,0,1,ok\nmimic-meld-24h,with-skill,reference,-,0,1,ok\n"
                "mimic-meld-24h,no-skill,empty,-,0,0,ok\nmimic-meld-24h,no-skill,empty,-,1,0,ok\n"
                "mimic-sofa-24h-raw,no-skill,reference,-,0,1,ok\nmimic-sofa-24h-raw,with-skill,reference,-,0,1,ok\n"
                "mimic-sofa-24h-raw,no-skill,empty,-,0,0,ok\nmimic-sofa-24h-raw,with-skill,empty,-,0,0,ok\n")
    c = analyse(path, "no-skill:with-skill", by="agent")
    assert (c.delta, c.improving, c.tasks) == (0.0, 0, 3)
    assert (c.mean_a, c.mean_b) == (pytest.approx(2.5 / 3), pytest.approx(2.5 / 3))
    assert (c.cells_left_out, c.runs_left_out, c.runs_a, c.runs_b) == (2, 3, 4, 4)
    assert {g.value: g.delta for g in c.groups} == {"empty": 0.0, "reference": 0.0}
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(path), "--draws", "100",
                          "--permutation-draws", "100"], capture_output=True, text=True, check=True).stdout
    assert "2 cells (agent, model, condition, schema) run under one side only left out (3 runs)" in " ".join(out.split())


def test_agents_and_models_pair_within_the_other_dimensions(tmp_path):
    """Agents A and B score the same per model and condition (strong 0.9, weak 0.1); B's weak-model runs are
    harness errors. Comparing agents paired by task alone: A (0.9 + 0.1)/2 = 0.5 against B 0.9, +0.400 (found
    by a review of the cell pairing). Within (model, condition) cells: strong only, 0.9 -> 0.9. Comparing
    models m1 and m2, equal per condition, m2's with-skill runs failed: pooled over conditions -0.300, paired 0."""
    def table(name: str, runs) -> Path:  # (condition, agent, model, reward, harness failed)
        rows = [f"mimic-meld-24h,{cond},{agent},{model},0,{'' if failed else reward},{'harness-error' if failed else 'ok'}"
                for cond, agent, model, reward, failed in runs]
        return _csv(tmp_path / name, "task,condition,agent,model,trial,reward,status\n" + "\n".join(rows) + "\n")

    c = analyse(table("agents.csv", [(cond, agent, model, reward, agent == "B" and model == "weak")
                                     for cond in ("no-skill", "with-skill") for agent in ("A", "B")
                                     for model, reward in (("strong", 0.9), ("weak", 0.1))]), "agent:A:B")
    assert (c.mean_a, c.mean_b, c.delta) == (pytest.approx(0.9), pytest.approx(0.9), 0.0)
    assert (c.cells_left_out, c.runs_left_out) == (2, 2)  # A's weak model, under each condition
    c = analyse(table("models.csv", [(cond, "codex", model, reward, model == "m2" and cond == "with-skill")
                                     for model in ("m1", "m2")
                                     for cond, reward in (("no-skill", 0.2), ("with-skill", 0.8))]), "model:m1:m2")
    assert (c.mean_a, c.mean_b, c.delta) == (pytest.approx(0.2), pytest.approx(0.2), 0.0)


def test_runs_scored_by_two_judges_never_pair_across_them_and_by_agent_works_across_models(tmp_path):
    """A dx store after `dx rejudge`: agent A's 2 cases are held twice, judged offline (1, 0) and by the
    re-judge (1, 1); B was judged offline only (1, 0). Comparing agents pooled A's copies: 0.75 against 0.5
    (found by a review). Within judge cells only the offline copies pair: 0.5 against 0.5. And comparing
    models with --by agent printed no row (every agent/model label lies on one side)."""
    rows = ["task,condition,agent,model,trial,reward,status,judge"]
    for agent, judge, rewards in (("A", "offline", (1, 0)), ("A", "offline (rejudged)", (1, 1)), ("B", "offline", (1, 0))):
        rows += [f"mimic-meld-24h,no-skill,{agent},-,{i},{r},ok,{judge}" for i, r in enumerate(rewards)]
    c = analyse(_csv(tmp_path / "dx.csv", "\n".join(rows) + "\n"), "agent:A:B")
    assert (c.mean_a, c.mean_b, c.delta, c.cells_left_out) == (0.5, 0.5, 0.0, 1)
    rows = ["task,condition,agent,model,trial,reward,status"]
    for agent in ("codex", "claude"):
        rows += [f"mimic-meld-24h,no-skill,{agent},m1,0,0.25,ok", f"mimic-meld-24h,no-skill,{agent},m2,0,0.75,ok"]
    c = analyse(_csv(tmp_path / "models.csv", "\n".join(rows) + "\n"), "model:m1:m2", by="agent")
    assert {g.value: g.delta for g in c.groups} == {"claude": 0.5, "codex": 0.5}


def test_the_summary_weighs_cells_as_the_comparison_does(tmp_path):
    """Agent A scores 1 in 3 no-skill trials and 1 with-skill trial, B 0 in one of each. The comparison
    reads 0.5 -> 0.5; the summary read no-skill 0.75 and the task 0.667 (found by a review): more trials of
    the stronger agent raised a condition's figure. Now 0.5, 0.5 and 0.5."""
    path = _csv(tmp_path / "sum.csv", "task,condition,agent,model,trial,reward,status\n"
                + "".join(f"mimic-meld-24h,no-skill,A,-,{i},1,ok\n" for i in range(3))
                + "mimic-meld-24h,no-skill,B,-,0,0,ok\nmimic-meld-24h,with-skill,A,-,0,1,ok\n"
                  "mimic-meld-24h,with-skill,B,-,0,0,ok\n")
    c = analyse(path, "no-skill:with-skill")
    s = analyse(path, summary=True)
    assert (c.mean_a, c.mean_b) == (0.5, 0.5)
    assert {r.value: r.mean for r in s.per_condition} == {"no-skill": 0.5, "with-skill": 0.5}
    assert [t.mean for t in s.per_task] == [0.5] and s.overall.mean == 0.5


def test_a_run_without_a_strict_verdict_did_not_pass_in_the_count_and_the_share_alike(tmp_path):
    # found by a review: the share left such a run out while the count kept it, "100.0% cell-balanced (1/2 runs)"
    path = _csv(tmp_path / "sn.csv", "task,condition,agent,model,trial,reward,status,strict\n"
                "mimic-meld-24h,no-skill,A,-,0,1,ok,true\nmimic-meld-24h,no-skill,A,-,1,1,ok,\n"
                "mimic-meld-24h,with-skill,A,-,0,1,ok,true\nmimic-meld-24h,with-skill,A,-,1,1,ok,true\n")
    c = analyse(path, "no-skill:with-skill")
    assert (c.strict_a.passed, c.strict_a.runs, c.strict_a.share) == (1, 2, 0.5)
    assert (c.strict_b.passed, c.strict_b.runs, c.strict_b.share) == (2, 2, 1.0)


def test_a_cell_weighs_the_same_whatever_its_trials(tmp_path):
    """m1 ran 3 trials under A (0, 0, 0) and 1 under B (1); m2 1 trial each (1 → 1). Cells: m1 0 → 1, m2 1 → 1:
    A = (0 + 1)/2 = 0.5, B = 1, delta +0.5 (pooling runs gave A = 1/4, delta +0.75)."""
    path = _csv(tmp_path / "w.csv", "task,condition,model,trial,reward\n"
                "mimic-sofa-24h,no-skill,m1,0,0\nmimic-sofa-24h,no-skill,m1,1,0\nmimic-sofa-24h,no-skill,m1,2,0\n"
                "mimic-sofa-24h,with-skill,m1,0,1\nmimic-sofa-24h,no-skill,m2,0,1\nmimic-sofa-24h,with-skill,m2,0,1\n")
    c = analyse(path, "no-skill:with-skill")
    assert (c.mean_a, c.mean_b, c.delta) == (0.5, 1.0, 0.5)


def test_equal_rewards_in_another_order_are_no_improvement(tmp_path):
    """No-skill 0.3, 0.2, 0.1 and with-skill 0.1, 0.2, 0.3 have the same mean: delta 0, not 2.8e-17 counted
    as an improving task."""
    path = _csv(tmp_path / "o.csv", "task,condition,model,trial,reward\n"
                "mimic-meld-24h,no-skill,m,0,0.3\nmimic-meld-24h,no-skill,m,1,0.2\nmimic-meld-24h,no-skill,m,2,0.1\n"
                "mimic-meld-24h,with-skill,m,0,0.1\nmimic-meld-24h,with-skill,m,1,0.2\nmimic-meld-24h,with-skill,m,2,0.3\n"
                "mimic-sofa-24h,no-skill,m,0,0.5\nmimic-sofa-24h,with-skill,m,0,0.5\n")
    c = analyse(path, "no-skill:with-skill")
    assert (c.delta, c.improving) == (0.0, 0)
    assert [t.delta for t in c.per_task] == [0.0, 0.0]


def test_one_paired_task_has_no_interval(tmp_path):
    """One task (0.2, 0.4 → 0.9, 0.7: delta +0.5) is nothing to resample: no task-cluster CI, printed "—",
    never [+0.500, +0.500]; the same for a --by row of one task."""
    path = _csv(tmp_path / "one.csv", "task,condition,model,trial,reward,key_f1\n"
                "mimic-meld-24h,no-skill,m,0,0.2,1\nmimic-meld-24h,no-skill,m,1,0.4,1\n"
                "mimic-meld-24h,with-skill,m,0,0.9,1\nmimic-meld-24h,with-skill,m,1,0.7,0.5\n")
    c = analyse(path, "no-skill:with-skill", by="model")
    assert c.delta == pytest.approx(0.5) and c.ci_task is None and c.key_f1.ci_task is None
    assert c.groups[0].ci_task is None
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(path), "--draws", "100",
                          "--permutation-draws", "100"], capture_output=True, text=True, check=True).stdout
    assert "95% CI, task-cluster —" in " ".join(out.split())


def test_a_charged_run_scores_nothing_on_every_figure(tmp_path):
    """The charged meld with-skill run (codex/m1 trial 2) was stored with key F1 1.0, nMAE 0 and column match 1.0.
    Charged, it scores as no output: key F1 0, nMAE 1, match 0. Key F1 meld B: m1 (0.5 + 0)/2, m2 0.7 → 0.475, so
    B = (1 + 1 + 0.475)/3 = 0.825 (kept as stored: 1.0 → 0.725 and 0.908); column 'score' meld B (cells weighed as
    the task mean weighs them): match m1 (0.6 + 0)/2, m2 0.8 → 0.55, the task's mean reward; nMAE m1 (0.5 + 1)/2,
    m2 0.5 → 0.625."""
    from clinbench.report.data import column_diagnostics
    from clinbench.stats.analysis import load_selected

    store = write_hand_store(tmp_path / "campaign", flagged=False)
    with duckdb.connect(str(store / "results.duckdb")) as con:
        con.execute("INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, reward, "
                    "strict, key_f1, ordered_value_nmae, publishable, flag_reason, flag_charged) VALUES ('x-peeked', "
                    "'derive', 'mimic-meld-24h', 'with-skill', 'native', 'codex', 'm1', 2, 'ok', 1.0, TRUE, 1.0, 0.0, "
                    "FALSE, 'read the reference', TRUE)")
        con.execute("INSERT INTO column_scores VALUES ('x-peeked', 'score', 1.0, 0.0)")
    c = analyse(store, "no-skill:with-skill")
    assert c.key_f1.mean_b == pytest.approx(0.825)
    row = next(r for r in column_diagnostics(load_selected(store), "no-skill", "with-skill")
               if r.task == "mimic-meld-24h")
    assert (row.match_b, row.nmae_b) == (pytest.approx(0.55), pytest.approx(0.625))
    assert row.match_b == next(t.mean_b for t in c.per_task if t.task == "mimic-meld-24h")


def test_an_agent_failure_without_output_scores_key_f1_0(tmp_path):
    """A failed run (no reward, no key F1) in meld's with-skill m2 cell: key F1 m2 (0.7 + 0)/2 = 0.35, meld B
    (0.5 + 0.35)/2 = 0.425 (it was left out of key F1: 0.6), as its reward counts 0."""
    path = write_hand_csv(tmp_path / "f.csv", extra=[dict(task="mimic-meld-24h", condition="with-skill", model="m2",
                                                         trial=2, reward="", publishable=True, schema="native")])
    c = analyse(path, "no-skill:with-skill")
    assert c.key_f1.mean_b == pytest.approx((1 + 1 + 0.425) / 3)


def test_an_agent_model_label_does_not_bypass_the_mixed_version_check(tmp_path):
    """codex ran as 1.0 under no-skill and 2.0 under with-skill: comparing codex/m1 with codex/m2 mixes versions
    and is refused, as comparing by agent name is (the label matched no run of the check before)."""
    store = write_hand_store(tmp_path / "campaign", flagged=False)
    with duckdb.connect(str(store / "results.duckdb")) as con:
        con.execute("UPDATE runs SET agent_version = CASE WHEN condition = 'no-skill' THEN '1.0' ELSE '2.0' END "
                    "WHERE benchmark = 'derive'")
    with pytest.raises(StatsError, match="mix what ran: codex ran as 1.0 and 2.0"):
        analyse(store, "agent:codex/m1:codex/m2")


def test_spend_counts_every_attempt(tmp_path):
    """Analysed runs cost $0.10 each (12 of them, 1,000 tokens in each); a harness error cost $0.50, a flagged run
    left out $0.30, and one run's replaced attempts used 5,000 tokens in. The usage table said $1.20 and 12,000
    tokens in; every attempt (12 + 1 + 1 runs) spent $2.00 and 14,000 + 5,000 tokens in."""
    store = write_hand_store(tmp_path / "campaign")  # its flagged run 'x-flagged' is left out
    with duckdb.connect(str(store / "results.duckdb")) as con:
        con.execute("UPDATE runs SET cost = 0.10 WHERE benchmark = 'derive'")
        con.execute("UPDATE runs SET cost = 0.30 WHERE run_id = 'x-flagged'")
        con.execute("INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, cost) "
                    "VALUES ('h', 'derive', 'mimic-meld-24h', 'no-skill', 'native', 'codex', 'm1', 3, 'harness-error', 0.5)")
        con.execute("INSERT INTO usage (run_id, input_tokens, output_tokens, earlier_input_tokens) "
                    "SELECT run_id, 1000, 100, CASE WHEN run_id = 'r00' THEN 5000 ELSE 0 END FROM runs "
                    "WHERE benchmark = 'derive'")
    s = analyse(store, summary=True)
    assert sum(u.cost for u in s.usage) == pytest.approx(1.2) and sum(u.input_tokens for u in s.usage) == 12000
    assert sum(u.all_cost for u in s.usage) == pytest.approx(2.0)
    assert sum(u.all_input_tokens for u in s.usage) == 14 * 1000 + 5000
    assert sum(u.all_attempts for u in s.usage) == 14
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(store), "--summary", "--draws", "100"],
                         capture_output=True, text=True, check=True).stdout
    assert "spent on every attempt: $2.00 (analysed runs: $1.20)" in out


def test_flagged_runs_excluded_counts_the_runs_analysed(tmp_path):
    """The store's one flagged run is m1's: filtered to m2 nothing flagged is left out of what is analysed."""
    store = write_hand_store(tmp_path / "campaign")
    assert analyse(store, "no-skill:with-skill").flagged_excluded == 1
    assert analyse(store, "no-skill:with-skill", model="m2").flagged_excluded == 0
