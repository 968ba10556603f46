"""Render a report: HTML (self-contained), optional Markdown, SVG figures.

A report holds one or more derivation sections (each a source: campaign folder or per-run
CSV, compared or summarised exactly as ``clinbench stats`` would) and, when the campaign
store also holds diagnosis runs, the diagnosis section (``clinbench.report.dx_section``).
Everything is computed before anything is written, and each file is written atomically,
so a failure leaves no half-written report.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from clinbench.atomic import write_text_atomic
from clinbench.derive.catalogue import task_families
from clinbench.report.data import ReportData, Section, column_diagnostics, make_figures, summary_figures
from clinbench.report.dx_section import DxStore, build_dx, dx_stores
from clinbench.report.html import render_html
from clinbench.report.markdown import render_markdown
from clinbench.report.png import svg_to_png
from clinbench.report.svg import write_figure
from clinbench.stats.accuracy import has_dx_runs
from clinbench.stats.analysis import Analysis, compute, load_selected, prepare
from clinbench.stats.errors import StatsError
from clinbench.stats.groups import group_mask


@dataclass
class ReportFiles:
    html: Path | None
    markdown: Path | None
    figures: list[Path]


@dataclass
class SectionSpec:
    """What one derivation section analyses (``analysis``: the options of ``clinbench stats``) and
    how it is titled."""

    source: str | Path
    analysis: Analysis = field(default_factory=Analysis)
    key: str = "derive"
    title: str = ""
    intro: str = ""
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


def build_section(spec: SectionSpec) -> Section:
    from clinbench.report.provenance import gather

    options = spec.analysis
    if options.families is None:
        options = replace(options, families=task_families())
    runs, pair = prepare(spec.source, options)
    harness = runs.harness_errors
    if pair is None:
        analysed, columns = runs, column_diagnostics(runs)
        comparison, summary = None, compute(runs, None, options)
        figures = summary_figures(summary)
    else:
        mask = group_mask(runs, pair.dimension, pair.a) | group_mask(runs, pair.dimension, pair.b)
        # one row per agent when several agents ran, else per model when several models did
        by = next((col for col in ("agent", "model") if col != pair.dimension
                   and len(set(getattr(runs, col)[mask].tolist())) > 1), None)
        comparison = compute(runs, pair, options, by=by)
        analysed = runs.subset(mask)
        if harness is not None:
            analysed.harness_errors = harness.subset(group_mask(harness, pair.dimension, pair.a)
                                                     | group_mask(harness, pair.dimension, pair.b))
        if runs.excluded is not None:
            analysed.excluded = runs.excluded.subset(group_mask(runs.excluded, pair.dimension, pair.a)
                                                     | group_mask(runs.excluded, pair.dimension, pair.b))
            analysed.n_flagged_excluded = len(analysed.excluded)
        columns = column_diagnostics(analysed, pair.a, pair.b, pair.dimension)
        summary = compute(analysed, None, options)
        figures = make_figures(comparison)
    hwhy = list(_whys(analysed.harness_errors).values()) if analysed.harness_errors is not None else []
    title = spec.title or (f"{comparison.dimension} {comparison.condition_a} → {comparison.condition_b}" if comparison
                           else f"{summary.runs} runs of {summary.tasks} tasks")
    return Section(key=spec.key, title=title, intro=spec.intro, notes=spec.notes, summary=summary, runs=analysed, columns=columns,
                   comparison=comparison, figures=figures, why=_whys(analysed), harness=hwhy,
                   provenance=gather(spec.source, analysed))


def build_report_data(
    source: str | Path | None = None,
    analysis: Analysis = Analysis(),
    *,
    sections: list[SectionSpec] | None = None,
    dx_store: str | Path | DxStore | list[str | Path | DxStore] | None = None,
    report_dir: Path | None = None,
) -> ReportData:
    """The report of ``source`` analysed as ``analysis`` says (one section, plus diagnosis when its
    store has dx runs), or of the given ``sections`` (and the diagnosis runs of ``dx_store``)."""
    if sections is None:
        if source is None:
            raise StatsError("nothing to report: pass a campaign folder or per-run CSV")
        src = Path(source)
        dx_store = dx_store or (src if src.is_dir() and has_dx_runs(src) else None)
        if analysis.benchmark == "dx":
            if dx_store is None:
                raise StatsError(f"{source} holds no dx runs; run `clinbench dx run --out {source}` first")
            sections = []
        else:
            sections = [SectionSpec(source, analysis)]
            if dx_store is not None and not _has_derive(src):
                sections = []
    built = [build_section(s) for s in sections]
    stores = [d for d in dx_stores(dx_store) if has_dx_runs(d.path)] if isinstance(dx_store, (list, tuple)) \
        else dx_stores(dx_store)
    if not stores:
        return ReportData(sections=built)
    parts = [(d, build_dx(d.path, report_dir or Path("."), heading=d.heading, intro=d.intro,
                          include_flagged=analysis.include_flagged)) for d in stores]
    return ReportData(sections=built, dx_html="\n".join(p.html for _, p in parts),
                      dx_markdown="\n".join(p.markdown for _, p in parts),
                      dx_figures={("" if d.key == "dx" else d.key.removeprefix("dx-") + "-") + name: svg
                                  for d, p in parts for name, svg in p.figures.items()})


def _has_derive(src: Path) -> bool:
    try:
        load_selected(src, include_flagged=True)
    except StatsError:
        return False
    return True


def write_report(
    source: str | Path | None = None,
    analysis: Analysis = Analysis(),
    *,
    html: str | Path | None = None,
    markdown: str | Path | None = None,
    figures_dir: str | Path | None = None,
    sections: list[SectionSpec] | None = None,
    dx_store: str | Path | DxStore | list[str | Path | DxStore] | None = None,
    png: bool = False,
    title: str = "",
) -> ReportFiles:
    """Write the report of ``source`` (campaign folder or per-run CSV) analysed as ``analysis``
    says (``compare`` None picks no-skill:with-skill, or the only two conditions present, or else
    summarises), or of ``sections``. ``figures_dir`` defaults to ``<html stem>-figures`` beside the
    HTML (or the Markdown); ``png`` also renders each figure to PNG with a local headless Chromium.
    """
    if html is None and markdown is None:
        raise StatsError("nothing to write: pass --html and/or --md")
    html_path = Path(html) if html is not None else None
    md_path = Path(markdown) if markdown is not None else None
    anchor = html_path or md_path
    data = build_report_data(source, analysis, sections=sections, dx_store=dx_store, report_dir=anchor.resolve().parent)
    fig_dir = Path(figures_dir) if figures_dir is not None else anchor.with_name(f"{anchor.stem}-figures")
    html_text = render_html(data, html_path, title=title) if html_path else None
    md_text = render_markdown(data, title=title) if md_path else None
    named = {("" if len(data.sections) == 1 else f"{section.key}-") + name: svg
             for section in data.sections for name, svg in section.figures.items()}
    named |= {f"dx-{name}": svg for name, svg in data.dx_figures.items()}
    figures = [write_figure(fig_dir / f"{name}.svg", svg) for name, svg in named.items()]
    if png:
        figures += [svg_to_png(path, path.with_suffix(".png")) for path in list(figures)]
    if md_text is not None:
        write_text_atomic(md_path, md_text)
    if html_text is not None:
        write_text_atomic(html_path, html_text)
    return ReportFiles(html=html_path, markdown=md_path, figures=figures)


__all__ = ["ReportFiles", "SectionSpec", "build_report_data", "build_section", "write_report"]
