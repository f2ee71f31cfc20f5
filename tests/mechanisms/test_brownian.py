"""Brownian noise reduction (docs/mathematics.md#brownian-noise-reduction): marginals, covariance, the loss identity,
the boundaries.

Statistical assertions use fixed seeds and p-value thresholds of 1e-3 (Bonferroni-
corrected where several levels are checked), so a correct sampler fails a test with
probability ≤ 1e-3 for its seed; the seeds are fixed, so the outcome is deterministic.
Each test shows its check rejects a plausible bug (wrong variance, a fixed-level bound
under optional stopping).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from accfirst import AccFirstError
from accfirst.mechanisms.brownian import (
    GAUSSIAN,
    brownian_expost_epsilon,
    brownian_noise_reduction,
    variance_matched_rhos,
)

SAMPLES = 20_000
ALPHA = 1e-3
RHOS = np.geomspace(0.01, 50.0, 40)


def variances(sensitivity: float, rhos: np.ndarray) -> np.ndarray:
    """T_k = Δ₂²/(2ρ_k)."""
    return sensitivity**2 / (2 * rhos)


def normal_pvalue(samples: np.ndarray, variance: float) -> float:
    return stats.kstest(samples, stats.norm(scale=math.sqrt(variance)).cdf).pvalue


def test_every_release_is_gaussian_with_variance_sensitivity_squared_over_two_rho() -> None:
    sensitivity = 1.7
    v = np.linspace(-5, 5, SAMPLES)
    out = brownian_noise_reduction(v, sensitivity, RHOS, np.random.default_rng(1))
    assert out.dtype == np.float64 and out.shape == (RHOS.size, SAMPLES)
    T = variances(sensitivity, RHOS)
    levels = [0, 9, 19, 29, 39]
    for k in levels:
        assert normal_pvalue(out[k] - v, T[k]) > ALPHA / len(levels), k
    # The same test rejects the classic bug of a variance Δ²/ρ (twice too noisy).
    assert normal_pvalue(out[19] - v, 2 * T[19]) < 1e-12


def test_releases_keep_the_shape_of_the_statistic() -> None:
    out = brownian_noise_reduction(np.ones((3, 4)), 1.0, [0.5, 1.0], np.random.default_rng(0))
    assert out.shape == (2, 3, 4)


def test_covariance_across_levels_is_min_of_the_variances() -> None:
    """Fisher-z test of each of the 15 correlations at 1e-3/15: false-failure rate ≤ 1e-3."""
    rhos = np.array([0.05, 0.1, 0.4, 0.5, 3.0, 20.0])
    T = variances(2.0, rhos)
    noise = brownian_noise_reduction(np.zeros(SAMPLES), 2.0, rhos, np.random.default_rng(2))
    empirical = np.corrcoef(noise)
    critical = stats.norm.isf(ALPHA / 15 / 2) / math.sqrt(SAMPLES - 3)
    for j in range(rhos.size):
        for k in range(j + 1, rhos.size):
            expected = min(T[j], T[k]) / math.sqrt(T[j] * T[k])
            assert abs(math.atanh(empirical[j, k]) - math.atanh(expected)) < critical, (j, k)
    # Independent noise per level (a plain Gaussian mechanism per level) would fail.
    assert abs(math.atanh(empirical[2, 3]) - math.atanh(0.0)) > 50 * critical


def test_lazy_chain_matches_the_full_sampler_and_can_skip_and_extend() -> None:
    v = np.arange(6.0)
    full = brownian_noise_reduction(v, 1.0, RHOS, np.random.default_rng(8))
    chain = GAUSSIAN.chain(v, 1.0, RHOS, np.random.default_rng(8))
    for k in range(RHOS.size):
        np.testing.assert_array_equal(chain.release(k), full[k])
    np.testing.assert_array_equal(chain.release(RHOS.size - 1), full[-1])  # reading a level again
    with pytest.raises(AccFirstError, match="increasing level order"):
        chain.release(3)
    with pytest.raises(AccFirstError, match="past the last level"):
        chain.release(RHOS.size)
    with pytest.raises(AccFirstError, match="exceed the current top"):
        chain.extend([10.0])
    chain.extend([100.0, 200.0])
    assert len(chain) == RHOS.size + 2
    chain.release(RHOS.size + 1)


def test_skipped_and_extended_levels_have_the_joint_law() -> None:
    """KS and Fisher-z at 1e-3/3: false-failure rate ≤ 1e-3."""
    rhos = np.array([0.1, 0.2, 0.3, 1.0])
    chain = GAUSSIAN.chain(np.zeros(SAMPLES), 1.0, rhos, np.random.default_rng(4))
    first = chain.release(0)
    jumped = chain.release(3)  # levels 1 and 2 are never sampled
    chain.extend([4.0])
    extended = chain.release(4)
    T = variances(1.0, np.append(rhos, 4.0))
    assert normal_pvalue(jumped, T[3]) > ALPHA / 3
    assert normal_pvalue(extended, T[4]) > ALPHA / 3
    critical = stats.norm.isf(ALPHA / 3 / 2) / math.sqrt(SAMPLES - 3)
    expected = math.sqrt(T[3] / T[0])
    assert abs(math.atanh(np.corrcoef(first, jumped)[0, 1]) - math.atanh(expected)) < critical


def test_privacy_loss_of_the_prefix_is_that_of_the_last_release() -> None:
    """docs/mathematics.md#brownian-noise-reduction, exactly: the log-density ratio of (v̂_1 … v̂_k) under D and D′
    equals ‖d‖²/(2T_k) + ⟨d, B(T_k)⟩/T_k. Deterministic (computed, not estimated)."""
    rng = np.random.default_rng(5)
    rhos = np.array([0.02, 0.1, 0.15, 0.7, 2.0])
    sensitivity, dim = 1.3, 3
    T = variances(sensitivity, rhos)
    v = rng.normal(size=dim)
    d = rng.normal(size=dim)
    d *= sensitivity / np.linalg.norm(d)  # neighbours at the full ℓ2-sensitivity
    for _ in range(20):
        releases = brownian_noise_reduction(v, sensitivity, rhos, rng)
        for k in range(1, rhos.size + 1):
            covariance = np.kron(np.minimum.outer(T[:k], T[:k]), np.eye(dim))
            observed = releases[:k].ravel()
            here = stats.multivariate_normal(np.tile(v, k), covariance).logpdf(observed)
            there = stats.multivariate_normal(np.tile(v - d, k), covariance).logpdf(observed)
            noise = releases[k - 1] - v
            identity = d @ d / (2 * T[k - 1]) + d @ noise / T[k - 1]
            assert here - there == pytest.approx(identity, rel=1e-7, abs=1e-7)


def test_privacy_loss_in_rho_time_is_r_plus_root_two_brownian() -> None:
    """L_k ∼ N(r, 2r) with r = ‖d‖²/(2T_k) = ρ_k at full sensitivity. KS at 1e-3/3."""
    rhos = np.array([0.05, 0.5, 5.0])
    noise = brownian_noise_reduction(np.zeros(SAMPLES), 1.0, rhos, np.random.default_rng(6))
    T = variances(1.0, rhos)
    for k, rho in enumerate(rhos):
        loss = 1 / (2 * T[k]) + noise[k] / T[k]
        assert stats.kstest(loss, stats.norm(loc=rho, scale=math.sqrt(2 * rho)).cdf).pvalue > ALPHA / 3


PATHS = 100_000
DELTA = 0.05
CROSSING_RHOS = np.geomspace(1e-3, 1e3, 160)


def crossing_share(bounds: dict[str, np.ndarray]) -> dict[str, float]:
    """Share of paths whose loss exceeds the bound at the level where an adversary stops.

    The adversary knows D and D′ (neighbours at full sensitivity) and stops at the first
    level whose loss is above the bound: a stopping rule that reads only the releases.
    A loss above the bound at the stop happens exactly when some level crosses.
    """
    T = variances(1.0, CROSSING_RHOS)
    crossed = {name: 0 for name in bounds}
    rng = np.random.default_rng(7)
    for _ in range(4):  # 4 × 25,000 paths keeps the arrays at 32 MB
        noise = brownian_noise_reduction(np.zeros(PATHS // 4), 1.0, CROSSING_RHOS, rng)
        loss = 1 / (2 * T[:, None]) + noise / T[:, None]
        for name, bound in bounds.items():
            crossed[name] += int(np.count_nonzero((loss > bound[:, None]).any(axis=0)))
    return {name: count / PATHS for name, count in crossed.items()}


def test_boundaries_are_crossed_with_probability_at_most_delta_under_adversarial_stopping() -> None:
    """10⁵ paths, δ = 0.05. Allowed: the 1 − 10⁻⁴ binomial quantile at δ (false-failure rate
    ≤ 10⁻⁴ per boundary). ~3 s. The fixed-level conversion ρ + 2√(ρ ln(1/δ)), valid for one
    level fixed in advance, must fail here: it shows the adversary has power."""
    rho_star = math.sqrt(CROSSING_RHOS[0] * CROSSING_RHOS[-1])
    bounds = {
        "mixture": brownian_expost_epsilon(CROSSING_RHOS, DELTA),
        "mixture, ρ̃ = 1": brownian_expost_epsilon(CROSSING_RHOS, DELTA, rho_ref=1.0),
        "linear": brownian_expost_epsilon(CROSSING_RHOS, DELTA, "linear", rho_ref=rho_star),
        "fixed-level": CROSSING_RHOS + 2 * np.sqrt(CROSSING_RHOS * math.log(1 / DELTA)),
    }
    share = crossing_share(bounds)
    allowed = stats.binom.ppf(1 - 1e-4, PATHS, DELTA) / PATHS
    for name in ("mixture", "mixture, ρ̃ = 1", "linear"):
        assert share[name] <= allowed, (name, share)
    # The linear boundary's continuous crossing probability is exactly δ: a sampler or loss
    # that is too timid would show far less.
    assert share["linear"] > 0.5 * DELTA, share
    assert share["fixed-level"] > 2 * DELTA, share


def test_linear_boundary_meets_the_fixed_level_conversion_at_its_anchor() -> None:
    rho, delta = 0.3, 1e-6
    fixed = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert brownian_expost_epsilon(rho, delta, "linear", rho_ref=rho) == pytest.approx(fixed, rel=1e-14)
    assert brownian_expost_epsilon(2 * rho, delta, "linear", rho_ref=rho) > fixed
    mixture = brownian_expost_epsilon(rho, delta, rho_ref=0.1)
    assert mixture == pytest.approx(rho + 2 * math.sqrt(0.4 * (math.log(1e6) + 0.5 * math.log(4.0))), rel=1e-14)
    grid = np.geomspace(1e-4, 10, 50)
    values = brownian_expost_epsilon(grid, delta)
    assert values[0] == brownian_expost_epsilon(grid[0], delta, rho_ref=grid[0])  # ρ̃ = ρ_1 by default
    assert np.all(np.diff(values) > 0)


def test_variance_matched_grid_has_the_laplace_variance() -> None:
    eps = np.geomspace(0.01, 10, 7)
    rhos = variance_matched_rhos(eps, 4.0, 3 / math.sqrt(2))
    np.testing.assert_allclose((3 / math.sqrt(2)) ** 2 / (2 * rhos), 2 * (4.0 / eps) ** 2, rtol=1e-13)


def test_gaussian_mechanism_at_one_level() -> None:
    """KS at 1e-3: false-failure rate ≤ 1e-3."""
    out = GAUSSIAN.perturb(np.zeros(SAMPLES), 2.0, 0.5, np.random.default_rng(3))
    assert normal_pvalue(out, 4.0) > ALPHA


@pytest.mark.parametrize(
    ("rhos", "sensitivity", "v", "message"),
    [
        ([1.0, 0.5], 1.0, [0.0], "strictly increasing"),
        ([0.0, 1.0], 1.0, [0.0], "ρ must be a finite number > 0"),
        ([], 1.0, [0.0], "non-empty"),
        ([0.1, 1.0], 0.0, [0.0], "sensitivity"),
        ([0.1, 1.0], 1.0, [np.inf], "finite"),
    ],
)
def test_sampler_rejects_bad_arguments(rhos, sensitivity, v, message) -> None:
    with pytest.raises(AccFirstError, match=message):
        brownian_noise_reduction(np.asarray(v), sensitivity, rhos, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rho": 0.0}, "finite number > 0"),
        ({"rho": [0.1, np.nan]}, "finite number > 0"),
        ({"delta": 0.0}, r"delta must be in \(0, 1\)"),
        ({"delta": 1.5}, r"delta must be in \(0, 1\)"),
        ({"delta": "small"}, "delta must be a number"),
        ({"boundary": "curved"}, "boundary must be one of"),
        ({"boundary": "linear"}, "needs an anchor"),
        ({"rho_ref": -1.0}, "rho_ref must be > 0"),
    ],
)
def test_expost_epsilon_rejects_bad_arguments(kwargs, message) -> None:
    arguments = {"rho": 0.5, "delta": 1e-6} | kwargs
    with pytest.raises(AccFirstError, match=message):
        brownian_expost_epsilon(**arguments)
