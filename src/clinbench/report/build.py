"""Render a report: HTML (self-contained), optional Markdown, SVG figures.

A report holds one or more derivation sections (each a source: campaign folder or per-run
CSV, compared or summarised exactly as ``clinbench stats`` would) and, when the campaign
store also holds diagnosis runs, the diagnosis section (``clinbench.report.dx_hook``).
Everything is computed before anything is written, and each file is written atomically,
so a failure leaves no half-written report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clinbench.atomic import write_text_atomic
from clinbench.report.data import ReportData, Section, column_diagnostics, make_figures, summary_figures
from clinbench.report.dx_hook import dx_html, dx_markdown, has_dx_runs
from clinbench.report.html import render_html
from clinbench.report.markdown import render_markdown
from clinbench.report.png import svg_to_png
from clinbench.stats.analysis import check_uniform, load_selected, resolve_pair
from clinbench.stats.compare import compare
from clinbench.stats.errors import StatsError
from clinbench.stats.groups import group_mask
from clinbench.stats.summary import summarise


@dataclass
class ReportFiles:
    html: Path | None
    markdown: Path | None
    figures: list[Path]


@dataclass
class SectionSpec:
    """What one derivation section analyses; the options mean what they mean to ``clinbench stats``."""

    source: str | Path
    compare: str | None = None
    summary: bool = False
    key: str = "derive"
    title: str = ""
    intro: str = ""
    schema: str | None = None
    agent: str | None = None
    model: str | None = None
    include_flagged: bool = False
    allow_mixed: bool = False  # compare even runs that mix agent versions or served models
    # a small table shown under the intro: (header, rows), plain text cells
    notes: tuple[list[str], list[list[str]]] | None = None


def _whys(runs) -> dict:
    from clinbench.errors import ClinbenchError
    from clinbench.report.explain import explain_run

    out = {}
    for run_id, ev in zip(runs.run_id.tolist(), runs.evidence_dir.tolist()):
        if ev and Path(ev).is_dir():
            try:
                out[run_id] = explain_run(ev)
            except ClinbenchError:  # no manifest or score: the run's files are still linked
                continue
    return out


def build_section(spec: SectionSpec, *, seed: int = 0, draws: int = 20000, permutation_draws: int = 200000) -> Section:
    from clinbench.report.provenance import gather

    runs = load_selected(spec.source, include_flagged=spec.include_flagged, schema=spec.schema, agent=spec.agent,
                         model=spec.model)
    pair = None if spec.summary and spec.compare is None else resolve_pair(runs, spec.compare)
    harness = runs.harness_errors
    if pair is None:
        comparison = None
        analysed = runs
        columns = column_diagnostics(runs)
        summary = summarise(runs, seed=seed, draws=draws)
        figures = summary_figures(summary)
    else:
        mask = group_mask(runs, pair.dimension, pair.a) | group_mask(runs, pair.dimension, pair.b)
        # one row per agent when several agents ran, else per model when several models did
        by = next((col for col in ("agent", "model") if col != pair.dimension
                   and len(set(getattr(runs, col)[mask].tolist())) > 1), None)
        if not spec.allow_mixed:  # the rule `clinbench stats` applies, so both refuse the same comparisons
            check_uniform(spec.source, runs, pair)
        comparison = compare(runs, pair.a, pair.b, dimension=pair.dimension, by=by, seed=seed, draws=draws,
                             permutation_draws=permutation_draws)
        analysed = runs.subset(mask)
        if harness is not None:
            analysed.harness_errors = harness.subset(group_mask(harness, pair.dimension, pair.a)
                                                     | group_mask(harness, pair.dimension, pair.b))
        columns = column_diagnostics(analysed, pair.a, pair.b, pair.dimension)
        summary = summarise(analysed, seed=seed, draws=draws)
        figures = make_figures(comparison)
    hwhy = list(_whys(analysed.harness_errors).values()) if analysed.harness_errors is not None else []
    title = spec.title or (f"{comparison.dimension} {comparison.condition_a} → {comparison.condition_b}" if comparison
                           else f"{summary.runs} runs of {summary.tasks} tasks")
    return Section(key=spec.key, title=title, intro=spec.intro, notes=spec.notes, summary=summary, runs=analysed, columns=columns,
                   comparison=comparison, figures=figures, why=_whys(analysed), harness=hwhy,
                   provenance=gather(spec.source, analysed))


def build_report_data(
    source: str | Path | None = None,
    conditions: str | None = None,
    *,
    sections: list[SectionSpec] | None = None,
    dx_store: str | Path | None = None,
    seed: int = 0,
    draws: int = 20000,
    permutation_draws: int = 200000,
    include_flagged: bool = False,
    schema: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    benchmark: str = "derive",
    summary: bool = False,
    report_dir: Path | None = None,
    allow_mixed: bool = False,
) -> ReportData:
    """The report of ``source`` (one section, plus diagnosis when its store has dx runs), or of
    the given ``sections`` (and the diagnosis runs of ``dx_store``)."""
    if sections is None:
        if source is None:
            raise StatsError("nothing to report: pass a campaign folder or per-run CSV")
        src = Path(source)
        dx_store = dx_store or (src if src.is_dir() and has_dx_runs(src) else None)
        if benchmark == "dx":
            if dx_store is None:
                raise StatsError(f"{source} holds no dx runs; run `clinbench dx run --out {source}` first")
            sections = []
        else:
            sections = [SectionSpec(source, conditions, summary=summary, schema=schema, agent=agent, model=model,
                                    include_flagged=include_flagged, allow_mixed=allow_mixed)]
            if dx_store is not None and not _has_derive(src):
                sections = []
    built = [build_section(s, seed=seed, draws=draws, permutation_draws=permutation_draws) for s in sections]
    where = report_dir or Path(".")
    html = dx_html(Path(dx_store), where) if dx_store else ""
    md = dx_markdown(Path(dx_store)) if dx_store else ""
    return ReportData(sections=built, dx_html=html, dx_markdown=md)


def _has_derive(src: Path) -> bool:
    try:
        load_selected(src, include_flagged=True)
    except StatsError:
        return False
    return True


def write_report(
    source: str | Path | None = None,
    *,
    html: str | Path | None = None,
    markdown: str | Path | None = None,
    figures_dir: str | Path | None = None,
    conditions: str | None = None,
    sections: list[SectionSpec] | None = None,
    dx_store: str | Path | None = None,
    seed: int = 0,
    draws: int = 20000,
    permutation_draws: int = 200000,
    include_flagged: bool = False,
    schema: str | None = None,
    agent: str | None = None,
    model: str | None = None,
    benchmark: str = "derive",
    summary: bool = False,
    png: bool = False,
    title: str = "",
    allow_mixed: bool = False,
) -> ReportFiles:
    """Write the report of ``source`` (campaign folder or per-run CSV), or of ``sections``.

    ``conditions`` is "A:B" or "DIM:A:B" (delta = B − A); None picks no-skill:with-skill, or
    the only two conditions present, or else summarises. ``figures_dir`` defaults to
    ``<html stem>-figures`` beside the HTML (or the Markdown); ``png`` also renders each
    figure to PNG with a local headless Chromium.
    """
    if html is None and markdown is None:
        raise StatsError("nothing to write: pass --html and/or --md")
    html_path = Path(html) if html is not None else None
    md_path = Path(markdown) if markdown is not None else None
    anchor = html_path or md_path
    data = build_report_data(source, conditions, sections=sections, dx_store=dx_store, seed=seed, draws=draws,
                             permutation_draws=permutation_draws, include_flagged=include_flagged, schema=schema,
                             agent=agent, model=model, benchmark=benchmark, summary=summary, allow_mixed=allow_mixed,
                             report_dir=anchor.resolve().parent)
    fig_dir = Path(figures_dir) if figures_dir is not None else anchor.with_name(f"{anchor.stem}-figures")
    html_text = render_html(data, html_path, title=title) if html_path else None
    md_text = render_markdown(data, title=title) if md_path else None
    figures = []
    for section in data.sections:
        prefix = "" if len(data.sections) == 1 else f"{section.key}-"
        figures += [write_text_atomic(fig_dir / f"{prefix}{name}.svg", svg + "\n") for name, svg in section.figures.items()]
    if png:
        figures += [svg_to_png(path, path.with_suffix(".png")) for path in list(figures)]
    if md_text is not None:
        write_text_atomic(md_path, md_text)
    if html_text is not None:
        write_text_atomic(html_path, html_text)
    return ReportFiles(html=html_path, markdown=md_path, figures=figures)


__all__ = ["ReportFiles", "SectionSpec", "build_report_data", "build_section", "write_report"]
