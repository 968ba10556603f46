"""Sign-flip (paired permutation) tests.

Under the null hypothesis that the two conditions are exchangeable within each pair, each
paired difference is as likely to have either sign. A draw flips each sign at random; the
Monte-Carlo p-value is (hits + 1) / (draws + 1), which never reports 0 and is a valid
p-value for any number of draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from clinbench.stats._draws import check_draws, chunks
from clinbench.stats.bootstrap import _as_values
from clinbench.stats.errors import StatsError
from clinbench.stats.resamples import SIGN_FLIP_DRAWS

_ALTERNATIVES = ("two-sided", "greater", "less")

# Flipped means that equal the observed one in exact arithmetic can differ in the last bits
# after summing in another order; count them as hits (the conservative side).
_TIE_EPS = 1e-12


def sign_flip_test(
    differences: Sequence[float] | np.ndarray,
    *,
    draws: int = SIGN_FLIP_DRAWS,
    seed: int = 0,
    alternative: str = "two-sided",
) -> float:
    """p-value of the mean of paired ``differences`` against random sign flips.

    two-sided: a hit is |mean of flipped| >= |observed mean|;
    greater: flipped mean >= observed mean (evidence that the differences are positive);
    less: flipped mean <= observed mean.
    """
    if alternative not in _ALTERNATIVES:
        raise StatsError(f"unknown alternative {alternative!r}; use one of {', '.join(_ALTERNATIVES)}")
    check_draws(draws, "--permutation-draws")
    d = _as_values(differences, "paired differences")
    n = d.size
    observed = d.mean()
    scale = max(1.0, float(np.abs(d).max()))
    eps = _TIE_EPS * scale
    hits = 0
    for rng, rows in chunks(draws, n, seed):
        signs = rng.integers(0, 2, size=(rows, n), dtype=np.int8) * 2 - 1
        flipped = signs @ d / n
        if alternative == "two-sided":
            hits += int(np.count_nonzero(np.abs(flipped) >= abs(observed) - eps))
        elif alternative == "greater":
            hits += int(np.count_nonzero(flipped >= observed - eps))
        else:
            hits += int(np.count_nonzero(flipped <= observed + eps))
    return (hits + 1) / (draws + 1)


def paired_permutation_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    draws: int = SIGN_FLIP_DRAWS,
    seed: int = 0,
    alternative: str = "greater",
) -> float:
    """Paired permutation test of a against b (pairs by position): a sign-flip test on a − b.

    ``alternative="greater"`` asks whether a is larger than b on average (scipy's convention);
    "two-sided" whether they differ; "less" whether a is smaller.
    """
    xa = _as_values(a, "values of a")
    xb = _as_values(b, "values of b")
    if xa.size != xb.size:
        raise StatsError(f"paired test needs equal lengths, got {xa.size} and {xb.size}; pair each a with its b")
    return sign_flip_test(xa - xb, draws=draws, seed=seed, alternative=alternative)
