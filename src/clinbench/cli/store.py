"""`clinbench store rebuild DIR`: rebuild a campaign's results store from its evidence."""

from __future__ import annotations

from pathlib import Path

import typer

from clinbench.cli._console import make_console, styled
from clinbench.cli._interrupt import says_on_interrupt

def register(app: typer.Typer) -> None:
    store = typer.Typer(no_args_is_help=True, help="A campaign's results store: rebuild it from the evidence.")
    app.add_typer(store, name="store")

    @store.command("rebuild")
    @says_on_interrupt("the store is unchanged (the new one is built beside it and renamed over it at the end); "
                       "rerun the same command")
    def rebuild(directory: Path = typer.Argument(..., help="Campaign folder (the --out of clinbench run)."),
                db: Path | None = typer.Option(None, "--db", help="Database to re-score the outputs against "
                                                                "(default: the one each run's manifest names).")) -> None:
        """Rebuild results.duckdb from the runs' evidence folders: each manifest verified against its
        seal, each derive score recomputed from the run's output."""
        from clinbench.campaign.rebuild import rebuild_store

        report = rebuild_store(directory, db)
        console = make_console(soft_wrap=True)
        console.print(f"rebuilt {report.path}: {report.runs} run(s) from their evidence", highlight=False)
        if report.backup is not None:
            console.print(f"the previous store is kept as {report.backup}", highlight=False)
        for name, why in report.skipped.items():
            console.print(styled("[yellow]left out:[/] {}: {}", name, why), highlight=False)
        console.print(f"audit verdicts are not evidence: run `clinbench audit {directory}` to restore them",
                      highlight=False)
