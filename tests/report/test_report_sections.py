"""Reports of any store: one condition (a summary), agent against agent, failures with their
causes, harness errors apart, usage, provenance; `explain` and `export` on the same stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from chromium_page import file_url, open_page
from stats_fixtures import write_hand_store

from clinbench.report.build import write_report

FACTS = {
    "stats": "Object.fromEntries(Array.from(document.querySelectorAll('section.report-section [data-stat]'))"
             ".map(e => [e.dataset.stat, e.textContent]))",
    "json": "JSON.parse(document.getElementById('clinbench-stats').textContent)",
    "text": "document.body.innerText",
    "agents": "Array.from(document.querySelectorAll('details.run')).map(d => d.dataset.agent)",
    "sections": "Array.from(document.querySelectorAll('section')).map(s => s.id)",
}


def _cli(*args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"COLUMNS": str(columns)} if columns else {})}
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, env=env)


def _two_agents(directory: Path, *, evidence: bool = False) -> Path:
    """The hand example with m1's runs made codex/gpt-5.4-mini and m2's claude/sonnet."""
    write_hand_store(directory, evidence=evidence)
    with duckdb.connect(str(directory / "results.duckdb")) as con:
        con.execute("UPDATE runs SET agent = 'codex', model = 'gpt-5.4-mini' WHERE model = 'm1'")
        con.execute("UPDATE runs SET agent = 'claude', model = 'sonnet' WHERE model = 'm2'")
    return directory


def _one_condition(directory: Path) -> Path:
    write_hand_store(directory)
    with duckdb.connect(str(directory / "results.duckdb")) as con:
        con.execute("DELETE FROM runs WHERE condition = 'with-skill'")
    return directory


@pytest.mark.slow
def test_single_condition_campaign_renders_a_summary(chromium, tmp_path):
    """No-skill only. Task means: sofa (0.5 + 0.7)/2 = 0.6, sofa-raw 0.5, meld 0.8 → 0.633."""
    campaign = _one_condition(tmp_path / "c")
    stats = json.loads(_cli("stats", str(campaign), "--json").stdout)
    assert stats["kind"] == "summary" and stats["runs"] == 6 and stats["overall"]["mean"] == pytest.approx(1.9 / 3)
    html = tmp_path / "r.html"
    write_report(campaign, html=html)
    page = open_page(file_url(html), FACTS)
    assert page.errors == []
    assert page.values["stats"]["mean"] == "0.633"
    assert page.values["json"] == stats
    assert "NaN" not in page.values["text"] and "nan" not in page.values["text"].split()
    assert "Provenance" in page.values["text"]


@pytest.mark.slow
def test_agent_against_agent_renders(chromium, tmp_path):
    """claude/sonnet − codex/gpt-5.4-mini per task (both conditions pooled):
    sofa 0.85 − 0.65 = 0.2, sofa-raw 0.6 − 0.5 = 0.1, meld 0.75 − 0.75 = 0 → +0.100, 2 of 3 improving."""
    campaign = _two_agents(tmp_path / "c", evidence=True)
    spec = "agent:codex/gpt-5.4-mini:claude/sonnet"
    stats = json.loads(_cli("stats", str(campaign), "--compare", spec, "--json").stdout)
    assert stats["dimension"] == "agent" and stats["delta"] == pytest.approx(0.1) and stats["improving"] == 2
    html = tmp_path / "r.html"
    out = _cli("report", str(campaign), "--compare", spec, "--html", str(html))
    assert out.returncode == 0, out.stderr
    page = open_page(file_url(html), FACTS)
    assert page.errors == []
    assert page.values["stats"]["delta"] == "+0.100" and page.values["stats"]["improving"] == "2/3"
    assert page.values["json"] == stats
    # every run is labelled with its agent and model
    assert sorted(set(page.values["agents"])) == ["claude/sonnet", "codex/gpt-5.4-mini"]
    assert len(page.values["agents"]) == 12
    assert "agent codex/gpt-5.4-mini → claude/sonnet" in page.values["text"]


def _failed_run(campaign: Path, run_id: str, status: str, error: str) -> None:
    run_dir = campaign / "runs" / run_id
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"run": {"run_id": run_id, "task": "mimic-meld-24h",
                                                               "condition": "no-skill", "agent": "codex",
                                                               "model": "m1", "trial": 3},
                                                       "status": status, "error": error, "files": {}}))
    (run_dir / "score.json").write_text(json.dumps({"reward": 0.0, "strict": False, "reason": "no output.csv was written",
                                                    "run_error": error}))
    with duckdb.connect(str(campaign / "results.duckdb")) as con:
        con.execute("INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, reward,"
                    " publishable, evidence_dir) VALUES (?, 'derive', 'mimic-meld-24h', 'no-skill', 'native', 'codex',"
                    " 'm1', 3, ?, ?, TRUE, ?)",
                    [run_id, status, 0.0 if status != "harness-error" else None, f"runs/{run_id}"])


@pytest.mark.slow
def test_failures_show_their_cause_and_harness_errors_stay_out(tmp_path):
    """An agent failure counts as 0 and shows the agent's error; a harness error is in no figure
    and is listed with its cause. The hand headline (delta +0.100) moves only by the agent failure:
    meld no-skill's codex/m1 cell becomes (0.9 + 0)/2 = 0.45, meld no-skill (0.45 + 0.7)/2 = 0.575, so meld's
    delta is 0.7 − 0.575 = 0.125 and the mean delta (0.3 + 0.1 + 0.125)/3 = 0.175."""
    campaign = write_hand_store(tmp_path / "c", evidence=True)
    _failed_run(campaign, "f-agent", "agent-failed", "codex exited 1: model refused the request")
    _failed_run(campaign, "f-harness", "harness-error", "endpoint http://127.0.0.1:9 unreachable (connection refused)")
    stats = json.loads(_cli("stats", str(campaign), "--json").stdout)
    assert stats["delta"] == pytest.approx(0.175)
    assert stats["harness_errors"] == 1 and stats["runs_a"] == 7
    md = tmp_path / "r.md"
    write_report(campaign, markdown=md)
    text = md.read_text()
    assert "| f-agent | mimic-meld-24h | codex/m1 | agent-failed | codex exited 1: model refused the request |" in text
    assert "| f-harness | mimic-meld-24h | codex/m1 | endpoint http://127.0.0.1:9 unreachable (connection refused) |" in text
    assert "Runs: 12 ok, 1 agent failures (reward 0, counted), 1 harness errors (left out)." in text


def _scored_run(campaign: Path) -> Path:
    run_dir = campaign / "runs" / "r00"
    (run_dir / "manifest.json").write_text(json.dumps({"run": {"run_id": "r00", "task": "mimic-sofa-24h",
                                                               "condition": "no-skill", "agent": "codex",
                                                               "model": "m1", "trial": 1}, "status": "ok",
                                                       "error": None, "db": str(campaign / "gone.duckdb")}))
    (run_dir / "score.json").write_text(json.dumps({
        "task_id": "mimic-sofa-24h", "reward": 0.5, "strict": False, "reference_rows": 4, "agent_rows": 3,
        "reason": "match rate below 0.95 in: sofa",
        "columns": {
            "sofa": {"match_rate": 0.5, "matched": 2, "denominator": 4, "nmae": 0.25,
                     "examples": [{"key": {"stay_id": "30001"}, "reference": "7", "agent": "5"},
                                  {"key": {"stay_id": "30004"}, "reference": "2", "agent": "(key missing)"}]},
            "respiration": {"match_rate": 0.75, "matched": 3, "denominator": 4, "nmae": 0.1,
                            "examples": [{"key": {"stay_id": "30001"}, "reference": "3", "agent": ""}]},
        }}))
    return run_dir


@pytest.mark.slow
def test_explain_shows_columns_and_mismatching_rows(tmp_path):
    campaign = write_hand_store(tmp_path / "c", evidence=True)
    run_dir = _scored_run(campaign)
    out = _cli("explain", str(run_dir), columns=80)
    assert out.returncode == 0, out.stderr
    lines = [" ".join(line.split()) for line in out.stdout.splitlines()]
    assert "task mimic-sofa-24h · no-skill · codex/m1 · trial 1" in lines
    assert "status ok · reward 0.500 · not strict" in lines
    assert "cause: match rate below 0.95 in: sofa" in lines
    assert "respiration 0.750 3 4 0.100" in lines and "sofa 0.500 2 4 0.250" in lines
    # one row per reference key, each mismatching column's reference value beside the agent's
    assert "30001 3 → ∅ 7 → 5" in lines
    assert "30004 2 → (key missing)" in lines
    assert max(len(line) for line in out.stdout.splitlines()) <= 80
    data = json.loads(_cli("explain", str(run_dir), "--json").stdout)
    assert data["label"] == "codex/m1" and [m["key"] for m in data["mismatches"]] == [{"stay_id": "30001"}, {"stay_id": "30004"}]
    assert {c["name"]: (c["match_rate"], c["matched"]) for c in data["columns"]}["respiration"] == (0.75, 3)
    bad = _cli("explain", str(tmp_path / "nope"))
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "DIR/runs/<run_id>" in bad.stderr


@pytest.mark.slow
def test_report_shows_each_runs_why_and_provenance(chromium, tmp_path):
    campaign = write_hand_store(tmp_path / "c", evidence=True)
    _scored_run(campaign)
    (campaign / "campaign.json").write_text(json.dumps({"commands": ["clinbench run --db x.duckdb --out c"]}))
    html = tmp_path / "r.html"
    write_report(campaign, html=html)
    page = open_page(file_url(html), {**FACTS, "why": "document.querySelector('details.run[data-run=\"r00\"] table.why')"
                                                      ".textContent"})
    assert page.errors == []
    assert "7 → 5" in page.values["why"] and "3 → ∅" in page.values["why"]
    text = page.values["text"]
    assert "clinbench run --db x.duckdb --out c" in text
    assert "gone.duckdb (absent now)" in text and "synthetic: unknown (database absent)" in text
    assert "duckdb " + duckdb.__version__ in text


def test_export_row_counts_equal_the_store(tmp_path):
    campaign = write_hand_store(tmp_path / "c", evidence=True)
    with duckdb.connect(str(campaign / "results.duckdb")) as con:
        con.execute("INSERT INTO usage (run_id, input_tokens, output_tokens, requests) VALUES ('r00', 1200, 300, 4), ('r01', 800, 200, 2)")
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "column_scores", "usage")}
        dx = con.execute("SELECT count(*) FROM runs WHERE benchmark = 'dx'").fetchone()[0]
    assert counts == {"runs": 14, "column_scores": 12, "usage": 2} and dx == 1
    for fmt in ("parquet", "csv"):
        out = _cli("export", str(campaign), "--out", str(tmp_path / fmt), "--format", fmt)
        assert out.returncode == 0, out.stderr
        reader = "read_parquet" if fmt == "parquet" else "read_csv_auto"
        with duckdb.connect() as con:
            for table, n in {**counts, "dx_encounters": dx}.items():
                path = tmp_path / fmt / f"{table}.{fmt}"
                assert con.execute(f"SELECT count(*) FROM {reader}('{path}')").fetchone()[0] == n, table
            tokens = con.execute(f"SELECT sum(input_tokens) FROM {reader}('{tmp_path / fmt / f'usage.{fmt}'}')").fetchone()[0]
            assert tokens == 2000
    again = _cli("export", str(campaign), "--out", str(tmp_path / "csv"), "--format", "csv")
    assert again.returncode == 2 and "--force" in again.stderr


def test_column_means_count_a_run_without_column_scores_as_zero(tmp_path):
    """Two runs of one task: r00 scored (column 'score' 0.5, nMAE 0.2), r01 left without column
    scores (as an empty output is). Column mean (0.5 + 0)/2 = 0.25, nMAE (0.2 + 1)/2 = 0.6; before,
    r01 dropped out and the column showed 0.5 while the task's rewards say otherwise."""
    from clinbench.report.data import column_diagnostics
    from clinbench.stats.runs import load_runs

    campaign = write_hand_store(tmp_path / "c")
    with duckdb.connect(str(campaign / "results.duckdb")) as con:
        con.execute("DELETE FROM runs WHERE run_id NOT IN ('r00', 'r01')")  # sofa no-skill: m1 0.5, m2 0.7
        con.execute("DELETE FROM column_scores WHERE run_id = 'r01'")
    rows = column_diagnostics(load_runs(campaign))
    assert [(r.task, r.column, r.match_a, r.nmae_a) for r in rows] == [("mimic-sofa-24h", "score", 0.25, 0.6)]


def test_column_means_weigh_cells_as_the_task_means_do(tmp_path):
    """One task scoring columns x and y (reward = their mean); models A, B, C of one agent. No-skill: A 3 trials
    (x 1, y 1; x's nMAE 0), B 1 (0, 0; nMAE 1), C 1 (1, 1; nMAE 0); with-skill: A 1 (1, 0; 0), B 1 (0, 1; 1).
    Compared, the task pairs cells A and B: no-skill (1 + 0)/2 = 0.5, with-skill 0.5. The columns pooled every
    run of a side: no-skill x and y 4/5 = 0.8 (nMAE 1/5 = 0.2), their mean 0.8 beside a task mean of 0.5 (found
    by a review). Summarised, five cells: the task (1 + 0 + 1 + 0.5 + 0.5)/5 = 0.6, x and y pooled 5/7 = 0.714.
    Now each column's mean over cells of its cells' means: 0.5 and 0.5 (nMAE 0.5), and 0.6 and 0.6."""
    from clinbench.report.build import SectionSpec, build_section
    from clinbench.stats.analysis import Analysis

    campaign = write_hand_store(tmp_path / "c", flagged=False)
    runs = [("no-skill", "A", 3, 1, 1), ("no-skill", "B", 1, 0, 0), ("no-skill", "C", 1, 1, 1),
            ("with-skill", "A", 1, 1, 0), ("with-skill", "B", 1, 0, 1)]
    with duckdb.connect(str(campaign / "results.duckdb")) as con:
        con.execute("DELETE FROM runs WHERE benchmark = 'derive'")
        con.execute("DELETE FROM column_scores")
        for cond, model, trials, x, y in runs:
            for trial in range(trials):
                run_id = f"{cond}-{model}-{trial}"
                con.execute("INSERT INTO runs (run_id, benchmark, task, condition, schema, agent, model, trial, status, "
                            "reward, strict, publishable) VALUES (?, 'derive', 'mimic-meld-24h', ?, 'native', 'codex', ?, "
                            "?, 'ok', ?, FALSE, TRUE)", [run_id, cond, model, trial, (x + y) / 2])
                con.execute("INSERT INTO column_scores VALUES (?, 'x', ?, ?), (?, 'y', ?, NULL)",
                            [run_id, x, 1 - x, run_id, y])
    compared = build_section(SectionSpec(campaign, Analysis(compare="no-skill:with-skill")))
    assert [(t.mean_a, t.mean_b) for t in compared.comparison.per_task] == [(0.5, 0.5)]
    assert [(r.column, r.match_a, r.match_b, r.nmae_a, r.nmae_b) for r in compared.columns] == [
        ("x", 0.5, 0.5, 0.5, 0.5), ("y", 0.5, 0.5, None, None)]
    summarised = build_section(SectionSpec(campaign, Analysis(summary=True)))
    assert [t.mean for t in summarised.summary.per_task] == [0.6]
    assert [(r.column, r.match_a, r.nmae_a) for r in summarised.columns] == [("x", 0.6, 0.4), ("y", 0.6, None)]


def test_the_summary_forest_plot_says_how_its_task_intervals_were_drawn(tmp_path):
    """A summary's task interval resamples the task's runs (one cell) or its cells' means (stats.summary); the
    figure said "bootstrap of trials within each cell", the comparison's rule (found by a review)."""
    from clinbench.report.data import summary_figures
    from clinbench.stats.analysis import analyse

    svg = summary_figures(analyse(write_hand_store(tmp_path / "c"), summary=True))["forest"]
    assert "bootstrap of its runs, or of its cells' means" in svg
    assert "trials within each cell" not in svg
