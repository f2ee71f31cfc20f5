"""Composition, group privacy, post-processing and neighbours (docs/mathematics.md#teaching-mechanisms) against direct
computation: the exact privacy-loss distribution of k rounds of randomized response, exact
Laplace ratios, and the induction behind group privacy. No randomness.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from accfirst import AccFirstError
from accfirst.teaching import (
    advanced_composition,
    basic_composition,
    dp_to_zcdp,
    group_privacy,
    laplace_privacy_loss,
    replace_one_from_add_remove,
    threshold_release,
    zcdp_composition,
    zcdp_to_dp,
)


def exact_delta(epsilon0: float, k: int, epsilon: float) -> float:
    """δ(ε) = E[(1 − e^{ε − L})₊] for k rounds of symmetric ε0-randomized response.

    Each round's privacy loss is +ε0 with probability e^{ε0}/(1 + e^{ε0}), else −ε0: the
    worst pair of neighbours, whose loss distribution is exact (binomial).
    """
    heads = np.arange(k + 1)
    loss = epsilon0 * (2 * heads - k)
    weights = stats.binom.pmf(heads, k, math.exp(epsilon0) / (1 + math.exp(epsilon0)))
    return float(np.sum(weights * np.maximum(0.0, -np.expm1(epsilon - loss))))


def test_basic_composition_is_the_sum() -> None:
    assert basic_composition(0.3, 1e-7, 10) == (pytest.approx(sum([0.3] * 10)), pytest.approx(1e-6))


@pytest.mark.parametrize(("epsilon0", "k"), [(0.1, 100), (0.05, 1000), (0.5, 20), (1.0, 5)])
def test_advanced_and_zcdp_composition_hold_for_randomized_response(epsilon0: float, k: int) -> None:
    delta = 1e-6
    eps_advanced, delta_advanced = advanced_composition(epsilon0, 0.0, k, delta)
    assert delta_advanced == delta
    assert exact_delta(epsilon0, k, eps_advanced) <= delta
    assert exact_delta(epsilon0, k, zcdp_composition(epsilon0, k, delta)) <= delta
    assert exact_delta(epsilon0, k, basic_composition(epsilon0, 0.0, k)[0]) == 0.0


def test_advanced_composition_formula() -> None:
    eps, delta = advanced_composition(0.1, 1e-8, 100, 1e-6)
    assert eps == pytest.approx(math.sqrt(200 * math.log(1e6)) * 0.1 + 100 * 0.1 * (math.exp(0.1) - 1))
    assert delta == pytest.approx(100 * 1e-8 + 1e-6)


def test_zcdp_conversion_round_trips_and_matches_rho_b() -> None:
    for epsilon in (0.01, 0.5, 1.0, 8.0):
        for delta in (1e-9, 1e-6, 0.01):
            rho = dp_to_zcdp(epsilon, delta)
            assert rho == pytest.approx(
                (math.sqrt(epsilon + math.log(1 / delta)) - math.sqrt(math.log(1 / delta))) ** 2
            )
            assert zcdp_to_dp(rho, delta) == pytest.approx(epsilon, rel=1e-12)
    assert zcdp_composition(0.2, 50, 1e-6) == pytest.approx(zcdp_to_dp(50 * 0.2**2 / 2, 1e-6))


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_group_privacy(k: int) -> None:
    epsilon, delta = 0.4, 1e-7
    group_eps, group_delta = group_privacy(epsilon, delta, k)
    z = np.linspace(-30, 40, 7001)
    # Laplace counts k apart: the ratio is exactly e^{kε}.
    assert np.max(np.abs(laplace_privacy_loss(z, 0.0, float(k), 1 / epsilon))) == pytest.approx(group_eps)
    # Chaining k single steps gives δ·Σ e^{iε}, which the slides' k·e^{(k−1)ε}δ bounds.
    assert group_delta == pytest.approx(k * math.exp((k - 1) * epsilon) * delta)
    assert delta * sum(math.exp(i * epsilon) for i in range(k)) <= group_delta * (1 + 1e-12)


def test_replace_one_is_two_add_remove_steps() -> None:
    assert replace_one_from_add_remove(0.5, 1e-6) == group_privacy(0.5, 1e-6, 2)


def test_a_decision_read_off_the_noisy_count_keeps_the_ratio() -> None:
    thresholds = np.linspace(-10, 20, 301)
    for epsilon in (0.2, 1.0, 3.0):
        here, there = threshold_release(epsilon, 5.0, 6.0, thresholds)
        for a, b in ((here, there), (1 - here, 1 - there)):
            # 1 − P loses its digits far in the tail (and rounds to 0): compare where both are resolved.
            resolved = np.minimum(a, b) > 1e-6
            assert np.abs(np.log(a[resolved]) - np.log(b[resolved])).max() <= epsilon * (1 + 1e-9)
        assert np.abs(np.log(here) - np.log(there)).max() == pytest.approx(epsilon)


def test_bad_arguments() -> None:
    with pytest.raises(AccFirstError):
        advanced_composition(0.1, 0.0, 10, 0.0)
    with pytest.raises(AccFirstError):
        group_privacy(-1.0, 0.0, 2)
    with pytest.raises(AccFirstError):
        threshold_release(1.0, 0.0, 3.0, [1.0])
