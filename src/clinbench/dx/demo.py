"""The sequential-diagnosis part of ``clinbench demo``: offline agents on the demo cases.

Runs ``oracle`` (harness sanity: must be 100%), ``ed-instant`` (the candidate-list baseline
from the vignette alone, no cost) and ``ed-workup`` (the same baseline after one visit of
questions and the confirmatory tests of its leading candidates) on every bundled demo case
with the offline gatekeeper and judge, into ``out_dir`` (its own campaign store), and returns
printable summary lines (the baseline's accuracy first); the caller draws the accuracy-cost plot
with the report's figures (``clinbench.report.dx_section.write_dx_plot``).
Rerunning skips finished runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clinbench.dx.cases import demo_cases
from clinbench.dx.run import DxConfig, run_dx_campaign
from clinbench.records import STORE_FILE, RunRecord
from clinbench.stats import accuracy

DEMO_AGENTS = ("oracle", "ed-instant", "ed-workup")


def run_demo_dx(out_dir: str | Path, *, agents: tuple[str, ...] = DEMO_AGENTS,
                progress: Callable[[RunRecord], None] | None = None) -> list[str]:
    out_dir = Path(out_dir)
    cases = demo_cases()
    run_dx_campaign(cases, [DxConfig(agent=agent) for agent in agents], out_dir, progress=progress)
    runs = accuracy.dx_runs(out_dir)
    summaries = accuracy.summarise(runs)
    lines = [f"{len(cases)} synthetic demo cases; offline gatekeeper and judge; store {out_dir / STORE_FILE}"]
    by = {s.agent: s for s in summaries}
    for name in ("ed-workup", "ed-instant"):
        s = by.get(name)
        if s is not None and s.accuracy is not None:
            lines.append(f"offline baseline {name}: {round(s.accuracy * s.scored)}/{s.scored} correct")
    lines += [s.describe() for s in summaries]
    names = set(by)
    for a, b in (("ed-instant", "ed-workup"), ("ed-workup", "oracle")):  # base, new
        if {a, b} <= names:
            t = accuracy.compare(runs, a, b)
            lines.append(f"{a} → {b}: {t.delta * 100:+.1f} accuracy points, one-sided paired permutation "
                         f"p = {t.p_value:.2g} ({t.pairs} pairs)")
    return lines
