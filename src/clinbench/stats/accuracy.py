"""Accuracy of judged runs (the diagnosis benchmark): per agent, with intervals, a paired test, the Pareto front.

Accuracy is the share of a case's runs the judge scored 4 or more (reward 1.0), averaged over cases;
tests ordered per case are read from each run's ledger.json (agents and clinicians alike). The runs
are those the audit lets into a statistic, as for derive runs (``clinbench.stats.runs.audit_rule``):
unpublishable runs are left out unless ``include_flagged``, and a run flagged for its agent's own
conduct counts as wrong (reward 0, judge score 1), as does an agent failure the judge never scored
(``unscored_failure``: as ``dx run`` writes one, and the older stores' ``error`` and ``timeout``
without a reward); harness errors are in no statistic. Trials of one case are not independent: accuracy, mean cost, mean judge score and
tests ordered are case-balanced (each case's trials averaged, then the cases, as ``clinbench stats``
averages a task's runs), their intervals percentile bootstraps of the case means (none with one
case), and two agents are compared with the paper's one-sided paired
permutation test (``clinbench.stats.permutation.paired_permutation_test``, 10,000 resamples) on the
cases both scored, each agent's trials of a case averaged first. The figure of these numbers is drawn
with the report's other figures (``clinbench.report.svg.accuracy_cost_plot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clinbench import untrusted
from clinbench.duck import duckdb
from clinbench.errors import DataError
from clinbench.records import STORE_FILE, RunStatus
from clinbench.records.store import Store
from clinbench.stats.bootstrap import bootstrap_distribution, percentile_interval
from clinbench.stats.compare import exact_mean
from clinbench.stats.groups import split_pair
from clinbench.stats.permutation import paired_permutation_test
from clinbench.stats.resamples import BOOTSTRAP_DRAWS, PAPER_PERMUTATION_DRAWS
from clinbench.stats.runs import AGENT_FAILED, CHARGE, audit_rule, unscored_failure



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
        ci = "one case: no CI" if self.ci is None else f"95% CI {self.ci[0]:.1%}-{self.ci[1]:.1%}"
        text = (f"{self.agent}: accuracy {self.accuracy:.1%} ({ci}), "
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
    pairs: int  # cases both agents scored (each agent's trials of a case averaged)
    accuracy_a: float  # mean over those cases of the case's accuracy
    accuracy_b: float
    p_value: float  # one-sided: b (new) more accurate than a (base)
    delta: float = 0.0  # accuracy_b − accuracy_a over the paired cases


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


class DxRuns(list):
    """The dx runs a statistic uses (a list of run dicts), with what the audit did to the store's."""

    flagged_excluded: int = 0  # unpublishable: left out
    flagged_charged: int = 0  # flagged for the agent's own conduct: counted as wrong

    def audit_text(self) -> str:
        return (f"{self.flagged_excluded} flagged runs excluded; "
                f"{self.flagged_charged} flagged for their agent's conduct counted as wrong")


def audited(rows: list[dict], *, include_flagged: bool = False) -> DxRuns:
    """The dx ``rows`` a statistic uses, by the audit's rule (``audit_rule``): unpublishable runs left out
    unless ``include_flagged``, a charged run scored as ``CHARGE``, an agent failure the judge never scored
    as ``CHARGE`` too (``unscored_failure``)."""
    harness = [r["status"] == RunStatus.HARNESS_ERROR for r in rows]
    keep, charged = audit_rule([r.get("publishable") is not False for r in rows],
                               [bool(r.get("flag_charged")) for r in rows], harness, include_flagged)
    # an agent failure the judge never scored (as `dx run` writes one: reward 0, no judge score; an older store's
    # error/timeout: no reward either) is wrong on every figure, judge score included, as derive counts it
    failed = unscored_failure([np.nan if r["reward"] is None or (r["status"] in AGENT_FAILED and r["judge_score"] is None)
                               else r["reward"] for r in rows], harness)
    runs = DxRuns()
    for r, kept, zeroed, unscored in zip(rows, keep.tolist(), charged.tolist(), failed.tolist()):
        if kept:
            runs.append({**r, "reward": CHARGE["reward"], "judge_score": CHARGE["judge_score"]}
                        if zeroed or unscored else r)
    runs.flagged_excluded, runs.flagged_charged = int((~keep).sum()), int(charged.sum())
    return runs


def dx_runs(directory: str | Path, *, include_flagged: bool = False) -> DxRuns:
    """The store's dx runs a statistic uses (``audit_rule``: unpublishable runs left out unless
    ``include_flagged``, a charged run scored as ``CHARGE``), each with ``tests_ordered`` from its
    evidence's ledger.json (None without one)."""
    rows = Store.open(directory).runs(benchmark="dx")
    if not rows:
        raise DataError(f"no dx runs in {directory}: run 'clinbench dx run --out {directory}' first")
    runs = audited(rows, include_flagged=include_flagged)
    if not runs:
        raise DataError(f"every dx run in {directory} was flagged by the audit ({runs.flagged_excluded} runs); "
                        "pass --include-flagged to see them as recorded")
    for r in runs:
        r["tests_ordered"] = _tests_ordered(Path(directory) / (r["evidence_dir"] or "") / "ledger.json")
    return runs


def _tests_ordered(ledger: Path) -> int | None:
    try:
        value = untrusted.read_json(ledger).get("tests_ordered")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _case_means(values: list[float], cases: list[str]) -> list[float]:
    """Each case's mean over its trials (``values[i]`` a run of case ``cases[i]``), cases in order."""
    by: dict[str, list[float]] = {}
    for v, c in zip(values, cases):
        by.setdefault(c, []).append(float(v))
    return [exact_mean(v) for _, v in sorted(by.items())]


def _case_level(values: list[float], cases: list[str], level: float
                ) -> tuple[float | None, tuple[float, float] | None]:
    """The case-balanced mean of ``values`` (each case's trials averaged, then the cases) and its
    percentile-bootstrap CI resampling those case means, as ``clinbench stats`` bootstraps task means;
    no CI with fewer than two cases (nothing to resample)."""
    means = _case_means(values, cases)
    if not means:
        return None, None
    mean = exact_mean(means)
    if len(means) < 2:
        return mean, None
    lo, hi = percentile_interval(bootstrap_distribution(np.asarray(means), draws=BOOTSTRAP_DRAWS, seed=0), level)
    return mean, (float(lo), float(hi))


def summarise(runs: list[dict], *, level: float = 0.95) -> list[AgentSummary]:
    """One summary per compared unit (``run_key``), by name: accuracy, mean cost, judge and tests ordered
    are case-balanced (a case's trials averaged, then the cases), so a case missing trials (harness
    errors) weighs what any other case weighs."""
    out = []
    for agent in sorted({run_key(r) for r in runs}):
        rows = [r for r in runs if run_key(r) == agent]
        scored = [r for r in rows if r["reward"] is not None]
        accuracy, ci = _case_level([float(r["reward"]) for r in scored], [r["task"] for r in scored], level)
        costed = [r for r in scored if r["cost"] is not None]
        mean_cost, cost_ci = _case_level([float(r["cost"]) for r in costed], [r["task"] for r in costed], level)
        judged = [r for r in scored if r["judge_score"] is not None]
        tested = [r for r in scored if r.get("tests_ordered") is not None]
        out.append(AgentSummary(
            agent, len(rows), len(scored), accuracy, ci, mean_cost,
            _case_level([float(r["judge_score"]) for r in judged], [r["task"] for r in judged], level)[0],
            sum(r["status"] != "ok" for r in rows), cost_ci,
            _case_level([float(r["tests_ordered"]) for r in tested], [r["task"] for r in tested], level)[0]))
    return out


def parse_pair(spec: str, runs: list[dict]) -> tuple[str, str]:
    """``--compare BASE:NEW`` split where both sides name agents present (an agent key may hold a
    colon: ``agent:model``)."""
    keys = {run_key(r) for r in runs}
    parts = spec.split(":")
    fitting = split_pair(parts, lambda v: v in keys)
    if len(fitting) == 1:
        return fitting[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]  # compare names the one it does not know
    raise DataError(f"--compare {spec!r} is not BASE:NEW with two of the agents here: {', '.join(sorted(keys))}")


def compare(runs: list[dict], agent_a: str, agent_b: str) -> PairedTest:
    """Paired test of ``agent_b`` (new) against ``agent_a`` (base) on the cases both scored, each agent's
    trials of a case averaged (trials of one case are not independent)."""
    agents = {run_key(r) for r in runs}
    for a in (agent_a, agent_b):
        if a not in agents:
            raise DataError(f"no runs of agent {a!r}; agents here: {', '.join(sorted(agents))}")
    by: dict[tuple[str, str], list[float]] = {}
    for r in runs:
        if r["reward"] is not None and run_key(r) in (agent_a, agent_b):
            by.setdefault((run_key(r), r["task"]), []).append(float(r["reward"]))
    cases = sorted({t for (_, t) in by if (agent_a, t) in by and (agent_b, t) in by})
    if len(cases) < 2:
        raise DataError(f"{agent_a} and {agent_b} share {len(cases)} scored cases; need at least 2")
    a = [exact_mean(by[(agent_a, t)]) for t in cases]
    b = [exact_mean(by[(agent_b, t)]) for t in cases]
    p = paired_permutation_test(b, a, draws=PAPER_PERMUTATION_DRAWS, seed=0, alternative="greater")
    # summed exactly, as dx stats' accuracy and stats' paired delta (the mean of the case deltas) are
    return PairedTest(agent_a, agent_b, len(cases), exact_mean(a), exact_mean(b), float(p),
                      exact_mean(y - x for x, y in zip(a, b)))


def pareto(summaries: list[AgentSummary]) -> list[AgentSummary]:
    """The agents no other agent beats on both accuracy (higher) and mean cost (lower), cheapest first."""
    pts = [s for s in summaries if s.plottable]
    front = [s for s in pts if not any((o.accuracy >= s.accuracy and o.mean_cost <= s.mean_cost)
                                       and (o.accuracy > s.accuracy or o.mean_cost < s.mean_cost) for o in pts)]
    return sorted(front, key=lambda s: s.mean_cost)
