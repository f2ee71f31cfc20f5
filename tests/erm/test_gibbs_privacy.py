"""The Gibbs posterior's privacy bounds (docs/mathematics.md#the-gibbs-posteriors-privacy) against the exact privacy
loss of one-dimensional posteriors.

The constants G and the loss range against brute-force maxima (deterministic: grids and seeded random searches); the
Gaussian profile against its definition; worst-case searches over neighbouring one-feature datasets
(tests/erm/gibbs_exact.py, seeded differential evolution) that must stay below the reported ε and come within a
factor 2 of it, so that a bound loosened by half fails; a Monte Carlo of the privacy loss on the worst pair found,
whose estimate of δ(ε) must match the exact profile (binomial test at 1e-3: a correct tool fails with probability
≤ 10⁻³). Runtime about 90 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from accfirst import AccFirstError
from accfirst.erm import gibbs
from accfirst.erm.gibbs_privacy import (
    LOGISTIC_LINE_GAP,
    exponential_mechanism_epsilon,
    gaussian_dp_delta,
    gaussian_dp_epsilon,
    gibbs_epsilon,
    logistic_gradient_gap,
    loss_range,
    ridge_gradient_gap,
)
from tests.erm.gibbs_exact import (
    epsilon_at,
    grid_delta,
    logistic_log_densities,
    loss_above,
    ridge_delta,
    ridge_pair,
    worst_logistic,
    worst_ridge,
)


@pytest.mark.parametrize("mu", [0.05, 0.5, 2.0, 8.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-12])
def test_gaussian_profile_is_the_gaussian_mechanisms(mu: float, delta: float) -> None:
    """δ(ε) of N(0, 1) against N(μ, 1) by quadrature equals the formula; the ε returned is the least one (10⁻⁹)."""
    epsilon = gaussian_dp_epsilon(mu, delta)
    assert gaussian_dp_delta(mu, epsilon) <= delta < gaussian_dp_delta(mu, epsilon * (1 - 1e-9))
    x = np.linspace(-40, 40 + mu, 400_001)
    integrand = np.maximum(stats.norm.pdf(x) - math.exp(epsilon) * stats.norm.pdf(x, loc=mu), 0.0)
    assert integrate.trapezoid(integrand, x) == pytest.approx(gaussian_dp_delta(mu, epsilon), rel=1e-6, abs=1e-15)
    # μ-GDP is μ²/2-zCDP: the zCDP conversion is an upper bound, 1.1–1.4 times the profile's at δ = 10⁻⁶.
    assert epsilon <= mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta))


def test_the_gradient_gaps_are_the_largest_gradients() -> None:
    """One feature: brute force over a grid of rows and θ reaches each G to 10⁻⁴ and never exceeds it; two features:
    a random search over ℓ1-bounded rows stays below G and comes within 3% (logistic: two rows at nearly
    opposite angles far out)."""
    x = np.linspace(-1, 1, 401)
    for radius in (0.3, 1.0, 4.0, 14.14):
        # At θ the gradient of ℓ(·; (x, y)) is x²θ − xy: G is the widest spread of these over rows, then over θ.
        theta = np.linspace(-radius, radius, 201)[:, None]
        slopes = np.concatenate([x * x * theta - x, x * x * theta + x], axis=1)
        widest = float((slopes.max(axis=1) - slopes.min(axis=1)).max())
        assert ridge_gradient_gap(1, radius) - 1e-4 <= widest <= ridge_gradient_gap(1, radius) + 1e-12
    thetas = np.linspace(0.01, 30, 6000)[:, None]
    phi = x[None, :] / (1 + np.exp(x[None, :] * thetas))
    assert LOGISTIC_LINE_GAP - 1e-4 <= (phi.max(axis=1) - phi.min(axis=1)).max() <= LOGISTIC_LINE_GAP
    assert logistic_gradient_gap(1) == LOGISTIC_LINE_GAP and logistic_gradient_gap(3) == 2.0
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((200_000, 2, 2))
    rows /= np.maximum(np.abs(rows).sum(axis=2, keepdims=True), 1.0)
    labels = rng.choice([-1.0, 1.0], (200_000, 2))
    theta = rng.standard_normal((200_000, 2))
    theta *= (4.0 * np.sqrt(rng.random((200_000, 1)))) / np.linalg.norm(theta, axis=1, keepdims=True)
    first = np.einsum("kp,kp->k", rows[:, 0], theta)[:, None] * rows[:, 0] - labels[:, :1] * rows[:, 0]
    second = np.einsum("kp,kp->k", rows[:, 1], theta)[:, None] * rows[:, 1] - labels[:, 1:] * rows[:, 1]
    assert np.linalg.norm(first - second, axis=1).max() <= ridge_gradient_gap(2, 4.0)
    u = np.stack([np.ones(200_000), np.zeros(200_000)], axis=1)
    angle = math.pi - rng.uniform(0.001, 0.3, 200_000)
    other = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    other /= np.abs(other).sum(axis=1, keepdims=True)
    # Along the bisector of the two directions both margins are positive, and far out both slopes are near 1.
    bisector = u + other / np.linalg.norm(other, axis=1, keepdims=True)
    far = rng.uniform(0, 1e5, (200_000, 1)) * bisector
    gradient = lambda w: w * special.expit(np.einsum("kp,kp->k", w, far))[:, None]  # noqa: E731
    spread = np.linalg.norm(gradient(u) - gradient(other), axis=1)
    assert 0.97 * logistic_gradient_gap(2) <= spread.max() <= logistic_gradient_gap(2)


def test_the_loss_range_is_the_largest_range() -> None:
    """One feature: the range of ℓ(·; z) − ℓ(·; z′) on [−r, r] over a grid of rows (|y| = 1) reaches the bound to
    10⁻³ and never exceeds it; the pure ε is β times it."""
    x = np.linspace(-1, 1, 201)
    for radius in (0.3, 1.0, 3.0, 4.5, 10.0, 50.0):
        theta = np.linspace(-radius, radius, 1001)
        best = 0.0
        for y, other in ((1.0, 1.0), (1.0, -1.0)):
            first = 0.5 * (y - x[:, None] * theta[None, :]) ** 2
            second = 0.5 * (other - x[:, None] * theta[None, :]) ** 2
            difference = first[:, None, :] - second[None, :, :]
            best = max(best, float((difference.max(axis=2) - difference.min(axis=2)).max()))
        assert loss_range(1, radius) * (1 - 1e-3) <= best <= loss_range(1, radius)
    assert loss_range(3, 10.0) == 121.0 and exponential_mechanism_epsilon(0.5, 1, 3.0) == 0.5 * loss_range(1, 3.0)
    with pytest.raises(AccFirstError, match="form"):
        gibbs_epsilon(0.1, 100, 0.01, 1.0, 1e-6, "other")


RIDGE_CASES = [  # (n, λ, α, δ of the run): a pure one and one where the Gaussian profile is the smaller
    (1000, 0.01, 0.05, 0.0),
    (10_000, 0.001, 0.005, 1e-6),
]


@pytest.mark.parametrize(("n", "lam", "alpha", "delta"), RIDGE_CASES)
def test_the_reported_ridge_epsilon_bounds_the_worst_loss_found_and_is_within_twice_it(
    n: int, lam: float, alpha: float, delta: float
) -> None:
    """One feature, the plan's β and ball: the largest privacy loss a search over neighbouring datasets finds is
    below the ε the run reports (as its plan states it) and above half of it."""
    plan = gibbs._ridge_plan(n, 1, lam, 1 / math.sqrt(lam), alpha, 0.1, 1e-6 if delta else 0.0)
    assert plan.delta == delta
    found, _ = worst_ridge(n, lam, plan.sampler.beta, plan.sampler.radius, delta, seed=1, iterations=12)
    assert plan.epsilon / 2 <= found <= plan.epsilon


def test_the_reported_logistic_epsilon_bounds_the_worst_loss_found_and_is_within_twice_it() -> None:
    """One feature, n = 1000, λ = 0.01, α = 0.05: as for ridge, at the posterior's δ."""
    plan = gibbs._logistic_plan(1000, 1, 0.01, 0.05, 0.1, 1e-6)
    found, _ = worst_logistic(1000, 0.01, plan.beta, 1e-6 / 1.01, seed=1, iterations=6)
    assert plan.epsilon / 2 <= found <= plan.epsilon


def test_the_gaussian_profile_bounds_every_pair_at_every_epsilon() -> None:
    """The theorem itself, without the plan: on the worst ridge pair found at δ = 10⁻⁶ and on a far-out logistic
    pair, the exact δ(ε) lies below the Gaussian profile of μ = G√(β/(nλ)) at every ε of a grid."""
    n, lam, beta, radius = 2000, 0.001, 0.2, 22.0
    _, (share, lean, x, y, x2, y2) = worst_ridge(n, lam, beta, radius, 1e-6, seed=2, iterations=8)
    a = share * (n - 1)
    here, there = ridge_pair(n, lam, beta, radius, (a, lean * min(n - 1.0, math.sqrt((n - 1) * a))), (x, y), (x2, y2))
    mu = ridge_gradient_gap(1, radius) * math.sqrt(beta / (n * lam))
    for epsilon in np.linspace(0, 6 * mu + 3, 40):
        assert ridge_delta(here, there, epsilon) <= gaussian_dp_delta(mu, epsilon) + 1e-15
    grid, here, there = logistic_log_densities(500, 0.002, 0.2, (120, 1.0), -0.07, 1.0)
    mu = LOGISTIC_LINE_GAP * math.sqrt(0.2 / (500 * 0.002))
    for epsilon in np.linspace(0, 6 * mu + 3, 40):
        assert grid_delta(here, there, grid[1] - grid[0], epsilon) <= gaussian_dp_delta(mu, epsilon) + 1e-9


def test_a_monte_carlo_of_the_privacy_loss_on_the_worst_pair_matches_the_exact_profile() -> None:
    """200,000 draws of the worst ridge pair's posterior (n = 1000, λ = 0.01, α = 0.01, δ = 0.01 to make δ
    visible): the share of draws whose privacy loss L exceeds ε, and the estimate E[(1 − e^{ε−L})₊] of δ(ε),
    against the closed form; and below the plan's bound at the plan's ε."""
    n, lam = 1000, 0.01
    plan = gibbs._ridge_plan(n, 1, lam, 10.0, 0.01, 0.1, 0.01)
    beta, radius = plan.sampler.beta, plan.sampler.radius
    _, (share, lean, x, y, x2, y2) = worst_ridge(n, lam, beta, radius, 0.01, seed=3, iterations=8)
    a = share * (n - 1)
    here, there = ridge_pair(n, lam, beta, radius, (a, lean * min(n - 1.0, math.sqrt((n - 1) * a))), (x, y), (x2, y2))
    low, high = (-radius - here.mean) / here.sd, (radius - here.mean) / here.sd
    draws = stats.truncnorm(low, high, loc=here.mean, scale=here.sd).rvs(200_000, random_state=4)
    loss = -(here.K - there.K) / 2 * draws**2 + (here.J - there.J) * draws + there.log_norm - here.log_norm
    epsilon = epsilon_at(lambda e: ridge_delta(here, there, e), 0.01) / 2
    exact = ridge_delta(here, there, epsilon)
    estimate = np.maximum(1 - np.exp(epsilon - loss), 0.0)
    assert abs(estimate.mean() - exact) <= 4 * estimate.std() / math.sqrt(len(draws))
    above = int(np.count_nonzero(loss > epsilon))
    probability = sum(here.mass(u, v) for u, v in loss_above(here, there, epsilon))
    assert stats.binomtest(above, len(draws), probability).pvalue > 1e-3
    assert np.mean(np.maximum(1 - np.exp(plan.epsilon - loss), 0.0)) <= 0.01
