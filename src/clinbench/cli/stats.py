"""`clinbench stats`: a summary of any campaign, or the paired comparison of two groups of runs."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from clinbench.cli._console import make_console, styled
from clinbench.records import RunStatus
from clinbench.stats.resamples import BOOTSTRAP_DRAWS, SIGN_FLIP_DRAWS


# The options `stats` and `report` share (what `clinbench.stats.analysis.Analysis` holds), declared once.
SOURCE = typer.Argument(..., help="campaign folder (with results.duckdb) or per-run CSV")
COMPARE = typer.Option(
    None, "--compare",
    help="compare two groups: BASE:NEW (conditions) or DIM:BASE:NEW, DIM one of condition, agent, model, "
         "schema (e.g. agent:codex/gpt-5.4-mini:claude/sonnet); delta = NEW − BASE, as in every command. "
         "Default: no-skill:with-skill, or the only two conditions; otherwise a summary")
SUMMARY = typer.Option(False, "--summary", help="summarise the runs even when two conditions are present")
SEED = typer.Option(0, "--seed", min=0, help="seed of every bootstrap and sign-flip draw")
DRAWS = typer.Option(BOOTSTRAP_DRAWS, "--draws", min=1, help="bootstrap draws")
INCLUDE_FLAGGED = typer.Option(False, "--include-flagged", help="keep runs the audit marked unpublishable")
SCHEMA = typer.Option(None, "--schema-variant", help="only runs of this schema variant")
AGENT = typer.Option(None, "--agent", help="only runs of this agent")
MODEL = typer.Option(None, "--model", help="only runs of this model")
BENCHMARK = typer.Option("derive", "--benchmark", help="derive or dx (campaign stores hold both)")
ALLOW_MIXED = typer.Option(False, "--allow-mixed", help="compare even when the runs mix agent versions or served models")


def print_comparison(c, console: Console) -> None:
    from clinbench.report.terminal import Col, print_table
    from clinbench.stats.formatting import ci_text, left_out_text, p_text, scope_text, signed, strict_text

    a, b = c.condition_a, c.condition_b
    level = f"{c.level:.0%}"
    console.print(styled("[bold]{} {} → {}[/]  (A = {}, B = {})", c.dimension, a, b, a, b), highlight=False)
    console.print(f"{scope_text(c.tasks, c.families, c.benchmark)}; {c.runs_a} vs {c.runs_b} runs; source {c.source}",
                  highlight=False)
    head = [
        [f"mean reward A ({a})", f"{c.mean_a:.3f}"],
        [f"mean reward B ({b})", f"{c.mean_b:.3f}"],
        ["delta B − A", f"{signed(c.delta)}"],
        ["tasks improving", f"{c.improving}/{c.tasks}"],
        [f"{level} CI, task-cluster", ci_text(c.ci_task)],
        [f"{level} CI, family-cluster", ci_text(c.ci_family)],
        [f"family-balanced delta, {level} CI",
         "—" if c.ci_family_balanced is None else f"{signed(c.family_balanced_delta)} {ci_text(c.ci_family_balanced)}"],
        ["sign-flip p (two-sided)", p_text(c.sign_flip_p, digits=2)],
        ["strict passes A", strict_text(c.strict_a)],
        ["strict passes B", strict_text(c.strict_b)],
    ]
    for name, m in (("key F1", c.key_f1), ("ordered nMAE (lower is better)", c.ordered_value_nmae)):
        if m is not None:
            head.append([name, f"{m.mean_a:.3f} → {m.mean_b:.3f}, delta {signed(m.delta)} {ci_text(m.ci_task)} "
                               f"({m.n_tasks} tasks)"])
    print_table(console, [Col("figure"), Col("value", wrap=True)], head, title="Headline (task-balanced)")
    console.print(
        f"bootstrap: {c.draws:,} draws, seed {c.seed}; sign-flip: {c.permutation_draws:,} draws; per-task CIs: "
        f"{c.task_draws:,} draws of trials within each task's cells; {c.flagged_excluded} flagged runs excluded; "
        f"{c.flagged_charged} flagged for their agent's conduct counted as 0; "
        f"{c.missing_reward} agent failures without a reward counted as 0; {c.harness_errors} harness errors left out; "
        f"{left_out_text(c)}",
        highlight=False,
    )
    if c.unpaired_tasks:
        console.print(styled("[yellow]unpaired (left out):[/] {}", ", ".join(c.unpaired_tasks)), highlight=False)
    if c.groups:
        print_table(console, [Col(c.groups[0].by), Col("tasks", numeric=True), Col("A", numeric=True),
                              Col("B", numeric=True), Col("delta", numeric=True), Col("CI (task)", drop=1),
                              Col("improving", drop=2), Col("p", drop=3), Col("strict A", drop=4),
                              Col("strict B", drop=4)],
                    [[g.value, str(g.tasks), f"{g.mean_a:.3f}", f"{g.mean_b:.3f}", f"{signed(g.delta)}",
                      ci_text(g.ci_task), f"{g.improving}/{g.tasks}", p_text(g.sign_flip_p, digits=2),
                      strict_text(g.strict_a), strict_text(g.strict_b)] for g in c.groups],
                    title=f"By {c.groups[0].by}")
    if c.per_family:
        print_table(console, [Col("family"), Col("tasks", numeric=True), Col("A", numeric=True), Col("B", numeric=True),
                              Col("delta", numeric=True), Col("improving", drop=1)],
                    [[f.family, str(f.tasks), f"{f.mean_a:.3f}", f"{f.mean_b:.3f}", f"{signed(f.delta)}",
                      f"{f.improving}/{f.tasks}"] for f in c.per_family], title="By family")
    print_table(console, [Col("task"), Col("family", drop=3), Col("runs A+B", drop=2), Col("A", numeric=True),
                          Col("B", numeric=True), Col("delta", numeric=True), Col("CI", drop=1),
                          Col("strict A", drop=4), Col("strict B", drop=4)],
                [[t.task, t.family, f"{t.runs_a}+{t.runs_b}", f"{t.mean_a:.3f}", f"{t.mean_b:.3f}",
                  f"{signed(t.delta)}", ci_text(t.ci), strict_text(t.strict_a), strict_text(t.strict_b)]
                 for t in c.per_task],
                title="By task (CI: bootstrap of trials within each cell)")


def print_summary(s, console: Console) -> None:
    from clinbench.report.terminal import Col, print_table
    from clinbench.stats.formatting import mean_ci_text as ci_text
    from clinbench.stats.formatting import scope_text, strict_text

    st = s.status
    console.print(styled("[bold]{} runs[/] of {}; source {}", s.runs, scope_text(s.tasks, s.families, s.benchmark),
                         s.source), highlight=False)
    console.print(f"status: {st['ok']} ok, {st[RunStatus.AGENT_FAILED]} agent failures (reward 0, counted), "
                  f"{st[RunStatus.HARNESS_ERROR]} harness errors (left out); {s.flagged_excluded} flagged runs excluded, "
                  f"{s.flagged_charged} flagged for their agent's conduct counted as 0",
                  highlight=False)
    console.print(f"bootstrap: {s.draws:,} draws, seed {s.seed}; per-task CIs: {s.task_draws:,} draws", highlight=False)

    def show(title: str, items: list) -> None:
        cols = [Col(items[0].by), Col("tasks", numeric=True), Col("runs", numeric=True), Col("mean", numeric=True),
                Col(f"{s.level:.0%} CI (tasks)", drop=1), Col("strict", drop=2)]
        print_table(console, cols, [[r.value, str(r.tasks), str(r.runs), f"{r.mean:.3f}", ci_text(r.ci),
                                     strict_text(r.strict)] for r in items], title=title)

    show("Task-balanced mean reward", [s.overall])
    for title, items in (("By condition", s.per_condition), ("By agent", s.per_agent), ("By model", s.per_model),
                         ("By schema variant", s.per_schema), ("By family", s.per_family)):
        if len(items) > 1 or (items and title == "By agent"):
            show(title, items)
    print_table(console, [Col("task"), Col("family", drop=3), Col("runs", numeric=True), Col("mean", numeric=True),
                          Col("CI (runs)", drop=1), Col("strict", drop=2), Col("failed", numeric=True, drop=4)],
                [[t.task, t.family, str(t.runs), f"{t.mean:.3f}", ci_text(t.ci), strict_text(t.strict),
                  str(t.agent_failed)] for t in s.per_task], title="By task")
    if s.usage:
        print_table(console, [Col("condition"), Col("agent"), Col("runs", numeric=True),
                              Col("tokens in", numeric=True, drop=2), Col("tokens out", numeric=True, drop=2),
                              Col("cost $", numeric=True, drop=1), Col("mean s", numeric=True, drop=3),
                              Col("all attempts", numeric=True, drop=1), Col("tokens, all", numeric=True, drop=2),
                              Col("cost $, all", numeric=True)],
                    [[u.condition, u.agent, str(u.runs),
                      f"{u.input_tokens:,}" if u.runs_with_tokens else "—",
                      f"{u.output_tokens:,}" if u.runs_with_tokens else "—",
                      f"{u.cost:.2f}" if u.runs_with_cost else "—",
                      "—" if u.mean_seconds is None else f"{u.mean_seconds:.1f}",
                      str(u.all_attempts), f"{u.all_input_tokens + u.all_output_tokens:,}", f"{u.all_cost:.2f}"]
                     for u in s.usage],
                    title="Usage per condition and agent: the analysed runs, then every attempt (harness errors, "
                          "flagged runs left out, tokens of retried attempts)")
        total = sum(u.all_cost for u in s.usage)
        analysed = sum(u.cost for u in s.usage)
        if s.benchmark == "dx":  # a dx run's cost is the simulated price of the tests it ordered, not money
            console.print(f"simulated test cost of every attempt (not money spent): ${total:,.2f} "
                          f"(analysed runs: ${analysed:,.2f})", highlight=False)
        else:
            console.print(f"spent on every attempt: ${total:.2f} (analysed runs: ${analysed:.2f})", highlight=False)


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        source: Path = SOURCE,
        compare: str | None = COMPARE,
        summary: bool = SUMMARY,
        by: str | None = typer.Option(None, "--by", help="also compare per value of: model, schema, agent, condition"),
        as_json: bool = typer.Option(False, "--json", help="print the full result as JSON"),
        seed: int = SEED,
        draws: int = DRAWS,
        permutation_draws: int = typer.Option(SIGN_FLIP_DRAWS, "--permutation-draws", min=1, help="sign-flip draws"),
        include_flagged: bool = INCLUDE_FLAGGED,
        schema: str | None = SCHEMA,
        agent: str | None = AGENT,
        model: str | None = MODEL,
        benchmark: str = BENCHMARK,
        allow_mixed: bool = ALLOW_MIXED,
    ) -> None:
        """Summarise a campaign (means with CIs per task, family, condition, agent, model; usage), or compare
        two groups of runs: task-balanced means, paired deltas, bootstrap CIs, sign-flip p."""
        from clinbench.derive.catalogue import task_families
        from clinbench.stats.analysis import Analysis, run_analysis

        options = Analysis(compare, summary, by, seed, draws, permutation_draws, include_flagged, schema, agent, model,
                           benchmark, allow_mixed, task_families())
        with make_console(stderr=True).status(f"bootstrapping ({draws:,} draws) …"):
            result = run_analysis(source, options)
        if as_json:
            print(json.dumps(result.to_dict(), indent=2))
        elif result.kind == "summary":
            print_summary(result, make_console())
        else:
            print_comparison(result, make_console())
