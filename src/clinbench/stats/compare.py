"""Paired comparison of two groups of runs, as the M4Bench analysis defines it.

The groups are two values of one dimension (``clinbench.stats.groups``): two conditions
(the paper's no-skill vs with-skill), two agents, two models or two schema variants. The
figures below say "condition"; read "group".

* Pairing: within a task, runs pair by who ran them and how, the cell of every other dimension
  (agent, model, condition, schema variant; comparing ``agent/model`` labels, the model is part of
  the group). A cell run under one side only is left out and counted (``cells_left_out``), so
  harness errors or missing runs on one side never change the mix a side averages over.
* Task mean of a side: the mean over the task's paired cells of each cell's mean over its
  trials (with one agent/model, the mean over the task's runs); task-balanced mean of a side:
  the mean over tasks. Sums are exact (``math.fsum``), so equal rewards in another order give
  equal means.
* Paired delta of a task: its mean under B minus its mean under A (the mean of its cells'
  deltas); the headline is the mean of those deltas with "k of n tasks improving" (delta > 0).
* 95% CIs are percentile bootstraps: task-cluster (resample task deltas), family-cluster
  (resample families, pool their tasks' deltas), family-balanced (resample per-family mean
  deltas; its point estimate is the mean of family means).
* Sign-flip p: flip each task delta's sign at random; p = (hits + 1) / (draws + 1), a hit
  being |mean of flipped| >= |observed mean|.
* Strict passes: runs that pass every strict check, out of the side's paired runs, and the
  cell-balanced share (each paired cell's share of passes, averaged over cells); printed as the
  count (13/280) when every cell ran as many trials, else as the share with the count beside it.
* key-F1 and ordered-nMAE deltas: the same task-balanced pairing on those columns, over the
  tasks where both conditions have values, with a task-cluster CI.
* Per-task CI (forest plot): percentile bootstrap of the task's delta, resampling each paired cell's
  trials under each side separately and averaging the cells' deltas (``task_draws`` draws); none
  when no cell ran two trials on a side.
* An interval needs two things to resample: with one paired task the task-cluster CI is None
  (printed "—"), never a zero-width [x, x].

Only tasks with a cell run under both conditions are paired; the rest are listed as unpaired.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from clinbench.stats._draws import check_draws, chunks
from clinbench.stats.bootstrap import (
    bootstrap_distribution,
    cluster_bootstrap_distribution,
    percentile_interval,
)
from clinbench.stats.errors import StatsError
from clinbench.stats.families import families_of
from clinbench.stats.groups import group_mask, group_values
from clinbench.stats.permutation import sign_flip_test
from clinbench.stats.resamples import BOOTSTRAP_DRAWS, SIGN_FLIP_DRAWS, task_draws as task_draws_for
from clinbench.stats.runs import Runs

GROUP_COLUMNS = ("model", "schema", "agent", "condition")


@dataclass
class Interval:
    lo: float
    hi: float


@dataclass
class PairedMetric:
    """A task-balanced paired comparison of one per-run metric."""

    n_tasks: int
    mean_a: float
    mean_b: float
    delta: float
    ci_task: Interval | None


@dataclass
class StrictCount:
    passed: int
    runs: int
    # the cell-balanced share: each paired (task, cell)'s share of strict passes, averaged over the cells;
    # passed/runs when every cell ran as many trials (None where no cells are known: a plain count)
    share: float | None = None

    @property
    def balanced(self) -> bool:
        """Whether passed/runs is the cell-balanced share (equal trials per cell)."""
        return self.share is None or (self.runs > 0 and math.isclose(self.share, self.passed / self.runs))


@dataclass
class TaskRow:
    task: str
    family: str
    runs_a: int
    runs_b: int
    mean_a: float
    mean_b: float
    delta: float
    ci: Interval | None  # None when either side has a single run: a bootstrap of one run is no interval
    strict_a: StrictCount | None
    strict_b: StrictCount | None


@dataclass
class FamilyRow:
    family: str
    tasks: int
    mean_a: float
    mean_b: float
    delta: float
    improving: int


@dataclass
class GroupRow:
    """The headline restricted to one value of a grouping column (e.g. one model)."""

    by: str
    value: str
    tasks: int
    mean_a: float
    mean_b: float
    delta: float
    improving: int
    ci_task: Interval | None  # None with one task
    sign_flip_p: float
    strict_a: StrictCount | None
    strict_b: StrictCount | None


@dataclass
class Comparison:
    source: str
    condition_a: str  # the compared values of ``dimension`` (conditions by default)
    condition_b: str
    seed: int
    draws: int
    permutation_draws: int
    task_draws: int
    level: float
    runs_a: int
    runs_b: int
    flagged_excluded: int
    missing_reward: int
    tasks: int
    families: int
    mean_a: float
    mean_b: float
    delta: float
    improving: int
    ci_task: Interval | None  # None with one paired task
    ci_family: Interval | None
    ci_family_balanced: Interval | None
    family_balanced_delta: float
    sign_flip_p: float
    strict_a: StrictCount | None
    strict_b: StrictCount | None
    key_f1: PairedMetric | None
    ordered_value_nmae: PairedMetric | None
    per_task: list[TaskRow]
    per_family: list[FamilyRow]
    unpaired_tasks: list[str] = field(default_factory=list)
    groups: list[GroupRow] = field(default_factory=list)
    dimension: str = "condition"
    harness_errors: int = 0  # runs of the two groups the harness failed: in no figure above
    kind: str = "comparison"
    flagged_charged: int = 0  # flagged for their agent's own conduct: counted, as reward 0
    cells_left_out: int = 0  # (task, cell) pairs run under one side only: in no figure
    runs_left_out: int = 0  # their runs
    benchmark: str = "derive"  # 'dx': the tasks are diagnosis cases, which have no families

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data; NaN (a figure that does not exist) becomes None."""
        return no_nan(asdict(self))


def no_nan(value: Any) -> Any:
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [no_nan(v) for v in value]
    return value


def exact_mean(values) -> float:
    """The mean with an exactly rounded sum: the same whatever order the values come in."""
    values = list(values)
    return math.fsum(values) / len(values)


def cells(runs: Runs, dimension: str, labels: bool = False) -> np.ndarray:
    """Who ran each run and how, the compared ``dimension`` left out: the cell runs pair within.

    A cell is every other dimension: agent, model, condition and schema variant (and, for dx runs, the
    gatekeeper and judge). Comparing agents named with their model (``labels``: ``agent/model``), the
    model is part of the group, not of the cell."""
    keep = [d for d in ("agent", "model", "condition", "schema")
            if d != dimension and not (dimension == "agent" and labels and d == "model")]
    columns = [getattr(runs, d).tolist() for d in keep]
    # dx runs: the gatekeeper and judge behind each score (a re-judged copy is another cell, never pooled)
    columns += [getattr(runs, d).tolist() for d in ("gatekeeper", "judge") if getattr(runs, d, None) is not None]
    return np.asarray(["\x1f".join(map(str, parts)) for parts in zip(*columns)], dtype=object)


def group_cells(runs: Runs, dimension: str, a: str, b: str) -> np.ndarray:
    """The cells runs of groups ``a`` and ``b`` of ``dimension`` pair within: comparing agents named with
    their model (``agent/model``), the model is part of the group."""
    return cells(runs, dimension, labels=dimension == "agent" and any("/" in v for v in (a, b)))


def pair_cells(runs: Runs, mask_a: np.ndarray, mask_b: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``mask_a`` and ``mask_b`` kept to the (task, cell)s both sides ran, with how many cells (and
    their runs) one side only ran."""
    keys = np.asarray([f"{t}\x1f{c}" for t, c in zip(runs.task.tolist(), cell.tolist())], dtype=object)
    ka, kb = set(keys[mask_a].tolist()), set(keys[mask_b].tolist())
    both = np.fromiter((k in ka and k in kb for k in keys.tolist()), dtype=bool, count=keys.size)
    left = (mask_a | mask_b) & ~both
    return mask_a & both, mask_b & both, len(ka ^ kb), int(left.sum())


def cell_means(runs: Runs, mask: np.ndarray, cell: np.ndarray, values: np.ndarray) -> dict[tuple[str, str], float]:
    """Each (task, cell)'s mean of ``values`` over its runs in ``mask`` (NaN values left out), exactly summed."""
    by: dict[tuple[str, str], list[float]] = {}
    for i in np.flatnonzero(mask & ~np.isnan(values)).tolist():
        by.setdefault((str(runs.task[i]), str(cell[i])), []).append(float(values[i]))
    return {key: exact_mean(v) for key, v in by.items()}


def paired_task_means(runs: Runs, mask_a: np.ndarray, mask_b: np.ndarray, cell: np.ndarray,
                      values: np.ndarray) -> dict[str, tuple[float, float]]:
    """Per task, its means under A and B: over the cells with values (not NaN) on both sides, the mean
    of each cell's mean over its runs."""
    ma, mb = cell_means(runs, mask_a, cell, values), cell_means(runs, mask_b, cell, values)
    per_task: dict[str, tuple[list[float], list[float]]] = {}
    for key in sorted(ma.keys() & mb.keys()):
        slot = per_task.setdefault(key[0], ([], []))
        slot[0].append(ma[key])
        slot[1].append(mb[key])
    return {t: (exact_mean(a), exact_mean(b)) for t, (a, b) in per_task.items()}


def _ci_of(deltas: np.ndarray, *, draws: int, seed: int, level: float) -> Interval | None:
    """Task-cluster percentile CI of the mean delta; None with one task (nothing to resample)."""
    if deltas.size < 2:
        return None
    return Interval(*percentile_interval(bootstrap_distribution(deltas, draws=draws, seed=seed), level))


def strict_count(runs: Runs, mask: np.ndarray, cell: np.ndarray) -> StrictCount | None:
    """Strict passes of the runs ``mask`` (a comparison's: kept to the paired cells): the count, and the
    cell-balanced share (each (task, cell)'s share of passes among its runs, averaged over cells). A run
    without a strict verdict did not pass, in the count and the share alike. None when no run has a verdict."""
    values = runs.strict[mask]
    if values.size == 0 or np.all(np.isnan(values)):
        return None
    known = values[~np.isnan(values)]
    share = exact_mean(cell_means(runs, mask, cell, (runs.strict == 1.0).astype(float)).values())
    return StrictCount(passed=int(np.sum(known == 1.0)), runs=int(values.size), share=share)


def _paired_metric(runs: Runs, mask_a: np.ndarray, mask_b: np.ndarray, cell: np.ndarray, tasks: list[str],
                   values: np.ndarray, *, draws: int, seed: int, level: float) -> PairedMetric | None:
    means = paired_task_means(runs, mask_a, mask_b, cell, values)
    common = [t for t in tasks if t in means]
    if not common:
        return None
    xa = np.array([means[t][0] for t in common])
    xb = np.array([means[t][1] for t in common])
    d = xb - xa
    return PairedMetric(
        n_tasks=len(common),
        mean_a=exact_mean(xa),
        mean_b=exact_mean(xb),
        delta=exact_mean(d),
        ci_task=_ci_of(d, draws=draws, seed=seed, level=level),
    )


def _within_task_ci(cells_ab: list[tuple[np.ndarray, np.ndarray]], *, draws: int, seed: int,
                    level: float) -> Interval | None:
    """Bootstrap of one task's delta, the mean over its paired cells of mean(B) − mean(A), resampling
    each cell's trials on each side separately; None when no cell has two trials on a side (nothing
    to resample)."""
    if not any(ra.size > 1 or rb.size > 1 for ra, rb in cells_ab):
        return None
    out = np.empty(check_draws(draws))
    start = 0
    width = sum(ra.size + rb.size for ra, rb in cells_ab)
    for rng, rows in chunks(draws, width, seed):
        total = np.zeros(rows)
        for ra, rb in cells_ab:
            ia = rng.integers(0, ra.size, size=(rows, ra.size))
            ib = rng.integers(0, rb.size, size=(rows, rb.size))
            total += rb[ib].mean(axis=1) - ra[ia].mean(axis=1)
        out[start : start + rows] = total / len(cells_ab)
        start += rows
    return Interval(*percentile_interval(out, level))


def _task_cells(runs: Runs, ta: np.ndarray, tb: np.ndarray, cell: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """One task's paired cells: each cell's rewards under A and under B, cells in order."""
    return [(runs.reward[ta & (cell == c)], runs.reward[tb & (cell == c)])
            for c in sorted(set(cell[ta].tolist()) & set(cell[tb].tolist()))]


def _headline(runs: Runs, mask_a: np.ndarray, mask_b: np.ndarray, cell: np.ndarray, xa: np.ndarray, xb: np.ndarray, *,
              draws: int, perm_draws: int, seed: int, level: float) -> dict[str, Any]:
    """The paired headline of task means ``xa`` → ``xb`` (runs ``mask_a`` / ``mask_b``): the fields a
    comparison and each of its groups share."""
    deltas = xb - xa
    return dict(
        mean_a=exact_mean(xa), mean_b=exact_mean(xb), delta=exact_mean(deltas), improving=int((deltas > 0).sum()),
        ci_task=_ci_of(deltas, draws=draws, seed=seed, level=level),
        sign_flip_p=sign_flip_test(deltas, draws=perm_draws, seed=seed),
        strict_a=strict_count(runs, mask_a, cell), strict_b=strict_count(runs, mask_b, cell),
    )


def compare(
    runs: Runs,
    a: str,
    b: str,
    *,
    dimension: str = "condition",
    by: str | None = None,
    draws: int = BOOTSTRAP_DRAWS,
    permutation_draws: int = SIGN_FLIP_DRAWS,
    task_draws: int | None = None,
    seed: int = 0,
    level: float = 0.95,
    families: dict[str, str] | None = None,
) -> Comparison:
    """Compare group ``b`` against group ``a`` of ``dimension`` (delta = b − a); see the module docstring.

    ``families`` maps task → family (the task catalogue's, passed by the caller); without it, and
    for dx runs, there are no family statistics. ``task_draws``: each task's interval (default
    ``resamples.task_draws(draws)``, as the summary's).
    """
    task_draws = task_draws_for(draws) if task_draws is None else task_draws
    mask_a = group_mask(runs, dimension, a)
    mask_b = group_mask(runs, dimension, b)
    for value, mask in ((a, mask_a), (b, mask_b)):
        if not mask.any():
            present = ", ".join(group_values(runs, dimension)) or "none"
            raise StatsError(f"no runs under {dimension} {value!r}; {dimension}s present: {present}")
    if dimension != "schema":
        schemas = sorted(set(runs.schema[mask_a | mask_b].tolist()))
        if len(schemas) > 1:
            raise StatsError(
                f"runs span schema variants {', '.join(schemas)}; pass --schema-variant to compare within one variant"
            )
    if by is not None and (by not in GROUP_COLUMNS or by == dimension):
        others = ", ".join(c for c in GROUP_COLUMNS if c != dimension)
        raise StatsError(f"--by takes one of {others} (not the compared dimension), got {by!r}")
    def in_groups(other: Runs | None) -> int:
        if other is None or not len(other):
            return 0
        return int((group_mask(other, dimension, a) | group_mask(other, dimension, b)).sum())

    harness_n, excluded_n = in_groups(runs.harness_errors), in_groups(runs.excluded)
    if runs.reward_missing[mask_a | mask_b].all():
        raise StatsError(
            f"none of the {a!r}/{b!r} runs has a reward; score them first (dx runs are judged, not rewarded: "
            "their accuracy is not a reward column)"
        )
    tasks_all = set(runs.task[mask_a | mask_b].tolist())
    cell = group_cells(runs, dimension, a, b)
    mask_a, mask_b, cells_left, runs_left = pair_cells(runs, mask_a, mask_b, cell)
    tasks = sorted(set(runs.task[mask_a].tolist()))
    if not tasks:
        raise StatsError(f"no task has runs of one agent/model under both {a!r} and {b!r}; nothing to pair "
                         "(compare agents with --compare agent:A:B)")
    unpaired = sorted(tasks_all - set(tasks))
    families = families_of(tasks, families, runs.benchmark)

    means = paired_task_means(runs, mask_a, mask_b, cell, runs.reward)
    xa = np.array([means[t][0] for t in tasks])
    xb = np.array([means[t][1] for t in tasks])
    deltas = xb - xa
    draw = {"draws": draws, "perm_draws": permutation_draws, "seed": seed, "level": level}

    fam_of = [families.get(t, "") for t in tasks]
    fam_names = sorted(set(fam_of)) if families else []
    ci_family = ci_family_balanced = None
    family_balanced_delta = float("nan")
    per_family: list[FamilyRow] = []
    if fam_names:
        fam_arr = np.asarray(fam_of, dtype=object)
        for fam in fam_names:
            sel = fam_arr == fam
            per_family.append(
                FamilyRow(
                    family=fam,
                    tasks=int(sel.sum()),
                    mean_a=exact_mean(xa[sel]),
                    mean_b=exact_mean(xb[sel]),
                    delta=exact_mean(deltas[sel]),
                    improving=int((deltas[sel] > 0).sum()),
                )
            )
        family_means = np.array([row.delta for row in per_family])
        family_balanced_delta = exact_mean(family_means)
        if len(fam_names) > 1:
            ci_family = Interval(*percentile_interval(
                cluster_bootstrap_distribution(deltas, fam_of, draws=draws, seed=seed), level))
            ci_family_balanced = Interval(*percentile_interval(
                bootstrap_distribution(family_means, draws=draws, seed=seed), level))

    per_task: list[TaskRow] = []
    for i, task in enumerate(tasks):
        ta = mask_a & (runs.task == task)
        tb = mask_b & (runs.task == task)
        per_task.append(
            TaskRow(
                task=task,
                family=fam_of[i],
                runs_a=int(ta.sum()),
                runs_b=int(tb.sum()),
                mean_a=float(xa[i]),
                mean_b=float(xb[i]),
                delta=float(deltas[i]),
                ci=_within_task_ci(_task_cells(runs, ta, tb, cell), draws=task_draws, seed=seed + i, level=level),
                strict_a=strict_count(runs, ta, cell),
                strict_b=strict_count(runs, tb, cell),
            )
        )

    groups: list[GroupRow] = []
    if by is not None:
        # agents as agent/model labels, unless the model is what is compared (each label would lie on one side)
        column = runs.labels if by == "agent" and dimension != "model" else getattr(runs, by)
        for value in sorted(set(column[mask_a | mask_b].tolist())):
            gm = column == value
            ga, gb, _, _ = pair_cells(runs, mask_a & gm, mask_b & gm, cell)
            gmeans = paired_task_means(runs, ga, gb, cell, runs.reward)
            gtasks = [t for t in tasks if t in gmeans]
            if not gtasks:
                continue
            groups.append(GroupRow(by=by, value=str(value), tasks=len(gtasks), **_headline(
                runs, ga, gb, cell, np.array([gmeans[t][0] for t in gtasks]), np.array([gmeans[t][1] for t in gtasks]),
                **draw)))

    return Comparison(
        source=runs.source, condition_a=a, condition_b=b, seed=seed, draws=draws, permutation_draws=permutation_draws,
        task_draws=task_draws, level=level, runs_a=int(mask_a.sum()), runs_b=int(mask_b.sum()),
        flagged_excluded=excluded_n if runs.excluded is not None else runs.n_flagged_excluded,
        flagged_charged=int(np.isin(runs.run_id[mask_a | mask_b], list(runs.charged_ids)).sum()), missing_reward=int(runs.reward_missing[mask_a | mask_b].sum()),
        tasks=len(tasks), families=len(fam_names), ci_family=ci_family, ci_family_balanced=ci_family_balanced,
        family_balanced_delta=family_balanced_delta,
        key_f1=_paired_metric(runs, mask_a, mask_b, cell, tasks, runs.key_f1, draws=draws, seed=seed, level=level),
        ordered_value_nmae=_paired_metric(runs, mask_a, mask_b, cell, tasks, runs.nmae, draws=draws, seed=seed,
                                          level=level),
        per_task=per_task, per_family=per_family, unpaired_tasks=unpaired, groups=groups, dimension=dimension,
        harness_errors=harness_n, cells_left_out=cells_left, runs_left_out=runs_left, benchmark=runs.benchmark,
        **_headline(runs, mask_a, mask_b, cell, xa, xb, **draw),
    )
