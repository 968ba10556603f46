"""Bootstrap and sign-flip primitives against distributions enumerated by hand."""

from __future__ import annotations

import numpy as np
import pytest

from clinbench.stats.bootstrap import (
    bootstrap_distribution,
    cluster_bootstrap_distribution,
    cluster_percentile_ci,
    percentile_ci,
)
from clinbench.stats.errors import StatsError
from clinbench.stats.permutation import paired_permutation_test, sign_flip_test


def test_percentile_ci_of_two_values_matches_enumeration():
    """Resamples of size 2 from {0, 1}: means 0, 0.5, 1 with probability 1/4, 1/2, 1/4.

    The 30% and 70% quantiles both fall inside the 0.5 mass (cumulative 0.25 → 0.75), so a
    40% interval is exactly (0.5, 0.5); a 95% interval is (0, 1).
    """
    assert percentile_ci([0.0, 1.0], level=0.4) == (0.5, 0.5)
    assert percentile_ci([0.0, 1.0], level=0.95) == (0.0, 1.0)


def test_bootstrap_frequencies_match_enumeration():
    """Same case: the share of draws with mean 0.5 is 1/2 (binomial s.e. 0.0035 at 20,000 draws)."""
    dist = bootstrap_distribution([0.0, 1.0], draws=20000, seed=3)
    assert abs(np.mean(dist == 0.5) - 0.5) < 0.015
    assert abs(np.mean(dist == 0.0) - 0.25) < 0.015


def test_bootstrap_is_reproducible_and_seeded():
    values = np.linspace(0, 1, 28)
    assert percentile_ci(values, seed=7) == percentile_ci(values, seed=7)
    assert percentile_ci(values, seed=7) != percentile_ci(values, seed=8)


def test_bootstrap_median():
    """Resamples of size 3 from {0, 0, 1}... median is 1 only when ≥2 of 3 picks are the 1:
    P = 3·(1/3)²·(2/3) + (1/3)³ = 7/27 ≈ 0.259, so the 80% interval's upper end (90% quantile) is 1
    and its lower end is 0."""
    dist = bootstrap_distribution([0.0, 0.0, 1.0], statistic="median", draws=20000)
    assert abs(np.mean(dist == 1.0) - 7 / 27) < 0.015
    assert percentile_ci([0.0, 0.0, 1.0], statistic="median", level=0.8) == (0.0, 1.0)


def test_cluster_bootstrap_pools_members():
    """Clusters A = {0, 0} (sum 0, 2 members) and B = {1} (sum 1, 1 member).

    Draws of 2 clusters: AA → 0/4 = 0 (1/4); AB or BA → 1/3 (1/2); BB → 2/2 = 1 (1/4).
    The pooled mean weighs members, not clusters: AB gives 1/3, not 1/2.
    """
    dist = cluster_bootstrap_distribution([0.0, 0.0, 1.0], ["A", "A", "B"], draws=20000, seed=1)
    assert set(np.round(np.unique(dist), 12)) == {0.0, round(1 / 3, 12), 1.0}
    assert abs(np.mean(np.isclose(dist, 1 / 3)) - 0.5) < 0.015
    lo, hi = cluster_percentile_ci([0.0, 0.0, 1.0], ["A", "A", "B"], level=0.4)
    assert lo == pytest.approx(1 / 3) and hi == pytest.approx(1 / 3)


def test_sign_flip_matches_enumeration():
    """d = (1, 2, 3): of the 8 sign patterns only +++ and --- reach |sum| ≥ 6, so the
    two-sided p is 2/8 = 0.25 and the one-sided (greater) p is 1/8 = 0.125."""
    assert sign_flip_test([1.0, 2.0, 3.0]) == pytest.approx(0.25, abs=0.005)
    assert sign_flip_test([1.0, 2.0, 3.0], alternative="greater") == pytest.approx(0.125, abs=0.005)
    assert sign_flip_test([1.0, 2.0, 3.0], alternative="less") == pytest.approx(1.0, abs=0.001)


def test_sign_flip_counts_ties_as_hits():
    """d = (1, −1, 1): every pattern sums to an odd number, so |flipped mean| ≥ 1/3 always: p = 1."""
    assert sign_flip_test([1.0, -1.0, 1.0], draws=1000) == 1.0
    # float sums in another order must still tie: 0.1 + 0.2 + 0.3 vs 0.3 + 0.2 + 0.1
    assert sign_flip_test([0.1, 0.2, 0.3], alternative="greater") == pytest.approx(0.125, abs=0.005)


def test_sign_flip_p_never_zero():
    """28 positive differences: only +…+ reaches the observed mean (2^-28); p = (hits+1)/(draws+1)."""
    p = sign_flip_test(np.full(28, 0.1), draws=200000)
    assert 0 < p < 1e-4
    assert p == pytest.approx(1 / 200001, rel=0.5)


def test_paired_permutation_direction():
    """a beats b on every pair of 10: one-sided p ≈ 2^-10 + 1/(draws+1); reversed it is ≈ 1."""
    a = np.arange(10) + 1.0
    b = np.arange(10) + 0.5
    p = paired_permutation_test(a, b, draws=200000)
    assert p == pytest.approx(2**-10, abs=3e-4)
    assert paired_permutation_test(b, a, draws=20000) > 0.99
    assert paired_permutation_test(a, b, alternative="two-sided") == pytest.approx(2 * 2**-10, abs=4e-4)


def test_many_draws_run_in_bounded_chunks():
    """A million draws over 28 values (28 M cells) is computed chunk by chunk and still
    gives p = (0 + 1)/(10^6 + 1) when the observed mean is the maximum possible one."""
    assert sign_flip_test(np.full(28, 0.1), draws=1_000_000) < 1e-5


def test_bad_input_is_one_line_error():
    with pytest.raises(StatsError, match="empty"):
        percentile_ci([])
    with pytest.raises(StatsError, match="equal lengths"):
        paired_permutation_test([1, 2], [1])
    with pytest.raises(StatsError, match="draws"):
        sign_flip_test([1.0], draws=0)
    with pytest.raises(StatsError, match=r"draws must be at least 1 \(got -5\)"):
        bootstrap_distribution([1.0, 2.0], draws=-5)
    with pytest.raises(StatsError, match="NaN"):
        percentile_ci([1.0, float("nan")])
