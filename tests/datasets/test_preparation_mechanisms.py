"""The preparation's mechanisms against their exact laws, and the quantile's privacy loss by Monte Carlo.

Fixed seeds. Each distribution test rejects at p < 10⁻³ (chi-square, Kolmogorov–Smirnov, or a
Bonferroni-corrected binomial test over the levels), so a correct mechanism fails it with
probability at most 10⁻³ per test; the sample sizes catch a missing factor 2 in an exponent or
a scale (each such bug moves the statistic by tens of standard errors).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from accfirst.datasets.columns import Categorical
from accfirst.datasets.prepare import levels
from accfirst.datasets.prepare.base import ColumnPlan, Context
from accfirst.datasets.prepare.centre import PrivateCentre
from accfirst.datasets.prepare.levels import PrivateLevels, threshold
from accfirst.datasets.prepare.noise import exponential_mechanism, float_slack
from accfirst.datasets.prepare.quantile import VALUES, private_quantile, quantile_utility
from accfirst.datasets.prepare.spread import PrivateSpread
from accfirst.errors import DataError
from accfirst.mechanisms.lattice import lattice_spacing

P_MIN = 1e-3


def _quantile_law(values: np.ndarray, q: float, epsilon: float) -> np.ndarray:
    """The exponential mechanism's exact law over the candidates: ∝ exp(ε·u/2)."""
    logits = epsilon * quantile_utility(np.sort(values), q) / 2
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def _chi_square(counts: np.ndarray, law: np.ndarray) -> float:
    """p-value of observed candidate counts against the law, candidates with < 5 expected pooled."""
    expected = law * counts.sum()
    big = expected >= 5
    observed = np.append(counts[big], counts[~big].sum())
    expected = np.append(expected[big], expected[~big].sum())
    keep = expected > 0
    return float(stats.chisquare(observed[keep], expected[keep]).pvalue)


def test_private_quantile_follows_the_exponential_mechanism():
    rng = np.random.default_rng(11)
    values = np.round(rng.normal(40, 8, 120), 1)
    law = _quantile_law(values, 0.25, 0.3)
    draws = [private_quantile(np.sort(values), 0.25, 0.3, rng) for _ in range(20_000)]
    counts = np.bincount(np.searchsorted(VALUES.candidates, draws), minlength=len(VALUES.candidates))
    assert _chi_square(counts, law) > P_MIN
    # A sampler without the factor 2 (∝ exp(ε·u)) is rejected by the same test.
    sharper = _quantile_law(values, 0.25, 0.6)
    assert _chi_square(counts, sharper) < 1e-12


def _context(values: np.ndarray | Categorical, rng: np.random.Generator) -> Context:
    return Context({"x": values}, np.arange(len(values.codes if isinstance(values, Categorical) else values)), rng)


def test_private_centre_is_laplace_around_the_clipped_mean():
    rng = np.random.default_rng(12)
    values = rng.uniform(0, 10, 1_000)
    values[::10] = np.nan  # a gap counts as the range's centre
    plan = ColumnPlan("x", "numeric", low=1.0, high=9.0)
    context = _context(values, rng)
    step = PrivateCentre(plan)
    exact = float(np.mean(np.where(np.isfinite(values), np.clip(values, 1, 9), 5.0)))
    assert step.statistic(context)[0] == pytest.approx(exact)
    epsilon = 0.5
    scale = (9.0 - 1.0) / (1_000 * epsilon)
    released = []
    for _ in range(4_000):
        step.run(context, epsilon, 0.0)
        released.append(plan.centre)
    # The clip to [1, 9] never acts here: the noise scale is 0.016 around a mean near 5.
    assert stats.kstest(released, stats.laplace(loc=exact, scale=scale).cdf).pvalue > P_MIN
    assert stats.kstest(released, stats.laplace(loc=exact, scale=2 * scale).cdf).pvalue < 1e-12


def test_private_spread_is_a_laplace_variance_around_the_clipped_one():
    rng = np.random.default_rng(13)
    values = rng.normal(0, 2, 2_000)
    plan = ColumnPlan("x", "numeric", low=-6.0, high=6.0, fill=0.0, centre=0.1)
    context = _context(values, rng)
    step = PrivateSpread(plan)
    exact = float(np.mean((np.clip(values, -6, 6) - 0.1) ** 2))
    scale = step.sensitivity(context) / 0.5
    assert step.sensitivity(context) == pytest.approx(6.1**2 / 2_000)
    variances = []
    for _ in range(4_000):
        step.run(context, 0.5, 0.0)
        variances.append(plan.spread**2)
    assert stats.kstest(variances, stats.laplace(loc=exact, scale=scale).cdf).pvalue > P_MIN


def test_private_levels_release_each_level_with_its_exact_probability():
    counts = {"a": 300, "b": 60, "c": 45, "d": 30, "e": 1}
    codes = np.repeat(np.arange(len(counts)), list(counts.values()))
    column = Categorical(np.concatenate([codes, [-1] * 20]), tuple(counts))  # 20 gaps: counted nowhere
    rng = np.random.default_rng(14)
    epsilon, delta, runs = 0.2, 1e-3, 20_000
    tau = threshold(epsilon, delta)
    assert tau == pytest.approx(1 + 10 * math.log(500))
    plan = ColumnPlan("x", "text")
    step = PrivateLevels(plan, max_levels=20)
    context = _context(column, rng)
    released = dict.fromkeys(counts, 0)
    for _ in range(runs):
        plan.dropped = ""
        step.run(context, epsilon, delta)
        assert list(plan.levels) == sorted(plan.levels)  # a public order, not the counts'
        for level in plan.levels:
            released[level] += 1
    for level, count in counts.items():
        # P(count + Lap(2/ε) > τ); for the level of count 1 (present in one neighbour only) that is exactly δ.
        probability = stats.laplace(loc=count, scale=2 / epsilon).sf(tau)
        test = stats.binomtest(released[level], runs, probability)
        assert test.pvalue > P_MIN / len(counts), (level, released[level], probability * runs)
    assert stats.laplace(loc=1, scale=2 / epsilon).sf(tau) == pytest.approx(delta)


def test_a_level_cap_keeps_at_most_max_levels_by_noisy_count():
    codes = np.repeat(np.arange(6), [500, 400, 300, 200, 100, 90])
    plan = ColumnPlan("x", "text")
    step = PrivateLevels(plan, max_levels=3)
    context = _context(Categorical(codes, ("f", "e", "d", "c", "b", "a")), np.random.default_rng(15))
    step.run(context, 1.0, 1e-6)
    assert plan.levels == ("d", "e", "f")  # the three largest counts by far, listed by name


# Worst-case neighbouring pairs for the quantile step (q = 0.25, 41 values, one in each of 41 neighbouring cells of
# the grid): the smallest value replaced by a huge one shifts the rank of every candidate in between by one;
# a value replaced by a gap also moves the target rank t = q·m.
_ONE_PER_CELL = VALUES.candidates[np.searchsorted(VALUES.candidates, 10.0) :][:41]
PAIRS = {
    "replace_by_huge": (_ONE_PER_CELL, np.r_[_ONE_PER_CELL[1:], 1e11]),
    "replace_by_gap": (_ONE_PER_CELL, _ONE_PER_CELL[1:]),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_quantile_privacy_loss_stays_below_epsilon(pair):
    """Exact loss ≤ ε on the pair, and a Monte Carlo of the sampler's outputs agrees.

    60,000 draws from each table through the preparation's sampler. For every output drawn often
    enough (≥ 2,000 expected from both), the estimated loss ln(p̂_D/p̂_D′) must stay below
    ε + 4 standard errors (false failure ≤ 3·10⁻⁵ per output, a few outputs: < 10⁻³ in all); the
    pair is hard (the exact loss reaches 0.4ε at least), and a sampler without the factor 2
    would show a loss near 2ε.
    """
    epsilon = 1.0
    before, after = PAIRS[pair]
    utilities = [quantile_utility(np.sort(values), 0.25) for values in (before, after)]
    assert np.abs(utilities[0] - utilities[1]).max() <= 1.0
    laws = [_quantile_law(values, 0.25, epsilon) for values in (before, after)]
    exact_loss = np.abs(np.log(laws[0] / laws[1]))
    assert exact_loss.max() <= epsilon + 1e-12
    assert exact_loss.max() >= 0.4 * epsilon
    rng = np.random.default_rng(16)
    draws = 60_000
    counts = [
        np.bincount(
            [exponential_mechanism(u, epsilon, 1.0, rng) for _ in range(draws)], minlength=len(VALUES.candidates)
        )
        for u in utilities
    ]
    often = (laws[0] * draws >= 2_000) & (laws[1] * draws >= 2_000)
    assert often.sum() >= 3
    estimated = np.log(counts[0][often] / counts[1][often])
    error = np.sqrt(1 / counts[0][often] + 1 / counts[1][often])
    assert np.all(np.abs(estimated) <= epsilon + 4 * error)
    # The Monte Carlo sees the exact loss (it is a measurement of it, not a formality).
    assert np.all(np.abs(estimated - np.log(laws[0][often] / laws[1][often])) <= 4 * error)


def test_the_float_sampler_is_pure_epsilon_dp_with_a_floor_and_a_slack():
    """Float64 sampling: ε′ = ε − float_slack(K) draws, and with probability 2⁻²⁰ (an exact integer draw) a uniform
    candidate, so that none is impossible. The logits are taken from the exact differences u − max u, so a huge
    common offset draws exactly what no offset draws. Surely so (the same uniforms): false-failure rate 0."""
    K = len(VALUES.candidates)
    assert 0 < float_slack(K) < 1e-5
    values = np.sort(np.random.default_rng(3).normal(size=200))
    utility = quantile_utility(values, 0.25)
    plain = [exponential_mechanism(utility, 0.5, 1.0, np.random.default_rng(seed)) for seed in range(200)]
    shifted = [exponential_mechanism(utility - 1e12, 0.5, 1.0, np.random.default_rng(seed)) for seed in range(200)]
    assert plain == shifted

    class Floor:
        """A generator whose first integer draw hits the 2⁻²⁰ branch and whose second picks the last candidate."""

        def __init__(self) -> None:
            self.draws = iter([0, K - 1])

        def integers(self, high: int) -> int:
            return next(self.draws)

    assert exponential_mechanism(utility, 0.5, 1.0, Floor()) == K - 1  # far out in the tail: still possible
    with pytest.raises(DataError, match="a private quantile needs ε above"):
        exponential_mechanism(utility, float_slack(K) / 2, 1.0, np.random.default_rng(0))


def test_a_level_is_kept_only_if_its_ideal_noisy_count_exceeds_the_priced_threshold(monkeypatch):
    """The δ of a level is priced on the ideal noisy count; the release is rounded to the lattice gℤ, up to g/2 away.

    The released lattice point r just above τ with r − g/2 ≤ τ can come from an ideal count below τ: a level
    released there must not be kept (on 856a42a it was: the comparison was with τ, not τ + g/2).
    """
    epsilon = 0.2
    spacing = lattice_spacing(2 / epsilon)
    # A δ for which the first lattice point above τ has part of its cell at or below τ.
    delta = next(d for d in np.geomspace(1e-3, 1e-2, 200) if math.modf(threshold(epsilon, d) / spacing)[0] >= 0.5)
    tau = threshold(epsilon, delta)
    above = spacing * (math.floor(tau / spacing) + 1)
    assert above > tau and above - spacing / 2 <= tau
    monkeypatch.setattr(levels, "laplace_release", lambda values, *_: np.full(len(values), above))
    plan = ColumnPlan("x", "text")
    PrivateLevels(plan, max_levels=20).run(
        _context(Categorical(np.array([0]), ("rare",)), np.random.default_rng(0)), epsilon, delta
    )
    assert plan.levels == ()
    monkeypatch.setattr(levels, "laplace_release", lambda values, *_: np.full(len(values), above + spacing))
    PrivateLevels(plan, max_levels=20).run(
        _context(Categorical(np.array([0]), ("rare",)), np.random.default_rng(0)), epsilon, delta
    )
    assert plan.levels == ("rare",)
