"""Randomized response (docs/mathematics.md#teaching-mechanisms): ε against direct likelihood ratios, the estimator's
bias and variance by Monte Carlo, its interval's coverage and the misfit flag's error exactly, and the coin protocol.

Monte Carlo assertions use fixed seeds and bounds at ≥ 4.4 standard errors (or binomial
tails of 1e-5), so a correct implementation fails each with probability below 1e-5 for a
random seed; with the fixed seeds the outcome is deterministic.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from accfirst import AccFirstError
from accfirst.teaching import TWO_COINS, RandomizedResponse

GRID = np.linspace(0.05, 0.95, 13)
CASES = [(0.5, 0.5, 0.3), (0.25, 0.5, 0.1), (0.75, 0.2, 0.6), (0.4, 0.9, 0.95)]


def direct_epsilon(p: float, q: float) -> float:
    """max over answers of |ln P(answer | yes) − ln P(answer | no)|, from the 2 × 2 table."""
    table = np.array([[p + (1 - p) * q, (1 - p) * q], [1 - p - (1 - p) * q, 1 - (1 - p) * q]])
    return float(np.max(np.abs(np.log(table[:, 0]) - np.log(table[:, 1]))))


def test_epsilon_equals_the_largest_likelihood_ratio_over_a_grid() -> None:
    for p, q in itertools.product(GRID, GRID):
        assert RandomizedResponse(p, q).epsilon == pytest.approx(direct_epsilon(p, q), rel=1e-12), (p, q)


def test_the_slides_two_coins_are_ln_3() -> None:
    assert TWO_COINS.epsilon == pytest.approx(math.log(3))
    assert TWO_COINS.answer_probabilities == (0.75, 0.25)
    text = TWO_COINS.instructions()
    assert text.startswith("Flip a coin. Tails → answer truthfully.") and "heads → answer “yes”" in text


def test_no_privacy_where_an_answer_reveals_the_truth() -> None:
    assert RandomizedResponse(1.0, 0.5).epsilon == math.inf
    assert RandomizedResponse(0.5, 0.0).epsilon == math.inf  # "yes" only from the truth
    assert RandomizedResponse(0.5, 1.0).epsilon == math.inf


def test_coins_answer_yes_with_the_stated_probabilities() -> None:
    rng = np.random.default_rng(3)
    for p, q, _ in CASES:
        rr = RandomizedResponse(p, q)
        for truth, expected in zip((True, False), rr.answer_probabilities, strict=True):
            answers = rr.respond(np.full(100_000, truth), rng)
            assert stats.binomtest(int(answers.sum()), answers.size, expected).pvalue > 1e-5, (p, q, truth)


@pytest.mark.parametrize(("p", "q", "pi"), CASES)
def test_estimate_is_unbiased_with_the_stated_variance(p: float, q: float, pi: float) -> None:
    rr = RandomizedResponse(p, q)
    n, polls = 40, 400_000
    estimates = rr.estimate(rr.simulate_polls(n, pi, polls, np.random.default_rng(7)) / n)
    variance = rr.variance(pi, n)
    assert abs(estimates.mean() - pi) < 4.5 * math.sqrt(variance / polls)
    # The sample variance of 400,000 draws is within 1% of the truth with overwhelming probability.
    assert estimates.var() == pytest.approx(variance, rel=0.02)


def test_polls_from_coins_match_the_binomial_simulation() -> None:
    """The coin protocol on individual respondents gives the same unbiased estimate."""
    rr = RandomizedResponse(0.5, 0.5)
    rng = np.random.default_rng(11)
    n, polls, pi = 30, 20_000, 0.3
    truths = rng.random((polls, n)) < pi
    estimates = rr.estimate(rr.respond(truths, rng).mean(axis=1))
    assert abs(estimates.mean() - pi) < 4.5 * math.sqrt(rr.variance(pi, n) / polls)
    assert estimates.var() == pytest.approx(rr.variance(pi, n), rel=0.06)


def test_interval_covers_the_true_share() -> None:
    """The exact interval mapped to π: coverage at least 95% at a classroom's n = 30, computed exactly."""
    for p, q, pi in CASES:
        rr = RandomizedResponse(p, q)
        low, high = np.array([rr.confidence_interval(y, 30) for y in range(31)]).T
        covered = (low <= pi) & (pi <= high)
        # Clopper–Pearson's coverage is at least the level for every λ; a broken mapping covers far less.
        assert stats.binom.pmf(np.arange(31), 30, rr.yes_share(pi))[covered].sum() >= 0.95, (p, q, pi)


@pytest.mark.parametrize(("p", "q"), [(0.5, 0.5), (1 / 6, 5 / 6), (5 / 6, 1 / 6), (2 / 3, 1 / 2), (0.25, 0.9)])
def test_answers_that_follow_the_protocol_are_rarely_called_a_misfit(p: float, q: float) -> None:
    """Exact, not sampled: at the share of "yes" where a flag is likeliest (an end of the range), the
    answers of a class that follows the protocol are flagged with probability at most 2.5% per direction.
    (Wilson's interval in place of the exact one flags up to 3.2% at n = 25 and 9.3% at n = 2.)"""
    rr = RandomizedResponse(p, q)
    least, most = rr.yes_share_range
    for n in [*range(1, 61), 100, 250]:
        counts = np.arange(n + 1)
        flags = [rr.misfit(int(yes), n) for yes in counts]
        more = np.array([flag is not None and flag.direction == "more" for flag in flags])
        fewer = np.array([flag is not None and flag.direction == "fewer" for flag in flags])
        assert stats.binom.pmf(counts, n, most)[more].sum() <= 0.025 + 1e-12, n
        assert stats.binom.pmf(counts, n, least)[fewer].sum() <= 0.025 + 1e-12, n
        # A flag is exactly when the interval for π would shrink to a point at 0 or 1.
        intervals = [rr.confidence_interval(int(yes), n) for yes in counts]
        assert all((low == high) == (flag is not None) for (low, high), flag in zip(intervals, flags)), n


def test_twenty_yes_in_a_row_do_not_fit_the_two_coins() -> None:
    misfit = TWO_COINS.misfit(20, 20)
    assert misfit.direction == "more" and misfit.probability == pytest.approx(0.75**20)  # ≈ 0.3%
    assert TWO_COINS.misfit(16, 20) is None  # 80% "yes" of 20: within the coins' sampling error


def test_interval_is_within_zero_one_and_contains_the_clipped_estimate() -> None:
    rr = TWO_COINS
    for yes in range(31):
        low, high = rr.confidence_interval(yes, 30)
        assert 0 <= low <= high <= 1
        assert low <= min(max(rr.estimate(yes / 30), 0), 1) <= high


@pytest.mark.parametrize(("p", "q"), [(0.0, 0.5), (1.5, 0.5), (0.5, -0.1), (0.5, math.nan), ("half", 0.5), (True, 0.5)])
def test_bad_protocols_are_refused(p: object, q: object) -> None:
    with pytest.raises(AccFirstError):
        RandomizedResponse(p, q)


def test_instructions_need_a_coin_or_a_die() -> None:
    assert RandomizedResponse(4 / 6, 1 / 6).instructions().startswith("Roll a die. 1–4 → answer truthfully.")
    with pytest.raises(AccFirstError, match="multiple of 1/6"):
        RandomizedResponse(0.7, 0.5).instructions()
