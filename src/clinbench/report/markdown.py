"""Markdown tables of a comparison, ready to paste into a paper or an issue."""

from __future__ import annotations

from clinbench.report.data import ReportData
from clinbench.stats.formatting import ci_text, p_text, strict_text


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def render_markdown(data: ReportData) -> str:
    c = data.comparison
    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    out = [
        f"# clinbench report: {a} → {b}",
        "",
        f"Source: `{c.source}`; {c.tasks} tasks in {c.families} families; {c.runs_a} runs ({a}) and {c.runs_b} runs ({b}); "
        f"{c.flagged_excluded} flagged runs excluded. Generated {data.generated_at}.",
        "",
        "## Headline (task-balanced)",
        "",
        _table(["figure", "value"], _headline_rows(data)),
        "",
        f"Bootstraps: percentile, {c.draws:,} draws, seed {c.seed}. Sign-flip: {c.permutation_draws:,} draws, "
        "p = (hits + 1)/(draws + 1).",
    ]
    if c.groups:
        out += ["", f"## By {c.groups[0].by}", "", _table(
            [c.groups[0].by, "tasks", a, b, "delta", f"{level} CI (task)", "improving", "p", f"strict {a}", f"strict {b}"],
            [[g.value, str(g.tasks), f"{g.mean_a:.3f}", f"{g.mean_b:.3f}", f"{g.delta:+.3f}", ci_text(g.ci_task),
              f"{g.improving}/{g.tasks}", p_text(g.sign_flip_p), strict_text(g.strict_a), strict_text(g.strict_b)] for g in c.groups],
        )]
    if c.per_family:
        out += ["", "## By family", "", _table(
            ["family", "tasks", a, b, "delta", "improving"],
            [[f.family, str(f.tasks), f"{f.mean_a:.3f}", f"{f.mean_b:.3f}", f"{f.delta:+.3f}", f"{f.improving}/{f.tasks}"]
             for f in c.per_family],
        )]
    out += ["", f"## By task ({level} CI: bootstrap over the task's runs, {c.task_draws:,} draws)", "", _table(
        ["task", "family", f"runs {a}", f"runs {b}", a, b, "delta", "CI", f"strict {a}", f"strict {b}"],
        [[t.task, t.family, str(t.runs_a), str(t.runs_b), f"{t.mean_a:.3f}", f"{t.mean_b:.3f}", f"{t.delta:+.3f}",
          ci_text(t.ci), strict_text(t.strict_a), strict_text(t.strict_b)] for t in c.per_task],
    )]
    if data.columns:
        def f(x: float | None) -> str:
            return "—" if x is None else f"{x:.3f}"

        out += ["", "## Per-column diagnostics (mean match rate; nMAE)", "", _table(
            ["task", "column", f"match {a}", f"match {b}", f"nMAE {a}", f"nMAE {b}"],
            [[r.task, r.column, f(r.match_a), f(r.match_b), f(r.nmae_a), f(r.nmae_b)] for r in data.columns],
        )]
    if c.unpaired_tasks:
        out += ["", f"Unpaired tasks (run under one condition only, left out): {', '.join(c.unpaired_tasks)}"]
    return "\n".join(out) + "\n"


def _headline_rows(data: ReportData) -> list[list[str]]:
    c = data.comparison
    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    rows = [
        [f"mean reward, {a}", f"{c.mean_a:.3f}"],
        [f"mean reward, {b}", f"{c.mean_b:.3f}"],
        ["delta", f"{c.delta:+.3f}"],
        [f"{level} CI, task-cluster bootstrap", ci_text(c.ci_task)],
        [f"{level} CI, family-cluster bootstrap", ci_text(c.ci_family)],
        ["family-balanced delta", "—" if c.ci_family_balanced is None else f"{c.family_balanced_delta:+.3f}"],
        [f"{level} CI, family-balanced bootstrap", ci_text(c.ci_family_balanced)],
        ["tasks improving", f"{c.improving}/{c.tasks}"],
        ["sign-flip p (two-sided)", p_text(c.sign_flip_p)],
        [f"strict passes, {a}", strict_text(c.strict_a)],
        [f"strict passes, {b}", strict_text(c.strict_b)],
    ]
    for name, m in (("key F1", c.key_f1), ("ordered nMAE (lower is better)", c.ordered_value_nmae)):
        if m is not None:
            rows.append([f"{name}: {m.mean_a:.3f} → {m.mean_b:.3f} ({m.n_tasks} tasks)", f"{m.delta:+.3f} {ci_text(m.ci_task)}"])
    return rows
