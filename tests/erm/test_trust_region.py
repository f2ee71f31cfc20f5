"""The exact trust-region solve of covariance perturbation (docs/mathematics.md#private-hypothesis-generators).

Compared with scipy's SLSQP from many starting points (the best of them) on
definite, indefinite, boundary and hard-case instances; and checked against the
optimality conditions of Moré & Sorensen directly.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from accfirst import solve_trust_region
from accfirst.erm.trust_region import has_negative_minor, shifted_cholesky_fails, trust_region_objective

RELATIVE = 1e-7


def scipy_best(H: np.ndarray, g: np.ndarray, radius: float, rng: np.random.Generator) -> float:
    best = np.inf
    for _ in range(12):
        start = rng.normal(size=g.size)
        start *= radius * rng.random() / np.linalg.norm(start)
        res = minimize(
            lambda t: trust_region_objective(H, g, t),
            start,
            jac=lambda t: H @ t - g,
            method="SLSQP",
            constraints=[{"type": "ineq", "fun": lambda t: radius**2 - t @ t, "jac": lambda t: -2 * t}],
            options={"ftol": 1e-15, "maxiter": 2000},
        )
        if res.x @ res.x <= radius**2 * (1 + 1e-9):
            best = min(best, res.fun)
    return best


def random_symmetric(rng: np.random.Generator, p: int) -> np.ndarray:
    B = rng.normal(size=(p, p))
    return (B + B.T) / 2


def instance(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    p = int(rng.integers(2, 9))
    radius = float(rng.choice([0.3, 1.0, 4.0]))
    if kind == "definite-interior":
        B = rng.normal(size=(p, p))
        H = B @ B.T + p * np.eye(p)
        g = rng.normal(size=p)
        g *= 0.5 * radius * np.linalg.eigvalsh(H)[0] / np.linalg.norm(g)
        return H, g, radius
    if kind == "definite-boundary":
        B = rng.normal(size=(p, p))
        H = B @ B.T / p + 0.05 * np.eye(p)
        return H, rng.normal(size=p) * 10, radius
    if kind == "indefinite":
        return random_symmetric(rng, p), rng.normal(size=p), radius
    # Hard case: g orthogonal to the bottom eigenvector of an indefinite H, and small.
    Q, _ = np.linalg.qr(rng.normal(size=(p, p)))
    eigenvalues = np.sort(rng.normal(size=p))
    eigenvalues[0] = -abs(eigenvalues[0]) - 0.5
    H = Q @ np.diag(eigenvalues) @ Q.T
    a = rng.normal(size=p) * 0.01
    a[0] = 0.0
    return (H + H.T) / 2, Q @ a, radius


@pytest.mark.parametrize("kind", ["definite-interior", "definite-boundary", "indefinite", "hard-case"])
def test_matches_best_generic_solver(kind: str) -> None:
    rng = np.random.default_rng(["definite-interior", "definite-boundary", "indefinite", "hard-case"].index(kind))
    for _ in range(25):
        H, g, radius = instance(kind, rng)
        theta = solve_trust_region(H, g, radius)
        ours = trust_region_objective(H, g, theta)
        best = scipy_best(H, g, radius, rng)
        assert np.linalg.norm(theta) <= radius * (1 + 1e-12)
        assert ours <= best + RELATIVE * max(abs(best), 1e-12)
        assert abs(ours - best) <= RELATIVE * max(abs(best), 1e-12)
        if kind != "definite-interior":
            assert np.linalg.norm(theta) == pytest.approx(radius, rel=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_optimality_conditions(seed: int) -> None:
    """(H + μI)θ = g, H + μI ⪰ 0, μ ≥ 0 and μ(r − ‖θ‖) = 0 for some μ."""
    rng = np.random.default_rng(100 + seed)
    H, g, radius = instance(["indefinite", "definite-boundary", "hard-case"][seed % 3], rng)
    theta = solve_trust_region(H, g, radius)
    norm = np.linalg.norm(theta)
    # At the boundary μ follows from the gradient: g − Hθ = μθ.
    mu = float(theta @ (g - H @ theta)) / norm**2
    assert mu >= -1e-8
    assert np.linalg.eigvalsh(H + mu * np.eye(g.size))[0] >= -1e-8
    np.testing.assert_allclose(H @ theta + mu * theta, g, atol=1e-8 * max(1.0, np.linalg.norm(g)))


def test_zero_gradient_with_negative_curvature_goes_to_the_sphere() -> None:
    H = np.diag([-1.0, 2.0])
    theta = solve_trust_region(H, np.zeros(2), 3.0)
    assert np.allclose(np.abs(theta), [3.0, 0.0])


def test_not_a_rescaled_unconstrained_solve() -> None:
    """The constrained optimum differs from H⁻¹g scaled back to the sphere
    (docs/mathematics.md#private-hypothesis-generators)."""
    H = np.diag([1.0, 0.01])
    g = np.array([1.0, 1.0])
    theta = solve_trust_region(H, g, 1.0)
    unconstrained = np.linalg.solve(H, g)
    rescaled = unconstrained / np.linalg.norm(unconstrained)
    assert trust_region_objective(H, g, theta) < trust_region_objective(H, g, rescaled) - 1e-3


def test_indefiniteness_certificates_are_never_wrong() -> None:
    rng = np.random.default_rng(7)
    proved = 0
    for _ in range(400):
        p = int(rng.integers(2, 12))
        H = random_symmetric(rng, p) + rng.uniform(0, 3) * np.eye(p)
        lam_min = np.linalg.eigvalsh(H)[0]
        certified = has_negative_minor(H) or shifted_cholesky_fails(H)
        if certified:
            proved += 1
            assert lam_min < 0
        if lam_min < -1e-6:
            assert shifted_cholesky_fails(H)
    assert proved > 50


@pytest.mark.parametrize("bottom_component", [0.0, 1e-16, 1e-13, 3e-12, 1e-10, 1e-8, 1e-6])
def test_near_hard_case_reaches_the_sphere(bottom_component: float) -> None:
    """g almost orthogonal to the bottom eigenvector: the root μ sits within ulps of −λ_min."""
    H = np.diag([-96.85, -74.02, -2.94, 18.53, 56.60])
    g = np.array([bottom_component, -1.81e-3, -1.64e-3, -4.10e-3, 6.82e-3])
    radius = 92.81
    theta = solve_trust_region(H, g, radius)
    assert np.all(np.isfinite(theta))
    assert np.linalg.norm(theta) == pytest.approx(radius, rel=1e-12)
    # Filling the sphere along the bottom eigenvector is the (near-)hard-case optimum.
    fill = np.zeros(5)
    fill[0] = radius
    assert trust_region_objective(H, g, theta) <= trust_region_objective(H, g, fill) + 1e-7 * radius**2
