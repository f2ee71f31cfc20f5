"""The exact privacy loss of the one-dimensional Gibbs posterior, for the tests and benchmarks/bench_gibbs.py.

Ridge with one feature: the posterior of rows (x_i, y_i) on [−r, r] is the Gaussian exp(−Kθ²/2 + Jθ) cut to the
interval, K = β(A + nλ), J = βB (A = Σx², B = Σxy); its privacy profile against a neighbour's is exact in closed
form (the privacy loss is a quadratic in θ, so {loss > ε} is one or two intervals). A neighbouring pair is the
n − 1 shared rows, which enter only through (A′, B′) with |B′| ≤ √((n − 1)A′) ≤ n − 1, and the two rows that differ.

Logistic with one feature: the posterior exp(−βΣℓ(u_iθ) − βnλθ²/2), u_i = y_i x_i ∈ [−1, 1], on a grid of 8,001
points over ±14 widest spreads around its mode; the shared rows as ``count`` rows at one value u′ (the rest at 0).

``worst_ridge`` and ``worst_logistic`` search neighbouring pairs (differential evolution) for the largest ε at δ
(or the largest pure ε): a lower bound on the mechanism's exact privacy loss, which a valid bound must exceed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import optimize, special


def _log_mass(low: float, high: float) -> float:
    """log(Φ(high) − Φ(low)), low < high, without cancellation in either tail."""
    if low > 0:
        low, high = -high, -low
    top, bottom = special.log_ndtr(high), special.log_ndtr(low)
    return float(top + np.log1p(-np.exp(min(bottom - top, 0.0))))


class CutGaussian:
    """exp(−Kθ²/2 + Jθ) on [−r, r], normalised: ``log_norm`` is the log of its integral."""

    def __init__(self, curvature: float, linear: float, radius: float) -> None:
        self.K, self.J, self.r = curvature, linear, radius
        self.mean, self.sd = linear / curvature, 1 / math.sqrt(curvature)
        self._inside = _log_mass((-radius - self.mean) / self.sd, (radius - self.mean) / self.sd)
        self.log_norm = linear * linear / (2 * curvature) + 0.5 * math.log(2 * math.pi / curvature) + self._inside

    def mass(self, low: float, high: float) -> float:
        low, high = max(low, -self.r), min(high, self.r)
        if high <= low:
            return 0.0
        return math.exp(_log_mass((low - self.mean) / self.sd, (high - self.mean) / self.sd) - self._inside)


def ridge_pair(
    n: int,
    lam: float,
    beta: float,
    radius: float,
    shared: tuple[float, float],
    row: tuple[float, float],
    other: tuple[float, float],
) -> tuple[CutGaussian, CutGaussian]:
    """The posteriors of D (shared rows' (A′, B′) plus ``row``) and of its neighbour (``other`` instead)."""
    (a, b), (x, y), (x2, y2) = shared, row, other
    here = CutGaussian(beta * (a + x * x + n * lam), beta * (b + x * y), radius)
    there = CutGaussian(beta * (a + x2 * x2 + n * lam), beta * (b + x2 * y2), radius)
    return here, there


def _above(a: float, b: float, c: float, radius: float) -> list[tuple[float, float]]:
    """The intervals of [−r, r] where aθ² + bθ + c > 0."""
    if a == 0:
        if b == 0:
            return [(-radius, radius)] if c > 0 else []
        root = -c / b
        return [(root, radius)] if b > 0 else [(-radius, root)]
    disc = b * b - 4 * a * c
    if disc <= 0:
        return [(-radius, radius)] if a > 0 else []
    first, second = sorted(((-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)))
    return [(-radius, first), (second, radius)] if a > 0 else [(first, second)]


def loss_above(here: CutGaussian, there: CutGaussian, epsilon: float) -> list[tuple[float, float]]:
    """Where the privacy loss L = log(p/p′) = −(K − K′)θ²/2 + (J − J′)θ − log Z + log Z′ exceeds ε."""
    return _above(-(here.K - there.K) / 2, here.J - there.J, there.log_norm - here.log_norm - epsilon, here.r)


def ridge_delta(here: CutGaussian, there: CutGaussian, epsilon: float) -> float:
    """δ(ε) = P(L > ε) − e^ε·P′(L > ε)."""
    sets = loss_above(here, there, epsilon)
    p = sum(here.mass(u, v) for u, v in sets)
    q = sum(there.mass(u, v) for u, v in sets)
    return max(p - math.exp(epsilon) * q, 0.0)


def ridge_pure(here: CutGaussian, there: CutGaussian) -> float:
    """max over [−r, r] of the privacy loss log(p/p′)."""
    a, b, c = -(here.K - there.K) / 2, here.J - there.J, there.log_norm - here.log_norm
    points = [-here.r, here.r] + ([-b / (2 * a)] if a != 0 and abs(b / (2 * a)) <= here.r else [])
    return max(a * t * t + b * t + c for t in points)


def epsilon_at(delta_of: Callable[[float], float], delta: float) -> float:
    """The least ε with ``delta_of(ε)`` ≤ δ (``delta_of`` falls with ε)."""
    if delta_of(0.0) <= delta:
        return 0.0
    high = 1.0
    while delta_of(high) > delta:
        high *= 2
    return float(optimize.brentq(lambda e: delta_of(e) - delta, 0.0, high, xtol=1e-10))


def _ridge_objective(v: np.ndarray, n: int, lam: float, beta: float, radius: float, delta: float) -> float:
    share, lean, x, y, x2, y2 = v
    a = share * (n - 1)
    b = lean * min(n - 1.0, math.sqrt((n - 1) * a))
    here, there = ridge_pair(n, lam, beta, radius, (a, b), (x, y), (x2, y2))
    if delta == 0:
        return max(ridge_pure(here, there), ridge_pure(there, here))
    return max(
        epsilon_at(lambda e: ridge_delta(here, there, e), delta),
        epsilon_at(lambda e: ridge_delta(there, here, e), delta),
    )


def worst_ridge(n: int, lam: float, beta: float, radius: float, delta: float, seed: int = 0, iterations: int = 40):
    """The largest ε at δ (δ = 0: pure) found over neighbouring one-feature ridge datasets, and the pair's parameters."""
    result = optimize.differential_evolution(
        lambda v: -_ridge_objective(v, n, lam, beta, radius, delta),
        [(0, 1), (-1, 1), (-1, 1), (-1, 1), (-1, 1), (-1, 1)],
        seed=seed,
        maxiter=iterations,
        popsize=15,
        tol=1e-10,
    )
    return -float(result.fun), result.x


def logistic_log_densities(
    n: int, lam: float, beta: float, shared: tuple[float, float], row: float, other: float, points: int = 8001
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid and the log densities of D (``shared`` = (count, u′) rows at u′, one at ``row``) and its neighbour."""
    count, value = shared

    def energy(theta: np.ndarray) -> np.ndarray:
        return beta * n * lam * theta * theta / 2 + beta * count * np.logaddexp(0.0, -value * theta)

    coarse = np.linspace(-80, 80, 16_001)
    mode = coarse[np.argmin(energy(coarse) + beta * np.logaddexp(0.0, -row * coarse))]
    reach = 14 / math.sqrt(beta * n * lam)
    grid = np.linspace(mode - reach, mode + reach, points)
    step = grid[1] - grid[0]
    logs = []
    for u in (row, other):
        log_density = -(energy(grid) + beta * np.logaddexp(0.0, -u * grid))
        top = log_density.max()
        logs.append(log_density - top - math.log(np.sum(np.exp(log_density - top)) * step))
    return grid, logs[0], logs[1]


def grid_delta(here: np.ndarray, there: np.ndarray, step: float, epsilon: float) -> float:
    """δ(ε) = ∫(p − e^ε p′)₊ on the grid."""
    return float(np.sum(np.maximum(np.exp(here) - np.exp(epsilon + there), 0.0)) * step)


def _logistic_objective(v: np.ndarray, n: int, lam: float, beta: float, delta: float) -> float:
    share, value, row, other = v
    grid, here, there = logistic_log_densities(n, lam, beta, (share * (n - 1), value), row, other)
    step = grid[1] - grid[0]
    return max(
        epsilon_at(lambda e: grid_delta(here, there, step, e), delta),
        epsilon_at(lambda e: grid_delta(there, here, step, e), delta),
    )


def worst_logistic(n: int, lam: float, beta: float, delta: float, seed: int = 0, iterations: int = 25):
    """The largest ε at δ found over neighbouring one-feature logistic datasets (shared rows at one value)."""
    result = optimize.differential_evolution(
        lambda v: -_logistic_objective(v, n, lam, beta, delta),
        [(0, 1), (-1, 1), (-1, 1), (-1, 1)],
        seed=seed,
        maxiter=iterations,
        popsize=12,
        tol=1e-10,
    )
    return -float(result.fun), result.x
