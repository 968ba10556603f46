"""What a report shows, computed once: the comparison, its figures and per-column diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from clinbench.report.svg import ForestRow, forest_plot, paired_bars
from clinbench.stats.compare import Comparison
from clinbench.stats.runs import Runs

# Evidence files linked first, in reading order; anything else in the folder follows by name.
EVIDENCE_FILES = ("prompt.md", "skills", "transcript.jsonl", "output.csv", "score.json", "manifest.json")
# Where a run's readable transcript lives: clinbench's own agents write transcript.jsonl;
# external coding agents' JSON event streams are kept as their stdout.
TRANSCRIPT_CANDIDATES = ("transcript.jsonl", "agent_stdout.txt")


@dataclass
class ColumnRow:
    """Mean match rate (and normalised MAE) of one scored column of one task, per condition."""

    task: str
    column: str
    match_a: float | None
    match_b: float | None
    nmae_a: float | None
    nmae_b: float | None


@dataclass
class ReportData:
    comparison: Comparison
    runs: Runs  # the runs of the two compared conditions
    columns: list[ColumnRow]
    figures: dict[str, str] = field(default_factory=dict)  # file stem -> SVG text
    generated_at: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def column_diagnostics(runs: Runs, a: str, b: str) -> list[ColumnRow]:
    """Per task and scored column, the mean match rate and nMAE under each condition."""
    if not runs.column_scores:
        return []
    where = {rid: (t, c) for rid, t, c in zip(runs.run_id.tolist(), runs.task.tolist(), runs.condition.tolist())}
    acc: dict[tuple[str, str], dict[str, list[list[float]]]] = {}
    for run_id, column, match, nmae in runs.column_scores:
        if run_id not in where:
            continue
        task, cond = where[run_id]
        if cond not in (a, b):
            continue
        slot = acc.setdefault((task, column), {a: [[], []], b: [[], []]})[cond]
        if match is not None:
            slot[0].append(float(match))
        if nmae is not None:
            slot[1].append(float(nmae))

    def mean(xs: list[float]) -> float | None:
        return float(np.mean(xs)) if xs else None

    return [
        ColumnRow(task, column, mean(v[a][0]), mean(v[b][0]), mean(v[a][1]), mean(v[b][1]))
        for (task, column), v in sorted(acc.items())
    ]


def make_figures(c: Comparison) -> dict[str, str]:
    level = f"{c.level:.0%}"
    rows = [ForestRow(r.task, r.delta, r.ci.lo, r.ci.hi, r.family) for r in c.per_task]
    overall = ForestRow(f"mean over {c.tasks} tasks", c.delta, c.ci_task.lo, c.ci_task.hi)
    figures = {
        "forest": forest_plot(
            rows,
            overall,
            title=f"Per-task delta in mean reward, {c.condition_b} − {c.condition_a} ({level} CI)",
            x_label=f"delta (task rows: bootstrap over the task's runs; mean: task-cluster bootstrap)",
        )
    }
    if c.per_family:
        figures["families"] = paired_bars(
            [f"{r.family} ({r.tasks})" for r in c.per_family],
            [r.mean_a for r in c.per_family],
            [r.mean_b for r in c.per_family],
            name_a=c.condition_a,
            name_b=c.condition_b,
            title="Mean reward per family (task-balanced; number of tasks in brackets)",
        )
    return figures
