"""The summary (`clinbench stats --summary`) gives the figures the comparison gives, by the same rules."""

from __future__ import annotations

from pathlib import Path

from clinbench.derive.catalogue import task_families
from clinbench.stats.analysis import analyse
from clinbench.stats.formatting import strict_text


def _csv(path: Path, rows: list[str]) -> Path:
    path.write_text("task,condition,agent,model,trial,reward,strict,status\n" + "\n".join(rows) + "\n")
    return path


def test_summary_strict_weighs_cells_as_the_comparison_does(tmp_path):
    """On one task, agent A passed strict in 3 trials under each condition, B failed its 1 trial. Cells: A 3/3,
    B 0/1, the share (1 + 0)/2 = 50.0%, as the comparison reads it. The summary pooled the runs: 3/4 for the
    task, each condition, the family and the whole (found by a review)."""
    rows = [f"mimic-meld-24h,{cond},A,-,{i},1,true,ok" for cond in ("no-skill", "with-skill") for i in range(3)]
    rows += [f"mimic-meld-24h,{cond},B,-,0,0,false,ok" for cond in ("no-skill", "with-skill")]
    path = _csv(tmp_path / "strict.csv", rows)
    c = analyse(path, "no-skill:with-skill")
    s = analyse(path, summary=True, families=task_families())
    assert (c.strict_a.passed, c.strict_a.runs, c.strict_a.share) == (3, 4, 0.5)
    assert {r.value: r.strict for r in s.per_condition} == {"no-skill": c.strict_a, "with-skill": c.strict_b}
    for strict in (s.per_task[0].strict, s.per_family[0].strict, s.overall.strict):
        assert (strict.passed, strict.runs, strict.share) == (6, 8, 0.5)
        assert strict_text(strict) == "50.0% cell-balanced (6/8 runs)"
    # one agent's runs are one cell a condition: its share is its count
    assert {r.value: strict_text(r.strict) for r in s.per_agent} == {"A": "6/6", "B": "0/2"}


def test_summary_means_are_the_comparisons_to_the_last_digit(tmp_path):
    """Three tasks, one run each under each condition: no-skill 0.1, 0.2, 0.3. The comparison's mean A is
    exactly summed, 0.6/3 = 0.19999999999999998; the summary's no-skill row and the whole summed in order,
    0.20000000000000004 (`stats --json` printed both for one figure). Now both exact."""
    rows = [f"{task},{cond},A,-,0,{reward},false,ok" for cond in ("no-skill", "with-skill")
            for task, reward in (("mimic-meld-24h", 0.1), ("mimic-sofa-24h", 0.2), ("mimic-sofa-24h-raw", 0.3))]
    path = _csv(tmp_path / "means.csv", rows)
    c = analyse(path, "no-skill:with-skill")
    s = analyse(path, summary=True, families=task_families())
    assert c.mean_a == 0.6 / 3
    assert {r.value: r.mean for r in s.per_condition} == {"no-skill": c.mean_a, "with-skill": c.mean_b}
    assert s.overall.mean == 0.6 / 3
    c = analyse(path, "no-skill:with-skill", families=task_families())
    assert {r.value: r.mean for r in s.per_family} == {f.family: f.mean_a for f in c.per_family}


def test_each_task_interval_draws_as_many_times_in_the_summary_and_the_comparison(tmp_path):
    """One task's interval drew min(--draws, 5,000) times in the summary and always 5,000 in the comparison:
    `--draws 200` gave the summary's task rows 200 draws and the comparison's 5,000, and the summary never
    said. Both now draw min(--draws, 5,000), and both print it."""
    import subprocess
    import sys

    rows = [f"mimic-meld-24h,{cond},A,-,{i},{(i % 3) / 2},false,ok" for cond in ("no-skill", "with-skill")
            for i in range(6)]
    path = _csv(tmp_path / "draws.csv", rows)
    for draws, each in ((200, 200), (20_000, 5_000)):
        c = analyse(path, "no-skill:with-skill", draws=draws, permutation_draws=200)
        s = analyse(path, summary=True, draws=draws)
        assert (c.task_draws, s.task_draws, s.draws) == (each, each, draws)
    out = subprocess.run([sys.executable, "-m", "clinbench", "stats", str(path), "--summary", "--draws", "300"],
                         capture_output=True, text=True, check=True).stdout
    assert "bootstrap: 300 draws, seed 0; per-task CIs: 300 draws" in " ".join(out.split())
