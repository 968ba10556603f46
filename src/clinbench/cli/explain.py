"""`clinbench explain RUN_DIR`: why one run scored what it did."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain(
        run_dir: Path = typer.Argument(..., help="a run's evidence folder, DIR/runs/<run_id> of a campaign"),
        rows: int = typer.Option(5, "--rows", min=0, help="mismatching rows to show"),
        as_json: bool = typer.Option(False, "--json", help="print the explanation as JSON"),
    ) -> None:
        """Why a run scored what it did: its cause, per-column match rates, the first mismatching rows beside the reference."""
        from clinbench.cli._console import make_console, styled
        from clinbench.report.explain import explain_run
        from clinbench.report.terminal import Col, print_table

        why = explain_run(run_dir, max_rows=rows)
        if as_json:
            # a column's score is a hand-written record (clinbench.plain), which asdict leaves as an object
            data = {**asdict(why), "columns": [dict(vars(c)) for c in why.columns], "label": why.label}
            print(json.dumps(data, indent=2))
            return
        console = make_console()
        reward = "—" if why.reward is None else f"{why.reward:.3f}"
        strict = "—" if why.strict is None else ("strict pass" if why.strict else "not strict")
        console.print(why.run_id, style="bold", highlight=False)
        console.print(f"task {why.task} · {why.condition} · {why.label} · trial {why.trial}", highlight=False)
        console.print(f"status {why.status or '—'} · reward {reward} · {strict}", highlight=False)
        if why.reference_rows is not None:
            console.print(f"reference rows {why.reference_rows}, agent rows {why.agent_rows}", highlight=False)
        if why.cause:
            kind = "harness error" if why.harness_error else "cause"
            console.print(styled("[red]{}:[/] {}", kind, why.cause), highlight=False)
        if why.columns:
            print_table(console, [Col("column"), Col("match rate", numeric=True), Col("matched", numeric=True),
                                  Col("of", numeric=True), Col("nMAE", numeric=True, drop=1)],
                        [[c.name, f"{c.match_rate:.3f}", "—" if c.matched is None else str(c.matched),
                          "—" if c.denominator is None else str(c.denominator),
                          "—" if c.nmae is None else f"{c.nmae:.3f}"] for c in why.columns],
                        title="Per-column match rates")
        if why.mismatches:
            keys = list(why.mismatches[0].key)
            cols = [c.name for c in why.columns if any(c.name in m.cells for m in why.mismatches)]
            print_table(console, [*(Col(k) for k in keys), *(Col(f"{c}: ref → agent", wrap=True) for c in cols)],
                        [[m.key.get(k, "") for k in keys]
                         + [f"{m.cells[c][0] or '∅'} → {m.cells[c][1] or '∅'}" if c in m.cells else "" for c in cols]
                         for m in why.mismatches],
                        title="First mismatching rows (reference → agent; ∅ empty)")
        elif why.columns:
            console.print("no mismatching rows recorded", highlight=False)
