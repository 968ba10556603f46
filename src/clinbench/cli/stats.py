"""`clinbench stats`: the paired comparison of two conditions, as tables or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from clinbench.stats.compare import Comparison
from clinbench.stats.formatting import ci_text, p_text, strict_text


def print_comparison(c: Comparison, console: Console) -> None:
    a, b = c.condition_a, c.condition_b
    console.print(f"[bold]{a} → {b}[/]  ({c.tasks} tasks, {c.families} families; {c.runs_a} vs {c.runs_b} runs; source {c.source})")
    head = Table(title="Headline (task-balanced)", show_header=True)
    head.add_column("figure")
    head.add_column("value")
    head.add_row(f"mean reward {a}", f"{c.mean_a:.3f}")
    head.add_row(f"mean reward {b}", f"{c.mean_b:.3f}")
    head.add_row("delta", f"{c.delta:+.3f}")
    head.add_row("tasks improving", f"{c.improving}/{c.tasks}")
    level = f"{c.level:.0%}"
    head.add_row(f"{level} CI, task-cluster", ci_text(c.ci_task))
    head.add_row(f"{level} CI, family-cluster", ci_text(c.ci_family))
    fb = "—" if c.ci_family_balanced is None else f"{c.family_balanced_delta:+.3f} {ci_text(c.ci_family_balanced)}"
    head.add_row(f"family-balanced delta, {level} CI", fb)
    head.add_row("sign-flip p (two-sided)", p_text(c.sign_flip_p, digits=2))
    head.add_row(f"strict passes {a}", strict_text(c.strict_a))
    head.add_row(f"strict passes {b}", strict_text(c.strict_b))
    for name, m in (("key F1", c.key_f1), ("ordered nMAE (lower is better)", c.ordered_value_nmae)):
        if m is not None:
            head.add_row(name, f"{m.mean_a:.3f} → {m.mean_b:.3f}, delta {m.delta:+.3f} {ci_text(m.ci_task)} ({m.n_tasks} tasks)")
    console.print(head)
    console.print(
        f"bootstrap: {c.draws:,} draws, seed {c.seed}; sign-flip: {c.permutation_draws:,} draws; "
        f"per-task CIs: {c.task_draws:,} draws over each task's runs; "
        f"{c.flagged_excluded} flagged runs excluded; {c.missing_reward} runs without a reward counted as 0",
        highlight=False,
    )
    if c.unpaired_tasks:
        console.print(f"[yellow]unpaired (left out):[/] {', '.join(c.unpaired_tasks)}")
    console.print(f"A = {a}, B = {b}", highlight=False)
    if c.groups:
        g = Table(title=f"By {c.groups[0].by}")
        for col in (c.groups[0].by, "tasks", "A", "B", "delta", "CI (task)", "improving", "p", "strict A", "strict B"):
            g.add_column(col)
        for row in c.groups:
            g.add_row(row.value, str(row.tasks), f"{row.mean_a:.3f}", f"{row.mean_b:.3f}", f"{row.delta:+.3f}",
                      ci_text(row.ci_task), f"{row.improving}/{row.tasks}", p_text(row.sign_flip_p, digits=2),
                      strict_text(row.strict_a), strict_text(row.strict_b))
        console.print(g)
    if c.per_family:
        f = Table(title="By family")
        for col in ("family", "tasks", "A", "B", "delta", "improving"):
            f.add_column(col)
        for row in c.per_family:
            f.add_row(row.family, str(row.tasks), f"{row.mean_a:.3f}", f"{row.mean_b:.3f}", f"{row.delta:+.3f}", f"{row.improving}/{row.tasks}")
        console.print(f)
    t = Table(title="By task (CI: bootstrap over the task's runs)")
    for col in ("task", "family", "runs A+B", "A", "B", "delta", "CI", "strict A", "strict B"):
        t.add_column(col)
    for row in c.per_task:
        t.add_row(row.task, row.family, f"{row.runs_a}+{row.runs_b}", f"{row.mean_a:.3f}", f"{row.mean_b:.3f}",
                  f"{row.delta:+.3f}", ci_text(row.ci), strict_text(row.strict_a), strict_text(row.strict_b))
    console.print(t)


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        source: Path = typer.Argument(..., help="campaign folder (with results.duckdb) or per-run CSV"),
        compare: str | None = typer.Option(
            None, "--compare", help="conditions A:B; delta = B − A (default: no-skill:with-skill, or the only two present)"),
        by: str | None = typer.Option(None, "--by", help="also compare per value of: model, schema, agent"),
        as_json: bool = typer.Option(False, "--json", help="print the full result as JSON"),
        seed: int = typer.Option(0, "--seed", help="seed of every bootstrap and sign-flip draw"),
        draws: int = typer.Option(20000, "--draws", help="bootstrap draws"),
        permutation_draws: int = typer.Option(200000, "--permutation-draws", help="sign-flip draws"),
        include_flagged: bool = typer.Option(False, "--include-flagged", help="keep runs the audit marked unpublishable"),
        schema: str | None = typer.Option(None, "--schema", help="only runs of this schema variant"),
        agent: str | None = typer.Option(None, "--agent", help="only runs of this agent"),
        model: str | None = typer.Option(None, "--model", help="only runs of this model"),
        benchmark: str = typer.Option("derive", "--benchmark", help="derive or dx (campaign stores hold both)"),
    ) -> None:
        """Compare two conditions: task-balanced means, paired deltas, bootstrap CIs, sign-flip p."""
        from clinbench.stats.analysis import analyse

        result = analyse(
            source, compare, by=by, seed=seed, draws=draws, permutation_draws=permutation_draws,
            include_flagged=include_flagged, schema=schema, agent=agent, model=model, benchmark=benchmark,
        )
        if as_json:
            print(json.dumps(result.to_dict(), indent=2))
        else:
            console = Console()
            if not console.is_terminal:  # piped into a file or a log: do not squeeze tables to 80 columns
                console = Console(width=130)
            print_comparison(result, console)
