"""What a report shows, computed once: per section a comparison (or a summary), its figures,
per-column diagnostics, every run's "why" and the provenance; plus the diagnosis part."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from clinbench.report.explain import RunWhy
from clinbench.report.provenance import Provenance
from clinbench.report.svg import ForestRow, forest_plot, paired_bars
from clinbench.stats.compare import Comparison, cell_means, cells, exact_mean, group_cells, pair_cells
from clinbench.stats.groups import group_mask
from clinbench.stats.runs import CHARGE, Runs
from clinbench.stats.summary import Summary

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
class Section:
    """One analysed source: a comparison of two groups, or (``comparison`` None) a summary."""

    key: str  # anchor and JSON-block suffix, e.g. "derive"
    title: str
    intro: str  # plain text shown under the title
    summary: Summary  # of the analysed runs (the two groups' runs when comparing)
    runs: Runs
    columns: list[ColumnRow]
    comparison: Comparison | None = None
    notes: tuple[list[str], list[list[str]]] | None = None  # a table under the intro
    figures: dict[str, str] = field(default_factory=dict)  # file stem -> SVG text
    why: dict[str, RunWhy] = field(default_factory=dict)  # run_id -> its explanation (runs with evidence)
    harness: list[RunWhy] = field(default_factory=list)  # harness errors, with their causes
    provenance: Provenance | None = None

    @property
    def stats(self) -> dict:
        """What ``clinbench stats --json`` prints for this section's source and options."""
        return (self.comparison or self.summary).to_dict()


@dataclass
class ReportData:
    sections: list[Section]
    dx_html: str = ""
    dx_markdown: str = ""
    dx_figures: dict[str, str] = field(default_factory=dict)  # file stem (written as dx-<stem>.svg) -> SVG text
    generated_at: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def column_diagnostics(runs: Runs, a: str = "", b: str = "", dimension: str = "condition") -> list[ColumnRow]:
    """Per task and scored column, the mean match rate and nMAE in group ``a`` and group ``b`` of
    ``dimension``, over the cells both ran, as the comparison's task means; with no groups given, over
    all runs (in the ``a`` slot), as the summary's. Each mean weighs cells, not runs: the mean over the
    task's cells of each cell's mean over its trials (``clinbench.stats.compare.cell_means``), so the mean
    of a task's column means is its mean reward.

    A run the scorer gave no column scores (no output, no rows, a missing key column) matched
    nothing: it counts as match rate 0 (and nMAE 1 where the column has one), as the task's
    reward counts it 0. A run charged for its agent's conduct (``clinbench.stats.runs.CHARGE``)
    matched nothing either, whatever its stored column scores."""
    if not runs.column_scores:
        return []
    if a:
        cell = group_cells(runs, dimension, a, b)
        side_a, side_b, _, _ = pair_cells(runs, group_mask(runs, dimension, a), group_mask(runs, dimension, b), cell)
    else:
        cell = cells(runs, "")
        side_a, side_b = np.ones(len(runs), dtype=bool), np.zeros(len(runs), dtype=bool)
    index = {rid: i for i, rid in enumerate(runs.run_id.tolist())}
    # (task, column) -> each run's match rate and nMAE (NaN: none recorded)
    values: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    scored = np.zeros(len(runs), dtype=bool)
    for run_id, column, match, nmae in runs.column_scores:
        i = index.get(run_id)
        if i is None:
            continue
        scored[i] = True
        match_of, nmae_of = values.setdefault((str(runs.task[i]), column),
                                              (np.full(len(runs), np.nan), np.full(len(runs), np.nan)))
        if run_id in runs.charged_ids:
            match = CHARGE["match_rate"]
            nmae = None if nmae is None else CHARGE["nmae"]
        match_of[i] = np.nan if match is None else float(match)
        nmae_of[i] = np.nan if nmae is None else float(nmae)

    def mean(mask: np.ndarray, of: np.ndarray) -> float | None:
        by_cell = cell_means(runs, mask, cell, of)
        return exact_mean(by_cell.values()) if by_cell else None

    rows = []
    for (task, column), (match_of, nmae_of) in sorted(values.items()):
        unscored = (runs.task == task) & ~scored
        match_of[unscored] = 0.0
        if not np.all(np.isnan(nmae_of)):
            nmae_of[unscored] = 1.0
        in_task = runs.task == task
        if not (in_task & (side_a | side_b)).any():
            continue  # the task's cells ran under one side only: in no comparison figure
        rows.append(ColumnRow(task, column, mean(in_task & side_a, match_of), mean(in_task & side_b, match_of),
                              mean(in_task & side_a, nmae_of), mean(in_task & side_b, nmae_of)))
    return rows


def summary_figures(s: Summary) -> dict[str, str]:
    """A forest-style plot of each task's mean reward with its CI over the runs."""
    rows = [ForestRow(t.task, t.mean, t.ci.lo if t.ci else None, t.ci.hi if t.ci else None, t.family)
            for t in s.per_task]
    o = s.overall
    overall = ForestRow(f"mean over {s.tasks} tasks", o.mean, o.ci.lo if o.ci else o.mean, o.ci.hi if o.ci else o.mean)
    return {"forest": forest_plot(rows, overall, title=f"Mean reward per task ({s.level:.0%} CI)",
                                  x_label="mean reward (task rows: bootstrap of its runs, or of its cells' means; mean: over tasks)",
                                  value_label="mean [CI]")}


def make_figures(c: Comparison) -> dict[str, str]:
    level = f"{c.level:.0%}"
    rows = [ForestRow(r.task, r.delta, r.ci.lo if r.ci else None, r.ci.hi if r.ci else None, r.family)
            for r in c.per_task]
    ci = c.ci_task
    overall = ForestRow(f"mean over {c.tasks} tasks", c.delta, ci.lo if ci else c.delta, ci.hi if ci else c.delta)
    figures = {
        "forest": forest_plot(
            rows,
            overall,
            title=f"Per-task delta in mean reward, {c.condition_b} − {c.condition_a} ({level} CI)",
            x_label=f"delta (task rows: bootstrap of trials within each cell; mean: task-cluster bootstrap)",
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
