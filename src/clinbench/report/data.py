"""What a report shows, computed once: per section a comparison (or a summary), its figures,
per-column diagnostics, every run's "why" and the provenance; plus the diagnosis part."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from clinbench.report.explain import RunWhy
from clinbench.report.provenance import Provenance
from clinbench.report.svg import ForestRow, forest_plot, paired_bars
from clinbench.stats.compare import Comparison
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
    ``dimension``; with no groups given, over all runs (in the ``a`` slot).

    A run the scorer gave no column scores (no output, no rows, a missing key column) matched
    nothing: it counts as match rate 0 (and nMAE 1 where the column has one), as the task's
    reward counts it 0, so column means and task means agree. A run charged for its agent's conduct
    (``clinbench.stats.runs.CHARGE``) matched nothing either, whatever its stored column scores."""
    if not runs.column_scores:
        return []
    if a:
        side = np.where(group_mask(runs, dimension, a), "a", np.where(group_mask(runs, dimension, b), "b", ""))
    else:
        side = np.full(len(runs), "a", dtype=object)
    where = {rid: (t, str(g)) for rid, t, g in zip(runs.run_id.tolist(), runs.task.tolist(), side.tolist())}
    a, b = "a", "b"
    acc: dict[tuple[str, str], dict[str, list[list[float]]]] = {}
    for run_id, column, match, nmae in runs.column_scores:
        if run_id not in where:
            continue
        task, cond = where[run_id]
        if cond not in (a, b):
            continue
        slot = acc.setdefault((task, column), {a: [[], []], b: [[], []]})[cond]
        if run_id in runs.charged_ids:
            match = CHARGE["match_rate"]
            nmae = None if nmae is None else CHARGE["nmae"]
        if match is not None:
            slot[0].append(float(match))
        if nmae is not None:
            slot[1].append(float(nmae))
    scored = {c[0] for c in runs.column_scores}
    has_nmae = {(where[c[0]][0], c[1]) for c in runs.column_scores if c[0] in where and c[3] is not None}
    for run_id, (task, cond) in where.items():
        if run_id in scored or cond not in (a, b):
            continue
        for (t, column), v in acc.items():
            if t == task:
                v[cond][0].append(0.0)
                if (t, column) in has_nmae:
                    v[cond][1].append(1.0)

    def mean(xs: list[float]) -> float | None:
        return float(np.mean(xs)) if xs else None

    return [
        ColumnRow(task, column, mean(v[a][0]), mean(v[b][0]), mean(v[a][1]), mean(v[b][1]))
        for (task, column), v in sorted(acc.items())
    ]


def summary_figures(s: Summary) -> dict[str, str]:
    """A forest-style plot of each task's mean reward with its CI over the runs."""
    rows = [ForestRow(t.task, t.mean, t.ci.lo if t.ci else None, t.ci.hi if t.ci else None, t.family)
            for t in s.per_task]
    o = s.overall
    overall = ForestRow(f"mean over {s.tasks} tasks", o.mean, o.ci.lo if o.ci else o.mean, o.ci.hi if o.ci else o.mean)
    return {"forest": forest_plot(rows, overall, title=f"Mean reward per task ({s.level:.0%} CI)",
                                  x_label="mean reward (task rows: bootstrap of trials within each cell; mean: over tasks)",
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
