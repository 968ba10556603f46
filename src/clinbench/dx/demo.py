"""The sequential-diagnosis part of ``clinbench demo``: offline baselines on the demo cases.

Runs ``oracle`` (harness sanity: must be 100%) and ``instant-embed`` (vignette-only
embedding baseline) on every bundled demo case with the offline gatekeeper and judge,
into ``out_dir`` (its own campaign store), writes the accuracy-cost plot, and returns
printable summary lines. Rerunning skips finished runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clinbench.campaign.store import RunRecord
from clinbench.dx import stats as dxstats
from clinbench.dx.cases import demo_cases
from clinbench.dx.run import DxConfig, run_campaign

DEMO_AGENTS = ("oracle", "instant-embed")


def run_demo_dx(out_dir: str | Path, *, agents: tuple[str, ...] = DEMO_AGENTS,
                progress: Callable[[RunRecord], None] | None = None) -> list[str]:
    out_dir = Path(out_dir)
    cases = demo_cases()
    for agent in agents:
        run_campaign(cases, DxConfig(agent=agent), out_dir, progress=progress)
    runs = dxstats.dx_runs(out_dir)
    summaries = dxstats.summarise(runs)
    svg = dxstats.accuracy_cost_svg(summaries, out_dir / "dx_accuracy_cost.svg",
                                    title="Demo cases: accuracy vs cost")
    lines = [f"{len(cases)} synthetic demo cases; offline gatekeeper and judge; store {out_dir / 'results.duckdb'}"]
    for s in summaries:
        lines.append(f"{s.agent}: accuracy {s.accuracy:.1%} (95% CI {s.ci[0]:.1%}-{s.ci[1]:.1%}), "
                     f"mean cost ${s.mean_cost:,.0f}, mean judge score {s.mean_judge:.2f}, {s.runs} runs")
    names = {s.agent for s in summaries}
    if {"oracle", "instant-embed"} <= names:
        t = dxstats.compare(runs, "oracle", "instant-embed")
        lines.append(f"oracle vs instant-embed: one-sided paired permutation p = {t.p_value:.2g} ({t.pairs} pairs)")
    lines.append(f"accuracy-cost plot: {svg}")
    return lines
