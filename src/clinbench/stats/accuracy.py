"""Accuracy of judged runs (the diagnosis benchmark): per agent, with intervals, a paired test, the Pareto front.

Accuracy is the share of runs the judge scored 4 or more (reward 1.0); tests ordered per case are read
from each run's ledger.json (agents and clinicians alike). Accuracy's and mean cost's intervals are the
project's percentile bootstrap (``clinbench.stats.bootstrap.percentile_ci``); two agents are compared
with the paper's one-sided paired permutation test (``clinbench.stats.permutation.paired_permutation_test``,
10,000 resamples), pairing runs by (case, trial). The figure of these numbers is drawn with the report's
other figures (``clinbench.report.svg.accuracy_cost_plot``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from clinbench.duck import duckdb
from clinbench.errors import DataError
from clinbench.records import STORE_FILE
from clinbench.records.store import Store
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

    @property
    def plottable(self) -> bool:
        return self.accuracy is not None and self.mean_cost is not None


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


def run_key(r: dict) -> str:
    """The compared unit: agent, its model when it has one, and any non-default gatekeeper
    or judge."""
    model = r.get("model") or ""
    key = r["agent"] if not model or model == "all-MiniLM-L6-v2" or r["agent"].startswith("scripted") \
        else f"{r['agent']}:{model}"
    settings = [f"{col}={r[col]}" for col in ("gatekeeper", "judge") if r.get(col) and r[col] != "offline"]
    return key + (f" ({', '.join(settings)})" if settings else "")


def has_dx_runs(directory: str | Path) -> bool:
    """Whether ``directory`` holds a results store with dx runs (read-only; anything unreadable is no)."""
    store = Path(directory) / STORE_FILE
    if not store.is_file():
        return False
    try:
        con = duckdb.connect(str(store), read_only=True)
    except duckdb.Error:
        return False
    try:
        return bool(con.execute("SELECT count(*) FROM runs WHERE benchmark = 'dx'").fetchone()[0])
    except duckdb.Error:
        return False
    finally:
        con.close()


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


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _interval(values: list[float], level: float) -> tuple[float, float] | None:
    lo, hi = percentile_ci(values, draws=DRAWS, seed=0, level=level)
    return float(lo), float(hi)


def summarise(runs: list[dict], *, level: float = 0.95) -> list[AgentSummary]:
    """One summary per compared unit (``run_key``), by name."""
    out = []
    for agent in sorted({run_key(r) for r in runs}):
        rows = [r for r in runs if run_key(r) == agent]
        scored = [r for r in rows if r["reward"] is not None]
        rewards = [float(r["reward"]) for r in scored]
        acc = _mean(rewards)
        ci = None if not rewards else _interval(rewards, level) if len(rewards) > 1 else (acc, acc)
        costs = [float(r["cost"]) for r in scored if r["cost"] is not None]
        out.append(AgentSummary(
            agent, len(rows), len(scored), acc, ci, _mean(costs),
            _mean([r["judge_score"] for r in scored if r["judge_score"] is not None]),
            sum(r["status"] != "ok" for r in rows), _interval(costs, level) if len(costs) > 1 else None,
            _mean([r["tests_ordered"] for r in scored if r.get("tests_ordered") is not None])))
    return out


def compare(runs: list[dict], agent_a: str, agent_b: str) -> PairedTest:
    """Paired test of ``agent_b`` (new) against ``agent_a`` (base) on the (case, trial) pairs both scored."""
    agents = {run_key(r) for r in runs}
    for a in (agent_a, agent_b):
        if a not in agents:
            raise DataError(f"no runs of agent {a!r}; agents here: {', '.join(sorted(agents))}")
    by = {(run_key(r), r["task"], r["trial"]): r["reward"] for r in runs if r["reward"] is not None}
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
    pts = [s for s in summaries if s.plottable]
    front = [s for s in pts if not any((o.accuracy >= s.accuracy and o.mean_cost <= s.mean_cost)
                                       and (o.accuracy > s.accuracy or o.mean_cost < s.mean_cost) for o in pts)]
    return sorted(front, key=lambda s: s.mean_cost)
