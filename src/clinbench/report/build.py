"""Render a campaign's report: HTML (self-contained), optional Markdown, SVG figures.

Everything is computed before anything is written, and each file is written atomically, so
a failure leaves no half-written report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


from clinbench.atomic import write_text_atomic
from clinbench.report.data import ReportData, column_diagnostics, make_figures
from clinbench.report.html import render_html
from clinbench.report.markdown import render_markdown
from clinbench.report.png import svg_to_png
from clinbench.stats.analysis import load_selected, resolve_conditions
from clinbench.stats.compare import compare
from clinbench.stats.errors import StatsError


@dataclass
class ReportFiles:
    html: Path | None
    markdown: Path | None
    figures: list[Path]


def build_report_data(
    source: str | Path,
    conditions: str | None = None,
    *,
    seed: int = 0,
    draws: int = 20000,
    permutation_draws: int = 200000,
    include_flagged: bool = False,
    schema: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    benchmark: str = "derive",
) -> ReportData:
    runs = load_selected(source, include_flagged=include_flagged, schema=schema, agent=agent, model=model,
                         benchmark=benchmark)
    a, b = resolve_conditions(runs, conditions)
    pair_mask = (runs.condition == a) | (runs.condition == b)
    # one row per agent when several agents ran, else per model when several models did
    by = next((col for col in ("agent", "model") if len(set(getattr(runs, col)[pair_mask].tolist())) > 1), None)
    comparison = compare(runs, a, b, by=by, seed=seed, draws=draws, permutation_draws=permutation_draws)
    pair = runs.subset(pair_mask)
    return ReportData(comparison=comparison, runs=pair, columns=column_diagnostics(pair, a, b),
                      figures=make_figures(comparison))


def write_report(
    source: str | Path,
    *,
    html: str | Path | None = None,
    markdown: str | Path | None = None,
    figures_dir: str | Path | None = None,
    conditions: str | None = None,
    seed: int = 0,
    draws: int = 20000,
    permutation_draws: int = 200000,
    include_flagged: bool = False,
    schema: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    benchmark: str = "derive",
    png: bool = False,
) -> ReportFiles:
    """Write the report of ``source`` (campaign folder or per-run CSV).

    ``conditions`` is "A:B" (delta = B − A); None picks no-skill:with-skill, or the only two
    conditions present. ``figures_dir`` defaults to ``<html stem>-figures`` beside the HTML (or the Markdown);
    ``png`` also renders each figure to PNG with a local headless Chromium.
    """
    if html is None and markdown is None:
        raise StatsError("nothing to write: pass --html and/or --md")
    data = build_report_data(source, conditions, seed=seed, draws=draws, permutation_draws=permutation_draws,
                             include_flagged=include_flagged, schema=schema, agent=agent, model=model,
                             benchmark=benchmark)
    html_path = Path(html) if html is not None else None
    md_path = Path(markdown) if markdown is not None else None
    anchor = html_path or md_path
    fig_dir = Path(figures_dir) if figures_dir is not None else anchor.with_name(f"{anchor.stem}-figures")
    html_text = render_html(data, html_path) if html_path else None
    md_text = render_markdown(data) if md_path else None
    figures = [write_text_atomic(fig_dir / f"{name}.svg", svg + "\n") for name, svg in data.figures.items()]
    if png:
        figures += [svg_to_png(path, path.with_suffix(".png")) for path in list(figures)]
    if md_text is not None:
        write_text_atomic(md_path, md_text)
    if html_text is not None:
        write_text_atomic(html_path, html_text)
    return ReportFiles(html=html_path, markdown=md_path, figures=figures)


__all__ = ["ReportFiles", "build_report_data", "write_report"]
