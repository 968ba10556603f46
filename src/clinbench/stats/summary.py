"""A summary of any set of runs: task-balanced means with CIs, broken down, and what they cost.

Needs no second group, so it serves a campaign of one condition as well as any other.

* Overall and per condition / agent (``agent/model``) / model / schema: the task-balanced
  mean (each task's mean over its cells, agent, model, condition, schema, gatekeeper and judge,
  of each cell's mean over its trials, as comparisons pair them; then the mean over tasks) with
  a task-cluster percentile bootstrap CI (resample task means).
* Per family: the mean of its tasks' means, CI resampling those tasks.
* Per task: that mean, CI resampling its runs (one cell) or its cells' means.
* Strict passes of every row: the count and the cell-balanced share, as a comparison gives them
  (``clinbench.stats.compare.strict_count``).
* Status: runs ok, agent failures (reward 0, counted) and harness errors (in no figure).
* Usage per condition and agent: runs, tokens, dollars and seconds of the analysed runs (sums
  over the runs that recorded them, with how many did), and beside them what every attempt
  spent: the analysed runs, harness errors, flagged runs left out, and the tokens of attempts a
  --retry-* replaced (their dollars are not recorded).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from clinbench.records import RunStatus
from clinbench.stats.bootstrap import bootstrap_distribution, percentile_interval
from clinbench.stats.compare import Interval, StrictCount, cell_means, cells, exact_mean, no_nan, strict_count
from clinbench.stats.families import families_of
from clinbench.stats.resamples import BOOTSTRAP_DRAWS, task_draws
from clinbench.stats.runs import Runs


@dataclass
class MeanRow:
    """A task-balanced mean of one group (``value`` of ``by``)."""

    by: str
    value: str
    tasks: int
    runs: int
    mean: float
    ci: Interval | None  # None with one task (nothing to resample)
    strict: StrictCount | None


@dataclass
class TaskMean:
    task: str
    family: str
    runs: int
    mean: float
    ci: Interval | None
    strict: StrictCount | None
    agent_failed: int


@dataclass
class UsageRow:
    condition: str
    agent: str  # agent/model label
    runs: int
    runs_with_tokens: int
    input_tokens: int
    output_tokens: int
    runs_with_cost: int
    cost: float  # dollars
    seconds: float  # wall-clock, summed
    mean_seconds: float | None
    # every attempt of this condition and agent: analysed runs, harness errors, flagged runs left out,
    # and the tokens of attempts a --retry-* replaced (no dollars are recorded for those)
    all_attempts: int = 0  # recorded runs (replaced attempts are not counted here)
    all_input_tokens: int = 0
    all_output_tokens: int = 0
    all_cost: float = 0.0


@dataclass
class Summary:
    source: str
    benchmark: str
    seed: int
    draws: int
    level: float
    runs: int
    tasks: int
    families: int
    task_draws: int  # each task's interval (``resamples.task_draws``)
    flagged_excluded: int
    missing_reward: int
    status: dict[str, int]  # ok / agent-failed / harness-error
    overall: MeanRow
    per_condition: list[MeanRow]
    per_agent: list[MeanRow]
    per_model: list[MeanRow]
    per_schema: list[MeanRow]
    per_family: list[MeanRow]
    per_task: list[TaskMean]
    usage: list[UsageRow] = field(default_factory=list)
    kind: str = "summary"
    flagged_charged: int = 0  # flagged for their agent's own conduct: counted, as reward 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data; NaN (a figure that does not exist) becomes None."""
        return no_nan(asdict(self))


def _ci(values: np.ndarray, *, draws: int, seed: int, level: float) -> Interval | None:
    if values.size < 2:
        return None
    return Interval(*percentile_interval(bootstrap_distribution(values, draws=draws, seed=seed), level))


def _task_means(runs: Runs, mask: np.ndarray, cell: np.ndarray) -> dict[str, float]:
    """Each task's mean over its cells (agent, model, condition, schema, gatekeeper, judge) of each cell's
    mean over its trials, as a comparison pairs them: more trials of one agent or model weigh no more."""
    per: dict[str, list[float]] = {}
    for (task, _), mean in sorted(cell_means(runs, mask, cell, runs.reward).items()):
        per.setdefault(task, []).append(mean)
    return {task: exact_mean(means) for task, means in per.items()}


def _mean_row(runs: Runs, mask: np.ndarray, cell: np.ndarray, by: str, value: str, *, draws: int, seed: int,
              level: float) -> MeanRow:
    means = np.array(list(_task_means(runs, mask, cell).values()))
    return MeanRow(by=by, value=value, tasks=int(means.size), runs=int(mask.sum()), mean=exact_mean(means),
                   ci=_ci(means, draws=draws, seed=seed, level=level), strict=strict_count(runs, mask, cell))


def _breakdown(runs: Runs, cell: np.ndarray, by: str, column: np.ndarray, **kw: Any) -> list[MeanRow]:
    return [_mean_row(runs, column == v, cell, by, str(v) or "(none)", **kw) for v in sorted(set(column.tolist()))]


def _spent(runs: Runs) -> dict[tuple[str, str], tuple[int, int, int, float]]:
    """Per (condition, agent label): recorded runs, input and output tokens (with earlier attempts'), dollars,
    over ``runs``, its harness errors and the runs it left out."""
    out: dict[tuple[str, str], tuple[int, int, int, float]] = {}
    for part in (runs, runs.harness_errors, runs.excluded):
        if part is None or not len(part):
            continue
        tokens_in = np.nan_to_num(part.input_tokens) + np.nan_to_num(part.earlier_input_tokens)
        tokens_out = np.nan_to_num(part.output_tokens) + np.nan_to_num(part.earlier_output_tokens)
        for i, key in enumerate(zip(part.condition.tolist(), part.labels.tolist())):
            n, ti, to, cost = out.get(key, (0, 0, 0, 0.0))
            out[key] = (n + 1, ti + int(tokens_in[i]), to + int(tokens_out[i]),
                        cost + (0.0 if np.isnan(part.cost[i]) else float(part.cost[i])))
    return out


def _usage(runs: Runs) -> list[UsageRow]:
    rows = []
    labels = runs.labels
    spent = _spent(runs)
    for cond, label in sorted(set(zip(runs.condition.tolist(), labels.tolist())) | set(spent)):
        m = (runs.condition == cond) & (labels == label)
        tokens = m & ~np.isnan(runs.input_tokens)
        cost = m & ~np.isnan(runs.cost)
        timed = m & ~np.isnan(runs.elapsed)
        rows.append(UsageRow(
            condition=cond, agent=label, runs=int(m.sum()), runs_with_tokens=int(tokens.sum()),
            input_tokens=int(np.nansum(runs.input_tokens[tokens])),
            output_tokens=int(np.nansum(runs.output_tokens[tokens])),
            runs_with_cost=int(cost.sum()), cost=float(np.nansum(runs.cost[cost])),
            seconds=float(np.nansum(runs.elapsed[timed])),
            mean_seconds=float(runs.elapsed[timed].mean()) if timed.any() else None,
            **dict(zip(("all_attempts", "all_input_tokens", "all_output_tokens", "all_cost"), spent[(cond, label)])),
        ))
    return rows


def status_counts(runs: Runs) -> dict[str, int]:
    harness = 0 if runs.harness_errors is None else len(runs.harness_errors)
    failed = int(runs.agent_failed.sum())
    return {"ok": len(runs) - failed, RunStatus.AGENT_FAILED: failed, RunStatus.HARNESS_ERROR: harness}


def summarise(runs: Runs, *, seed: int = 0, draws: int = BOOTSTRAP_DRAWS, level: float = 0.95,
              families: dict[str, str] | None = None) -> Summary:
    """Summarise ``runs`` (any number of conditions, agents, models); see the module docstring."""
    from clinbench.stats.errors import StatsError

    if len(runs) == 0:
        raise StatsError(f"{runs.source} holds no runs to summarise")
    kw = {"draws": draws, "seed": seed, "level": level}
    everything = np.ones(len(runs), dtype=bool)
    tasks = sorted(set(runs.task.tolist()))
    families = families_of(tasks, families, runs.benchmark)
    per_task = []
    cell = cells(runs, "")
    task_means = _task_means(runs, everything, cell)
    for i, task in enumerate(tasks):
        m = runs.task == task
        # one cell: its runs resampled; several: the cells' means (the mean weighs cells, not runs)
        by_cell = [v for _, v in sorted(cell_means(runs, m, cell, runs.reward).items())]
        sample = runs.reward[m] if len(by_cell) == 1 else np.array(by_cell)
        per_task.append(TaskMean(task=task, family=families.get(task, ""), runs=int(m.sum()),
                                 mean=task_means.get(task, float("nan")),
                                 ci=_ci(sample, draws=task_draws(draws), seed=seed + i, level=level),
                                 strict=strict_count(runs, m, cell), agent_failed=int(runs.agent_failed[m].sum())))
    per_family = []
    for fam in sorted(set(families.values())):
        means = np.array([t.mean for t in per_task if t.family == fam])
        fam_mask = np.isin(runs.task, [t.task for t in per_task if t.family == fam])
        per_family.append(MeanRow(by="family", value=fam, tasks=int(means.size), runs=int(fam_mask.sum()),
                                  mean=exact_mean(means), ci=_ci(means, **kw), strict=strict_count(runs, fam_mask, cell)))
    return Summary(
        source=runs.source, benchmark=runs.benchmark, seed=seed, draws=draws, task_draws=task_draws(draws), level=level, runs=len(runs),
        tasks=len(tasks), families=len(per_family), flagged_excluded=runs.n_flagged_excluded, flagged_charged=runs.n_flagged_charged,
        missing_reward=int(runs.reward_missing.sum()), status=status_counts(runs),
        overall=_mean_row(runs, everything, cell, "all", "all runs", **kw),
        per_condition=_breakdown(runs, cell, "condition", runs.condition, **kw),
        per_agent=_breakdown(runs, cell, "agent", runs.labels, **kw),
        per_model=_breakdown(runs, cell, "model", runs.model, **kw),
        per_schema=_breakdown(runs, cell, "schema", runs.schema, **kw),
        per_family=per_family, per_task=per_task, usage=_usage(runs),
    )
