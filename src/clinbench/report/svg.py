"""Figures as inline SVG, drawn by hand: no plotting library, no script, nothing fetched.

Every figure is a standalone ``<svg>`` element (with xmlns) so the same text is embedded in
the HTML report and written as a ``.svg`` file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from clinbench.atomic import write_text_atomic
from clinbench.errors import DataError
from clinbench.stats.accuracy import AgentSummary, pareto
from clinbench.stats.formatting import signed

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
COLOUR_A = "#8c96a6"  # the baseline condition: muted
COLOUR_B = "#1f6fb2"  # the compared condition: the eye goes here
COLOUR_UP = "#1f6fb2"
COLOUR_DOWN = "#c0392b"
GRID = "#e3e6ea"
INK = "#1d2329"
MUTED = "#5b6570"
COLOUR_PARETO = "#2ca02c"  # the agents no other beats on both accuracy and cost


@dataclass
class ForestRow:
    label: str
    estimate: float
    lo: float | None  # None: no interval (one run a side), the point alone is drawn
    hi: float | None
    group: str = ""  # e.g. the task's family, shown in the tooltip

    def text(self) -> str:
        """'+0.015 [-0.010, +0.040]', both at three decimals; the estimate alone without an interval."""
        if self.lo is None or self.hi is None:
            return f"{signed(self.estimate)} (no interval: one run)"
        return f"{signed(self.estimate)} [{signed(self.lo)}, {signed(self.hi)}]"


def write_figure(path: str | Path, svg: str) -> Path:
    """One figure's SVG text written to ``path`` whole (temp file, then rename): every figure file."""
    return write_text_atomic(path, svg + "\n")


def _fmt(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if abs(x - round(x, 1)) < 1e-9 else f"{x:.2f}"


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values from at or below ``lo`` to at or above ``hi``, about ``target`` intervals."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo < 1e-12:
        centre = lo if math.isfinite(lo) else 0.0
        lo, hi = centre - 0.1, centre + 0.1
    raw = (hi - lo) / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [round(k * step, 10) + 0.0 for k in range(first, last + 1)]


def _text(x: float, y: float, s: str, *, anchor: str = "start", size: int = 12, fill: str = INK, weight: str = "normal", cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
            f'font-weight="{weight}"{c}>{escape(s)}</text>')


def _open(width: int, height: int, title: str, cls: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label={quoteattr(title)} font-family={quoteattr(FONT)}>',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]


def forest_plot(rows: Sequence[ForestRow], overall: ForestRow | None, *, title: str, x_label: str, width: int = 780,
                value_label: str = "delta [CI]") -> str:
    """One row per item: point estimate and interval on a shared axis with a zero line.

    ``overall`` (the headline mean and its CI) is drawn last as a diamond.
    """
    label_w, right_pad, row_h, top, bottom = 260, 150, 22, 46, 44
    n = len(rows) + (1 if overall else 0)
    height = top + n * row_h + (8 if overall else 0) + bottom
    values = [v for r in [*rows, *([overall] if overall else [])] for v in (r.lo, r.hi, r.estimate)
              if v is not None and math.isfinite(v)]
    lo = min([0.0, *values])
    hi = max([0.0, *values])
    ticks = nice_ticks(lo, hi)
    dmin, dmax = min(ticks[0], lo), max(ticks[-1], hi)
    x0, x1 = label_w, width - right_pad

    def sx(v: float) -> float:
        return x0 + (v - dmin) / (dmax - dmin) * (x1 - x0)

    out = _open(width, height, title, "figure forest")
    out.append(_text(12, 20, title, size=14, weight="600"))
    plot_bottom = top + n * row_h + (8 if overall else 0)
    for t in ticks:
        out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top - 6}" y2="{plot_bottom}" stroke="{GRID}"/>')
        out.append(_text(sx(t), plot_bottom + 16, f"{t:+.2f}" if t else "0", anchor="middle", size=11, fill=MUTED))
    out.append(f'<line x1="{sx(0):.1f}" x2="{sx(0):.1f}" y1="{top - 6}" y2="{plot_bottom}" stroke="{INK}" stroke-width="1"/>')
    out.append(_text((x0 + x1) / 2, plot_bottom + 34, x_label, anchor="middle", size=12, fill=MUTED))
    out.append(_text(x1 + 8, top - 12, value_label, size=11, fill=MUTED))
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        colour = COLOUR_UP if r.estimate > 0 else (COLOUR_DOWN if r.estimate < 0 else MUTED)
        tip = f"{r.label}{' (' + r.group + ')' if r.group else ''}: {r.text()}"
        out.append(f'<g class="forest-row" data-task={quoteattr(r.label)} data-delta="{r.estimate:.6f}">')
        out.append(f"<title>{escape(tip)}</title>")
        if i % 2 == 0:
            out.append(f'<rect x="4" y="{y - row_h / 2:.1f}" width="{width - 8}" height="{row_h}" fill="#f6f7f9"/>')
        out.append(_text(x0 - 10, y + 4, r.label, anchor="end", size=12))
        if r.lo is not None and r.hi is not None:
            out.append(f'<line x1="{sx(r.lo):.1f}" x2="{sx(r.hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}" '
                       'stroke-width="2"/>')
        out.append(f'<circle cx="{sx(r.estimate):.1f}" cy="{y:.1f}" r="4.5" fill="{colour}"/>')
        out.append(_text(x1 + 8, y + 4, r.text(), size=10.5, fill=MUTED))
        out.append("</g>")
    if overall:
        y = top + len(rows) * row_h + 8 + row_h / 2
        out.append(f'<line x1="8" x2="{width - 8}" y1="{y - row_h / 2 - 4:.1f}" y2="{y - row_h / 2 - 4:.1f}" stroke="{GRID}"/>')
        out.append(f'<g class="forest-overall" data-delta="{overall.estimate:.6f}">')
        out.append(f"<title>{escape(f'{overall.label}: {overall.text()}')}</title>")
        out.append(_text(x0 - 10, y + 4, overall.label, anchor="end", size=12, weight="600"))
        cx, h = sx(overall.estimate), 7
        out.append(
            f'<polygon points="{sx(overall.lo):.1f},{y:.1f} {cx:.1f},{y - h:.1f} {sx(overall.hi):.1f},{y:.1f} {cx:.1f},{y + h:.1f}" '
            f'fill="{INK}"/>'
        )
        out.append(_text(x1 + 8, y + 4, overall.text(), size=10.5, weight="600"))
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def paired_bars(labels: Sequence[str], a: Sequence[float], b: Sequence[float], *, name_a: str, name_b: str,
                title: str, x_label: str = "mean reward", width: int = 780, cls: str = "family-bars") -> str:
    """Two horizontal bars per label (A muted, B coloured) on a 0–1 axis, values printed."""
    label_w, right_pad, group_h, bar_h, top, bottom = 220, 60, 30, 11, 52, 40
    height = top + len(labels) * group_h + bottom
    x0, x1 = label_w, width - right_pad

    def sx(v: float) -> float:
        return x0 + max(0.0, min(1.0, v)) * (x1 - x0)

    out = _open(width, height, title, f"figure {cls}")
    out.append(_text(12, 20, title, size=14, weight="600"))
    out.append(f'<rect x="{x0}" y="30" width="10" height="10" fill="{COLOUR_A}"/>')
    out.append(_text(x0 + 14, 39, name_a, size=11, fill=MUTED))
    off = x0 + 24 + 7 * len(name_a)
    out.append(f'<rect x="{off}" y="30" width="10" height="10" fill="{COLOUR_B}"/>')
    out.append(_text(off + 14, 39, name_b, size=11, fill=MUTED))
    plot_bottom = top + len(labels) * group_h
    for t in [0, 0.25, 0.5, 0.75, 1.0]:
        out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top - 4}" y2="{plot_bottom}" stroke="{GRID}"/>')
        out.append(_text(sx(t), plot_bottom + 16, _fmt(t), anchor="middle", size=11, fill=MUTED))
    out.append(_text((x0 + x1) / 2, plot_bottom + 34, x_label, anchor="middle", size=12, fill=MUTED))
    for i, (label, va, vb) in enumerate(zip(labels, a, b)):
        y = top + i * group_h
        out.append(f'<g class="bar-group" data-label={quoteattr(label)}>')
        out.append(f"<title>{escape(f'{label}: {name_a} {va:.3f}, {name_b} {vb:.3f}, delta {signed(vb - va)}')}</title>")
        out.append(_text(x0 - 10, y + group_h / 2 + 4, label, anchor="end", size=12))
        for j, (v, colour) in enumerate(((va, COLOUR_A), (vb, COLOUR_B))):
            by = y + 3 + j * (bar_h + 2)
            out.append(f'<rect x="{x0}" y="{by:.1f}" width="{sx(v) - x0:.1f}" height="{bar_h}" fill="{colour}"/>')
            out.append(_text(sx(v) + 4, by + bar_h - 1.5, f"{v:.3f}", size=10, fill=MUTED))
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def accuracy_cost_plot(summaries: Sequence[AgentSummary], *, title: str = "Accuracy vs cost", width: int = 760) -> str:
    """Mean cost (x, with its bootstrap interval) against accuracy (y, with its interval), one point
    per agent, the Pareto front as a dashed line and in green; a numbered legend below keeps the
    labels inside the canvas. Agents without a scored, costed run are left out (none: DataError)."""
    pts = [s for s in summaries if s.plottable]
    if not pts:
        raise DataError("nothing to plot: no scored runs with a cost")
    left, right, top, plot_h, bottom = 70, 30, 40, 320, 60
    base = top + plot_h
    height = base + bottom + 18 * len(pts)
    ticks = nice_ticks(0.0, max(max((s.cost_ci or (0, s.mean_cost))[1] for s in pts) * 1.1, 500.0), target=5)
    xmax = ticks[-1]  # free agents keep an axis

    def sx(c: float) -> float:
        return left + (width - left - right) * c / xmax

    def sy(a: float) -> float:
        return top + plot_h * (1 - a)

    out = _open(width, height, title, "figure accuracy-cost")
    out.append(_text(12, 20, title, size=14, weight="600"))
    for i in range(6):
        a = i / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{sy(a):.1f}" y2="{sy(a):.1f}" stroke="{GRID}"/>')
        out.append(_text(left - 8, sy(a) + 4, f"{a:.0%}", anchor="end", size=11, fill=MUTED))
    for c in ticks:
        out.append(f'<line x1="{sx(c):.1f}" x2="{sx(c):.1f}" y1="{base}" y2="{base + 4}" stroke="{INK}"/>')
        out.append(_text(sx(c), base + 18, f"${c:,.0f}", anchor="middle", size=11, fill=MUTED))
    out.append(f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="{INK}"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{base}" stroke="{INK}"/>')
    out.append(_text(width / 2, base + 38, "mean cost per case (USD), 95% interval", anchor="middle", fill=MUTED))
    out.append(f'<text x="18" y="{top + plot_h / 2:.1f}" text-anchor="middle" font-size="12" fill="{MUTED}" '
               f'transform="rotate(-90 18 {top + plot_h / 2:.1f})">accuracy (judge &#8805; 4), 95% CI</text>')
    front = pareto(pts)
    if len(front) > 1:
        path = " ".join(f"{sx(s.mean_cost):.1f},{sy(s.accuracy):.1f}" for s in front)
        out.append(f'<polyline points="{path}" fill="none" stroke="{COLOUR_PARETO}" stroke-dasharray="4 3"/>')
    for n, s in enumerate(pts, 1):
        x, y = sx(s.mean_cost), sy(s.accuracy)
        colour = COLOUR_PARETO if s in front else COLOUR_B
        ci = f" [{s.ci[0]:.0%}, {s.ci[1]:.0%}]" if s.ci else ""  # none with one case
        legend = (f"{n}. {s.agent}: {s.accuracy:.0%}{ci}, ${s.mean_cost:,.0f}"
                  f"{' (Pareto front)' if s in front else ''}")
        out.append(f'<g class="agent-point" data-agent={quoteattr(s.agent)}><title>{escape(legend)}</title>')
        if s.ci:
            out.append(f'<line x1="{x:.1f}" y1="{sy(s.ci[0]):.1f}" x2="{x:.1f}" y2="{sy(s.ci[1]):.1f}" stroke="{colour}"/>')
        if s.cost_ci:
            out.append(f'<line x1="{sx(s.cost_ci[0]):.1f}" y1="{y:.1f}" x2="{sx(s.cost_ci[1]):.1f}" y2="{y:.1f}" '
                       f'stroke="{colour}"/>')
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>')
        anchor, dx = ("end", -8) if x > width * 0.7 else ("start", 8)
        out.append(_text(x + dx, y - 6, str(n), anchor=anchor))
        out.append("</g>")
        out.append(_text(left, base + bottom + 18 * (n - 1), legend))
    out.append("</svg>")
    return "\n".join(out)
