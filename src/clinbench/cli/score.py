"""`clinbench score ID OUTPUT.csv --db DB [--json]`: score one output against the reference."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("score")
    def score(
        task_id: str = typer.Argument(..., help="Task id, e.g. mimic-sofa-24h (see `clinbench tasks list`)."),
        output_csv: Path = typer.Argument(..., help="The CSV the agent wrote (e.g. WORKSPACE/output.csv)."),
        db: Path = typer.Option(..., "--db", help="Database with the built reference targets."),
        as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
        scored_columns: str = typer.Option("value", "--scored-columns", help="Columns that count towards the reward: value (the task's value columns, as the paper) or required (also every required non-id column, as M4Bench >= 0.5.3)."),
    ) -> None:
        """Score an agent's output CSV for a task (reward, strict pass, key F1, per-column rates)."""
        from clinbench.derive.catalogue import get_task
        from clinbench.derive.score import score_command

        spec = get_task(task_id)
        if scored_columns not in ("value", "required"):
            raise typer.BadParameter(f"must be value or required, not {scored_columns!r}", param_hint="--scored-columns")
        r = score_command(task_id, output_csv, db, scored_columns=scored_columns)
        if as_json:
            print(r.to_json())
            return
        from rich.table import Table

        from clinbench.cli._console import make_console, styled

        console = make_console()
        verdict = "[green]strict pass[/]" if r.strict else "[red]strict fail[/]"
        console.print(styled("[bold]{}[/]  reward {:.4f}  " + verdict + "  (scored columns: {})", r.task_id, r.reward,
                             r.scored_columns))
        nmae = "—" if r.ordered_value_nmae is None else f"{r.ordered_value_nmae:.4f}"
        console.print(f"key precision {r.key_precision:.4f}, recall {r.key_recall:.4f}, F1 {r.key_f1:.4f}; "
                      f"coverage {r.coverage:.4f}; ordered nMAE {nmae}")
        console.print(f"reference rows {r.reference_rows}, agent rows {r.agent_rows}, "
                      f"extra keys {r.extra_keys}, duplicate rows {r.duplicate_rows}")
        if r.reason:
            console.print(f"reason: {r.reason}")
            if "column" in r.reason:
                console.print(f"{task_id} expects the columns: {', '.join(spec.required_columns)}")
        if r.columns:
            table = Table(show_header=True)
            for col in ("column", "match rate", "matched", "nMAE", "example mismatch"):
                table.add_column(col)
            for c in r.columns.values():
                ex = c.examples[0] if c.examples else None
                ex_text = "" if ex is None else f"{ex['key']}: ref {ex['reference']} vs {ex['agent']}"
                table.add_row(c.name, f"{c.match_rate:.4f}", f"{c.matched}/{c.denominator}",
                              "—" if c.nmae is None else f"{c.nmae:.4f}", ex_text)
            console.print(table)
