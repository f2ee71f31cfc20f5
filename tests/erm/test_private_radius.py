"""The free radius R₀ and the private radius's mechanism (docs/mathematics.md#the-free-radius,
docs/mathematics.md#a-private-radius): bounds, sensitivity, the release's tail."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import binomtest

from accfirst import LogisticProblem, RidgeProblem
from accfirst.erm.logistic import LOGISTIC_FREE_RADIUS_CONSTANT
from accfirst.erm.radius import norm_sensitivity, radius_margin, release_radius

LAMBDAS = (1e-4, 1e-3, 5e-3, 0.05, 0.15)


def extreme_rows(rng: np.random.Generator, n: int, p: int, scale: float) -> np.ndarray:
    """Rows at the edge of docs/mathematics.md#setting-and-notation: ‖x‖₁ = ``scale``, on a few coordinates, random
    signs."""
    X = np.zeros((n, p))
    for i in range(n):
        support = rng.choice(p, size=rng.integers(1, p + 1), replace=False)
        weights = rng.dirichlet(np.full(support.size, 0.3))
        X[i, support] = scale * weights * rng.choice([-1.0, 1.0], size=support.size)
    return X


def tight_ridge(lam: float, n: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Every row x = √λ·e₁, y = 1: then u = θ*ᵀx = ½ for every row and ‖θ*‖ = 1/(2√λ) = R₀ exactly."""
    return np.tile([math.sqrt(lam), 0.0], (n, 1)), np.ones(n)


def tight_logistic(lam: float, n: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Every row x = s·e₁, y = 1 with s² = λz/σ(−z) at the maximiser z of z/(1 + e^z): ‖θ*‖ = R₀ exactly."""
    z = 1 + LOGISTIC_FREE_RADIUS_CONSTANT  # z − 1 = z/(1 + e^z) at the maximum (docs/mathematics.md#the-free-radius)
    s = math.sqrt(lam * z * (1 + math.exp(z)))
    return np.tile([s, 0.0], (n, 1)), np.ones(n)


@pytest.mark.parametrize("cls", [RidgeProblem, LogisticProblem])
def test_the_free_radius_bounds_every_minimiser_and_is_tight(cls) -> None:
    """Deterministic: 5 λ × 40 adversarial datasets never exceed R₀; the constructed extremes reach it."""
    rng = np.random.default_rng(190)
    ratios = []
    for lam in LAMBDAS:
        free = cls.free_radius(lam)
        assert free < cls.implied_norm_bound(lam)
        for _ in range(40):
            n, p = int(rng.integers(5, 200)), int(rng.integers(1, 6))
            X = extreme_rows(rng, n, p, rng.uniform(0.05, 1.0))
            y = rng.choice([-1.0, 1.0], size=n)
            if cls is RidgeProblem:
                y = y * rng.uniform(0.0, 1.0, size=n) ** rng.uniform(0, 0.2)
            ratios.append(float(np.linalg.norm(cls(X, y, lam).theta_star)) / free)
        tight = cls(*(tight_ridge(lam) if cls is RidgeProblem else tight_logistic(lam)), lam)
        ratios.append(float(np.linalg.norm(tight.theta_star)) / free)
    assert max(ratios) <= 1 + 1e-9
    assert sum(ratio >= 0.95 for ratio in ratios) >= len(LAMBDAS)


def test_the_logistic_constant_is_the_maximum_of_its_bound() -> None:
    best = minimize_scalar(lambda z: -z / (1 + math.exp(z)), bounds=(0, 5), method="bounded", options={"xatol": 1e-12})
    assert -best.fun == pytest.approx(LOGISTIC_FREE_RADIUS_CONSTANT, rel=1e-9)


def neighbour_gap(cls, X: np.ndarray, y: np.ndarray, lam: float, ceiling: float, row: int, x, target) -> float:
    """|‖θ*_D‖ − ‖θ*_D′‖| over the ball of radius ``ceiling`` when row ``row`` becomes (x, target)."""
    X2, y2 = X.copy(), y.copy()
    X2[row], y2[row] = x, target
    before = float(np.linalg.norm(cls(X, y, lam, radius=ceiling).theta_star))
    return abs(before - float(np.linalg.norm(cls(X2, y2, lam, radius=ceiling).theta_star)))


@pytest.mark.parametrize("cls", [RidgeProblem, LogisticProblem])
def test_one_replaced_row_moves_the_norm_by_at_most_the_sensitivity(cls) -> None:
    """Deterministic: θ* near the R₀-sphere and near 0, every extreme replacement row, ‖θ*‖ moves ≤ Δ_N.

    The replacement rows are the corners ±e_j with y = ±1 and the tight rows; the largest move reaches a
    visible share of Δ_N (the bound is not vacuous).
    """
    lam, n = 0.05, 40
    free = cls.free_radius(lam)
    near_sphere = tight_ridge(lam, n) if cls is RidgeProblem else tight_logistic(lam, n)
    rng = np.random.default_rng(191)
    near_zero = (extreme_rows(rng, n, 2, 1.0), rng.choice([-1.0, 1.0], size=n) * (0.0 if cls is RidgeProblem else 1))
    if cls is LogisticProblem:  # balanced labels on symmetric rows: θ* ≈ 0
        near_zero = (np.vstack([near_zero[0][: n // 2], near_zero[0][: n // 2]]), np.repeat([1.0, -1.0], n // 2))
    bound = norm_sensitivity(RidgeProblem(*near_sphere, lam) if cls is RidgeProblem else cls(*near_sphere, lam), free)
    assert bound == pytest.approx(cls.gradient_gap(free) / (n * lam))
    corners = [(np.array(c, dtype=float), t) for c in ([1, 0], [-1, 0], [0, 1], [0, -1], [0, 0]) for t in (-1.0, 1.0)]
    gaps = [
        neighbour_gap(cls, X, y, lam, free, row, x, target)
        for X, y in (near_sphere, near_zero)
        for row in (0, n - 1)
        for x, target in corners
    ]
    assert max(gaps) <= bound * (1 + 1e-9)
    assert max(gaps) >= 0.1 * bound


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_the_released_radius_falls_below_the_norm_with_probability_beta(noise: str) -> None:
    """P(R < N) ≤ β by 40,000 releases per β (one-sided binomial test at 10⁻³ per β: false-failure rate ≤ 3·10⁻³).

    A release whose margin missed 10% of its size (a relative error of 0.1) moves P(R < N) from 0.05 to about
    0.061: 40,000 draws see that at z ≈ 10, so the test can fail.
    """
    rng = np.random.default_rng(192)
    norm, sensitivity, level = 2.0, 0.3, 0.7
    for beta in (0.01, 0.05, 0.09):
        below = sum(
            release_radius(norm, sensitivity, level, beta, 50.0, 1e-6, noise, rng) < norm for _ in range(40_000)
        )
        assert binomtest(below, 40_000, beta, alternative="greater").pvalue > 1e-3
        assert below > 0.8 * beta * 40_000  # the margin is not wasted: the tail is used, not avoided


def test_the_release_is_clipped_to_the_ceiling_and_floor() -> None:
    rng = np.random.default_rng(193)
    values = [release_radius(1.0, 5.0, 0.1, 0.01, 3.0, 0.5, "laplace", rng) for _ in range(2000)]
    assert min(values) >= 0.5 and max(values) == 3.0
    assert radius_margin(1.0, 2.0, 0.05, "laplace") == pytest.approx(0.5 * math.log(10))
    assert radius_margin(1.0, 0.5, 0.05, "gaussian") == pytest.approx(1.6448536269514722)
