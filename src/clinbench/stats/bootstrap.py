"""Percentile bootstraps: plain (resample values) and cluster (resample groups, pool members).

All are percentile intervals: the (1 - level)/2 and (1 + level)/2 quantiles of the statistic
over the draws, numpy's default (linear) quantile. Draws are vectorised and chunked; the
result depends only on the data, ``draws`` and ``seed``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from clinbench.stats._draws import check_draws, chunks
from clinbench.stats.errors import StatsError
from clinbench.stats.resamples import BOOTSTRAP_DRAWS

_STATISTICS = ("mean", "median")


def _as_values(values: Sequence[float] | np.ndarray, what: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        raise StatsError(f"cannot bootstrap an empty set of {what}; check the input has runs for every condition compared")
    if not np.all(np.isfinite(arr)):
        raise StatsError(f"{what} contain NaN or infinity; drop or fix those runs before computing intervals")
    return arr


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise StatsError(f"confidence level must be between 0 and 1 (got {level}); e.g. 0.95")


def percentile_interval(distribution: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of a bootstrap distribution."""
    _check_level(level)
    lo, hi = np.quantile(distribution, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(lo), float(hi)


def bootstrap_distribution(
    values: Sequence[float] | np.ndarray, *, draws: int = BOOTSTRAP_DRAWS, seed: int = 0, statistic: str = "mean"
) -> np.ndarray:
    """The statistic of ``draws`` resamples (with replacement, same size) of ``values``."""
    if statistic not in _STATISTICS:
        raise StatsError(f"unknown bootstrap statistic {statistic!r}; use one of {', '.join(_STATISTICS)}")
    arr = _as_values(values)
    n = arr.size
    out = np.empty(check_draws(draws))
    start = 0
    reducer = np.mean if statistic == "mean" else np.median
    for rng, rows in chunks(draws, n, seed):
        idx = rng.integers(0, n, size=(rows, n))
        out[start : start + rows] = reducer(arr[idx], axis=1)
        start += rows
    return out


def percentile_ci(
    values: Sequence[float] | np.ndarray,
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    level: float = 0.95,
    statistic: str = "mean",
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (or median) of ``values``: resample the values themselves."""
    _check_level(level)
    return percentile_interval(bootstrap_distribution(values, draws=draws, seed=seed, statistic=statistic), level)


def cluster_bootstrap_distribution(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[object],
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
) -> np.ndarray:
    """Resample whole clusters with replacement and take the mean of the pooled members.

    A draw picks as many clusters as there are, and its statistic is
    (sum of the chosen clusters' values) / (number of values they hold), i.e. every member
    weighs the same, so large clusters weigh more than small ones.
    """
    arr = _as_values(values)
    labels = list(clusters)
    if len(labels) != arr.size:
        raise StatsError(f"{arr.size} values but {len(labels)} cluster labels; give one label per value")
    _, inverse = np.unique(np.asarray([str(c) for c in labels]), return_inverse=True)
    sums = np.bincount(inverse, weights=arr)
    counts = np.bincount(inverse).astype(float)
    k = sums.size
    out = np.empty(check_draws(draws))
    start = 0
    for rng, rows in chunks(draws, k, seed):
        idx = rng.integers(0, k, size=(rows, k))
        out[start : start + rows] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
        start += rows
    return out


def cluster_percentile_ci(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[object],
    *,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile CI of the pooled mean when whole clusters are resampled (see above)."""
    _check_level(level)
    return percentile_interval(cluster_bootstrap_distribution(values, clusters, draws=draws, seed=seed), level)
