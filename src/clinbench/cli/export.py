"""`clinbench export DIR --out FOLDER`: a campaign's tables as Parquet or CSV files."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export(
        campaign: Path = typer.Argument(..., help="campaign folder (with results.duckdb)"),
        out: Path = typer.Option(None, "--out", help="folder to write the tables into (default: CAMPAIGN/export)"),
        fmt: str = typer.Option("parquet", "--format", help="parquet or csv"),
        force: bool = typer.Option(False, "--force", help="replace tables already in the folder"),
    ) -> None:
        """Write runs, column_scores, usage and dx_encounters as Parquet or CSV (columns documented in the README)."""
        from clinbench.cli._console import make_console
        from clinbench.report.export import export_store

        done = export_store(campaign, out if out is not None else campaign / "export", fmt=fmt, force=force)
        console = make_console()
        for item in done:
            console.print(f"{item.table}: {item.rows:,} rows → {item.path}", highlight=False)
