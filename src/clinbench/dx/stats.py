"""Figures of a diagnosis campaign: accuracy with a bootstrap CI, mean cost, a paired test, a plot.

Accuracy is the share of runs the judge scored 4 or more (reward 1.0); tests ordered per case are read
from each run's ledger.json (agents and clinicians alike). Accuracy's interval is the
project's percentile bootstrap (``clinbench.stats.bootstrap.percentile_ci``); two agents
are compared with the paper's one-sided paired permutation test
(``clinbench.stats.permutation.paired_permutation_test``, 10,000 resamples), pairing runs
by (case, trial). The accuracy-cost plot is a plain SVG written atomically.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

from clinbench.atomic import write_text_atomic
from clinbench.records.store import Store
from clinbench.errors import DataError
from clinbench.stats.bootstrap import percentile_ci
from clinbench.stats.permutation import paired_permutation_test

DRAWS = 10000  # the paper's resample count


@dataclass
class AgentSummary:
    agent: str
    runs: int
    scored: int
    accuracy: float | None  # None when no run was scored (never nan)
    ci: tuple[float, float] | None
    mean_cost: float | None
    mean_judge: float | None
    errors: int
    cost_ci: tuple[float, float] | None = None
    mean_tests: float | None = None  # tests ordered per scored run (from each run's ledger.json)

    def describe(self) -> str:
        """One printable line: accuracy with CI, mean cost, judge mean, runs and errors."""
        if self.accuracy is None:
            return f"{self.agent}: no scored run ({self.runs} runs, {self.errors} errors)"
        text = (f"{self.agent}: accuracy {self.accuracy:.1%} (95% CI {self.ci[0]:.1%}-{self.ci[1]:.1%}), "
                f"mean cost ${self.mean_cost:,.0f}, mean judge score {self.mean_judge:.2f}, {self.runs} runs")
        if self.mean_tests is not None:
            text += f", {self.mean_tests:.1f} tests ordered per case"
        return text + (f", {self.errors} errors" if self.errors else "")


def fmt_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def fmt_usd(x: float | None) -> str:
    return "n/a" if x is None else f"${x:,.0f}"


@dataclass
class PairedTest:
    """``--compare BASE:NEW`` as in `clinbench stats`: a is the base, b the new agent, delta = b − a."""

    agent_a: str
    agent_b: str
    pairs: int
    accuracy_a: float
    accuracy_b: float
    p_value: float  # one-sided: b (new) more accurate than a (base)
    delta: float = 0.0  # accuracy_b − accuracy_a over the paired runs


def _key(r: dict) -> str:
    """The compared unit: agent, its model when it has one, and any non-default gatekeeper
    or judge."""
    model = r.get("model") or ""
    key = r["agent"] if not model or model == "all-MiniLM-L6-v2" or r["agent"].startswith("scripted") \
        else f"{r['agent']}:{model}"
    settings = [f"{col}={r[col]}" for col in ("gatekeeper", "judge") if r.get(col) and r[col] != "offline"]
    return key + (f" ({', '.join(settings)})" if settings else "")


def dx_runs(directory: str | Path) -> list[dict]:
    """The store's dx runs, each with ``tests_ordered`` from its evidence's ledger.json (None without one)."""
    runs = Store.open(directory).runs(benchmark="dx")
    if not runs:
        raise DataError(f"no dx runs in {directory}: run 'clinbench dx run --out {directory}' first")
    for r in runs:
        r["tests_ordered"] = _tests_ordered(Path(directory) / (r["evidence_dir"] or "") / "ledger.json")
    return runs


def _tests_ordered(ledger: Path) -> int | None:
    try:
        value = json.loads(ledger.read_text(encoding="utf-8")).get("tests_ordered")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def summarise(runs: list[dict], *, level: float = 0.95) -> list[AgentSummary]:
    out = []
    for agent in sorted({_key(r) for r in runs}):
        rows = [r for r in runs if _key(r) == agent]
        scored = [r for r in rows if r["reward"] is not None]
        rewards = [float(r["reward"]) for r in scored]
        acc = sum(rewards) / len(rewards) if rewards else None
        ci = None
        if rewards:
            ci = percentile_ci(rewards, draws=DRAWS, seed=0, level=level) if len(rewards) > 1 else (acc, acc)
            ci = (float(ci[0]), float(ci[1]))
        costs = [float(r["cost"]) for r in scored if r["cost"] is not None]
        cost_ci = None
        if len(costs) > 1:
            lo, hi = percentile_ci(costs, draws=DRAWS, seed=0, level=level)
            cost_ci = (float(lo), float(hi))
        judges = [r["judge_score"] for r in scored if r["judge_score"] is not None]
        tests = [r["tests_ordered"] for r in scored if r.get("tests_ordered") is not None]
        out.append(AgentSummary(agent, len(rows), len(scored), acc, ci,
                                sum(costs) / len(costs) if costs else None,
                                sum(judges) / len(judges) if judges else None,
                                sum(r["status"] != "ok" for r in rows), cost_ci,
                                sum(tests) / len(tests) if tests else None))
    return out


def compare(runs: list[dict], agent_a: str, agent_b: str) -> PairedTest:
    """Paired test of ``agent_b`` (new) against ``agent_a`` (base) on the (case, trial) pairs both scored."""
    agents = {_key(r) for r in runs}
    for a in (agent_a, agent_b):
        if a not in agents:
            raise DataError(f"no runs of agent {a!r}; agents here: {', '.join(sorted(agents))}")
    by = {(_key(r), r["task"], r["trial"]): r["reward"] for r in runs if r["reward"] is not None}
    keys = sorted({(t, k) for (_, t, k) in by})
    pairs = [(by[(agent_a, t, k)], by[(agent_b, t, k)]) for t, k in keys
             if (agent_a, t, k) in by and (agent_b, t, k) in by]
    if len(pairs) < 2:
        raise DataError(f"{agent_a} and {agent_b} share {len(pairs)} scored (case, trial) pairs; need at least 2")
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    p = paired_permutation_test(b, a, draws=DRAWS, seed=0, alternative="greater")
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    return PairedTest(agent_a, agent_b, len(pairs), mean_a, mean_b, float(p), mean_b - mean_a)


def pareto(summaries: list[AgentSummary]) -> list[AgentSummary]:
    """The agents no other agent beats on both accuracy (higher) and mean cost (lower), cheapest first."""
    pts = [s for s in summaries if s.accuracy is not None and s.mean_cost is not None]
    front = [s for s in pts if not any((o.accuracy >= s.accuracy and o.mean_cost <= s.mean_cost)
                                       and (o.accuracy > s.accuracy or o.mean_cost < s.mean_cost) for o in pts)]
    return sorted(front, key=lambda s: s.mean_cost)


def accuracy_cost_svg_text(summaries: list[AgentSummary], *, title: str = "Accuracy vs cost") -> str:
    """Mean cost (x, with its bootstrap interval) against accuracy (y, with its interval), one
    point per agent, the Pareto front as a line; labels are kept inside the canvas."""
    pts = [s for s in summaries if s.accuracy is not None and s.mean_cost is not None]
    if not pts:
        raise DataError("nothing to plot: no scored runs with a cost")
    w, left, right, top, bottom = 760, 70, 30, 40, 60
    legend = 18 * len(pts)
    h = 420 + legend
    xmax = max(max((s.cost_ci or (0, s.mean_cost))[1] for s in pts) * 1.1, 500.0)  # free agents keep an axis
    sx = lambda c: left + (w - left - right) * c / xmax  # noqa: E731
    sy = lambda a: top + (420 - top - bottom) * (1 - a)  # noqa: E731
    base = 420 - bottom
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15">{html.escape(title)}</text>',
             f'<line x1="{left}" y1="{base}" x2="{w - right}" y2="{base}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{base}" stroke="black"/>',
             f'<text x="{w / 2}" y="{base + 38}" text-anchor="middle">mean cost per case (USD), 95% interval</text>',
             f'<text x="18" y="{base / 2}" text-anchor="middle" transform="rotate(-90 18 {base / 2})">'
             'accuracy (judge &#8805; 4), 95% CI</text>']
    for i in range(6):
        a = i / 5
        parts.append(f'<line x1="{left - 4}" y1="{sy(a):.1f}" x2="{left}" y2="{sy(a):.1f}" stroke="black"/>'
                     f'<text x="{left - 8}" y="{sy(a) + 4:.1f}" text-anchor="end">{a:.0%}</text>')
        c = xmax * i / 5
        parts.append(f'<line x1="{sx(c):.1f}" y1="{base}" x2="{sx(c):.1f}" y2="{base + 4}" stroke="black"/>'
                     f'<text x="{sx(c):.1f}" y="{base + 18}" text-anchor="middle">${c:,.0f}</text>')
    front = pareto(pts)
    if len(front) > 1:
        path = " ".join(f"{sx(s.mean_cost):.1f},{sy(s.accuracy):.1f}" for s in front)
        parts.append(f'<polyline points="{path}" fill="none" stroke="#2ca02c" stroke-dasharray="4 3"/>')
    for n, s in enumerate(pts, 1):
        x, y = sx(s.mean_cost), sy(s.accuracy)
        parts.append(f'<line x1="{x:.1f}" y1="{sy(s.ci[0]):.1f}" x2="{x:.1f}" y2="{sy(s.ci[1]):.1f}" stroke="#1f77b4"/>')
        if s.cost_ci:
            parts.append(f'<line x1="{sx(s.cost_ci[0]):.1f}" y1="{y:.1f}" x2="{sx(s.cost_ci[1]):.1f}" y2="{y:.1f}" '
                         'stroke="#1f77b4"/>')
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{"#2ca02c" if s in front else "#1f77b4"}"/>')
        anchor, dx = ("end", -8) if x > w * 0.7 else ("start", 8)
        parts.append(f'<text x="{x + dx:.1f}" y="{y - 6:.1f}" text-anchor="{anchor}">{n}</text>')
        parts.append(f'<text x="{left}" y="{420 + 18 * (n - 1):.1f}">{n}. {html.escape(s.agent)}: '
                     f'{s.accuracy:.0%} [{s.ci[0]:.0%}, {s.ci[1]:.0%}], ${s.mean_cost:,.0f}'
                     f'{" (Pareto front)" if s in front else ""}</text>')
    parts.append("</svg>\n")
    return "\n".join(parts)


def accuracy_cost_svg(summaries: list[AgentSummary], path: str | Path, *, title: str = "Accuracy vs cost") -> Path:
    """``accuracy_cost_svg_text`` written atomically to ``path``."""
    return write_text_atomic(path, accuracy_cost_svg_text(summaries, title=title))
