"""The Laplace mechanism on counts (docs/mathematics.md#teaching-mechanisms): the e^ε ratio, the k-count tail bound by
Monte Carlo, and what integer-rounded noise does.

Monte Carlo checks use fixed seeds with binomial tails of 1e-5 (chi-square p-values above
1e-5): a correct implementation fails each with probability below 1e-5 for a random seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from accfirst import AccFirstError
from accfirst.teaching import (
    integer_noise_loss,
    integer_noise_pmf,
    laplace_density,
    laplace_privacy_loss,
    laplace_variance,
    max_error_probability,
    max_error_threshold,
)


def test_the_slides_example_is_12_2() -> None:
    assert max_error_threshold(10_000, 0.05, 1.0) == pytest.approx(12.206, abs=1e-3)


@pytest.mark.parametrize(("k", "epsilon", "d"), [(10_000, 1.0, 0.05), (100, 0.5, 0.2), (1, 2.0, 0.5)])
def test_largest_error_exceeds_the_bound_with_probability_at_most_d(k: int, epsilon: float, d: float) -> None:
    """Monte Carlo: 2,000 releases of k counts; the share over ln(k/d)/ε is binomially ≤ d."""
    rng = np.random.default_rng(k)
    threshold = max_error_threshold(k, d, epsilon)
    releases = 2000
    over = sum(
        int(np.count_nonzero(np.abs(rng.laplace(0.0, 1 / epsilon, size=(200, k))).max(axis=1) >= threshold))
        for _ in range(releases // 200)
    )
    assert over <= stats.binom.ppf(1 - 1e-5, releases, d)
    exact = float(max_error_probability(k, threshold, epsilon))
    assert exact <= d
    assert stats.binomtest(over, releases, exact).pvalue > 1e-5


def test_densities_of_neighbours_differ_by_at_most_e_to_the_epsilon() -> None:
    z = np.linspace(-20, 30, 5001)
    for epsilon in (0.1, 1.0, 3.0):
        loss = laplace_privacy_loss(z, 10.0, 11.0, 1 / epsilon)
        direct = np.log(laplace_density(z, 10.0, 1 / epsilon)) - np.log(laplace_density(z, 11.0, 1 / epsilon))
        np.testing.assert_allclose(loss, direct, atol=1e-9)
        assert np.max(np.abs(loss)) == pytest.approx(epsilon)


def test_density_and_variance() -> None:
    total, _ = integrate.quad(lambda z: float(laplace_density(z, 3.0, 0.7)), -60, 60, points=[3.0])
    assert total == pytest.approx(1.0)
    assert laplace_variance(0.5, 2.0) == pytest.approx(2 * 4.0**2)
    draws = np.random.default_rng(2).laplace(0.0, 4.0, size=400_000)
    assert draws.var() == pytest.approx(laplace_variance(0.5, 2.0), rel=0.02)


@pytest.mark.parametrize(("rounding", "cast"), [("round", np.rint), ("truncate", np.trunc)])
def test_integer_noise_pmf_matches_rounded_draws(rounding: str, cast) -> None:
    scale = 1.7
    draws = cast(np.random.default_rng(4).laplace(0.0, scale, size=300_000)).astype(int)
    support = np.arange(-8, 9)
    pmf = integer_noise_pmf(support, scale, rounding)
    assert integer_noise_pmf(np.arange(-400, 401), scale, rounding).sum() == pytest.approx(1.0)
    observed = np.array([np.count_nonzero(draws == j) for j in support] + [np.count_nonzero(np.abs(draws) > 8)])
    expected = np.append(pmf, 1 - pmf.sum()) * draws.size
    assert stats.chisquare(observed, expected).pvalue > 1e-5


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_integer_noise_rounded_is_private_truncated_is_not(epsilon: float) -> None:
    assert integer_noise_loss(epsilon, "round") == pytest.approx(epsilon)
    assert integer_noise_loss(epsilon, "truncate") == pytest.approx(epsilon + math.log(2))
    assert integer_noise_loss(epsilon, "round", shift=0.5) == math.inf


def test_bad_arguments() -> None:
    with pytest.raises(AccFirstError):
        max_error_threshold(0, 0.05, 1.0)
    with pytest.raises(AccFirstError):
        max_error_threshold(10, 0.0, 1.0)
    with pytest.raises(AccFirstError):
        integer_noise_pmf([0.5], 1.0)
    with pytest.raises(AccFirstError):
        integer_noise_pmf([1], 1.0, rounding="floor")
