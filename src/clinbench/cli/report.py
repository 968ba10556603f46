"""`clinbench report`: a campaign's comparison as one self-contained HTML page, Markdown and SVG figures."""

from __future__ import annotations

from pathlib import Path

import typer

from clinbench.cli._console import make_console
from clinbench.cli._interrupt import says_on_interrupt

def register(app: typer.Typer) -> None:
    @app.command("report")
    @says_on_interrupt("no report file was changed (each is computed first, then written whole and renamed); "
                       "rerun the same command")
    def report(
        source: Path = typer.Argument(..., help="campaign folder (with results.duckdb) or per-run CSV"),
        html: Path | None = typer.Option(None, "--html", help="write the HTML report here"),
        md: Path | None = typer.Option(None, "--md", help="write the Markdown tables here"),
        figures: Path | None = typer.Option(None, "--figures", help="folder for SVG figures (default: <report>-figures)"),
        compare: str | None = typer.Option(
            None, "--compare",
            help="compare two groups: BASE:NEW (conditions) or DIM:BASE:NEW, DIM one of condition, agent, model, "
                 "schema; delta = NEW − BASE (default: no-skill:with-skill, or the only two conditions; otherwise a "
                 "summary)"),
        summary: bool = typer.Option(False, "--summary", help="summarise the runs even when two conditions are present"),
        seed: int = typer.Option(0, "--seed", help="seed of every bootstrap and sign-flip draw"),
        draws: int = typer.Option(20000, "--draws", help="bootstrap draws"),
        include_flagged: bool = typer.Option(False, "--include-flagged", help="keep runs the audit marked unpublishable"),
        schema: str | None = typer.Option(None, "--schema-variant", help="only runs of this schema variant"),
        agent: str | None = typer.Option(None, "--agent", help="only runs of this agent"),
        model: str | None = typer.Option(None, "--model", help="only runs of this model"),
        benchmark: str = typer.Option("derive", "--benchmark", help="derive or dx"),
        png: bool = typer.Option(False, "--png", help="also render each figure to PNG (needs a local Chromium)"),
        allow_mixed: bool = typer.Option(False, "--allow-mixed", help="compare even when the runs mix agent versions or served models"),
    ) -> None:
        """Write the report of a campaign: headline or summary, forest plot, families, provenance, usage, failures
        with their causes, every run's why, evidence; and the diagnosis section when the store holds dx runs."""
        from clinbench.report.build import write_report

        if html is None and md is None:
            html = Path("report.html")
        with make_console(stderr=True).status("computing the statistics and writing the report …"):
            files = write_report(source, html=html, markdown=md, figures_dir=figures, conditions=compare, seed=seed,
                                 draws=draws, include_flagged=include_flagged, schema=schema, agent=agent,
                                 model=model, benchmark=benchmark, png=png, summary=summary, allow_mixed=allow_mixed)
        console = make_console()
        for label, path in (("html", files.html), ("markdown", files.markdown)):
            if path is not None:
                console.print(f"{label}: {path}", highlight=False)
        for path in files.figures:
            console.print(f"figure: {path}", highlight=False)
