"""`clinbench report`: a campaign's comparison as one self-contained HTML page, Markdown and SVG figures."""

from __future__ import annotations

from pathlib import Path

import typer

from clinbench.cli._console import make_console
from clinbench.cli._interrupt import says_on_interrupt
from clinbench.cli.stats import (AGENT, ALLOW_MIXED, BENCHMARK, COMPARE, DRAWS, INCLUDE_FLAGGED, MODEL, SCHEMA, SEED,
                                 SOURCE, SUMMARY)

def register(app: typer.Typer) -> None:
    @app.command("report")
    @says_on_interrupt("no report file was changed (each is computed first, then written whole and renamed); "
                       "rerun the same command")
    def report(
        source: Path = SOURCE,
        html: Path | None = typer.Option(None, "--html", help="write the HTML report here"),
        md: Path | None = typer.Option(None, "--md", help="write the Markdown tables here"),
        figures: Path | None = typer.Option(None, "--figures", help="folder for SVG figures (default: <report>-figures)"),
        compare: str | None = COMPARE,
        summary: bool = SUMMARY,
        seed: int = SEED,
        draws: int = DRAWS,
        include_flagged: bool = INCLUDE_FLAGGED,
        schema: str | None = SCHEMA,
        agent: str | None = AGENT,
        model: str | None = MODEL,
        benchmark: str = BENCHMARK,
        png: bool = typer.Option(False, "--png", help="also render each figure to PNG (needs a local Chromium)"),
        allow_mixed: bool = ALLOW_MIXED,
    ) -> None:
        """Write the report of a campaign: headline or summary, forest plot, families, provenance, usage, failures
        with their causes, every run's why, evidence; and the diagnosis section when the store holds dx runs."""
        from clinbench.report.build import write_report
        from clinbench.stats.analysis import Analysis

        if html is None and md is None:
            html = Path("report.html")
        options = Analysis(compare=compare, summary=summary, seed=seed, draws=draws, include_flagged=include_flagged,
                           schema=schema, agent=agent, model=model, benchmark=benchmark, allow_mixed=allow_mixed)
        with make_console(stderr=True).status("computing the statistics and writing the report …"):
            files = write_report(source, options, html=html, markdown=md, figures_dir=figures, png=png)
        console = make_console()
        for label, path in (("html", files.html), ("markdown", files.markdown)):
            if path is not None:
                console.print(f"{label}: {path}", highlight=False)
        for path in files.figures:
            console.print(f"figure: {path}", highlight=False)
