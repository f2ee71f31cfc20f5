"""ERM problems (docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems): θ* against
scikit-learn, losses, validation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

from accfirst import AccFirstError, DataError, LogisticProblem, RidgeProblem
from accfirst.erm.problem import validate_features
from tests.data import make_logistic_data, make_ridge_data


@pytest.mark.parametrize(("n", "p", "lam"), [(500, 4, 0.005), (3000, 20, 0.05), (200, 30, 1e-3)])
def test_ridge_theta_star_matches_sklearn(n: int, p: int, lam: float) -> None:
    X, y = make_ridge_data(n + p, n, p)
    problem = RidgeProblem(X, y, lam)
    reference = Ridge(alpha=n * lam, fit_intercept=False, solver="cholesky").fit(X, y).coef_
    np.testing.assert_allclose(problem.theta_star, reference, rtol=0, atol=1e-6)
    assert np.linalg.norm(problem.theta_star) <= problem.norm_bound


@pytest.mark.parametrize(("n", "p", "lam"), [(500, 4, 0.005), (3000, 12, 0.05), (400, 8, 1e-3)])
def test_logistic_theta_star_matches_sklearn(n: int, p: int, lam: float) -> None:
    X, y = make_logistic_data(n + p, n, p)
    problem = LogisticProblem(X, y, lam)
    model = LogisticRegression(C=1 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=10_000)
    reference = model.fit(X, y).coef_.ravel()
    np.testing.assert_allclose(problem.theta_star, reference, rtol=0, atol=1e-6)
    assert np.linalg.norm(problem.theta_star) <= problem.norm_bound


def test_ridge_losses_from_sufficient_statistics_equal_the_direct_formula() -> None:
    X, y = make_ridge_data(3, 400, 5)
    problem = RidgeProblem(X, y, 0.01)
    thetas = np.random.default_rng(0).normal(size=(7, 5))
    direct = ((y[:, None] - X @ thetas.T) ** 2).mean(axis=0) / 2 + 0.005 * (thetas**2).sum(axis=1)
    np.testing.assert_allclose(problem.loss(thetas), direct, rtol=1e-12)
    np.testing.assert_allclose(problem.excess_risk(thetas), direct - problem.loss(problem.theta_star), atol=1e-12)
    assert isinstance(problem.loss(thetas[0]), float)


def test_logistic_loss_is_stable_and_batched() -> None:
    X, y = make_logistic_data(4, 300, 3)
    problem = LogisticProblem(X, y, 0.01)
    thetas = np.array([[0.0, 0.0, 0.0], [800.0, -800.0, 800.0]])
    losses = problem.loss(thetas)
    assert np.all(np.isfinite(losses))
    assert losses[0] == pytest.approx(np.log(2))
    direct = np.log1p(np.exp(-y * (X @ thetas[1]))).mean() + 0.005 * thetas[1] @ thetas[1]
    assert losses[1] == pytest.approx(direct, rel=1e-12)
    assert np.all(problem.excess_risk(thetas) > 0)


def ridge_gap(radius: float) -> float:
    """S(R) = max_φ R sin φ + 2cos(φ/2) on a fine grid (docs/mathematics.md#the-gradient-gap)."""
    phi = np.linspace(0, np.pi / 2, 2_000_001)
    return float(np.max(radius * np.sin(phi) + 2 * np.cos(phi / 2)))


def logistic_gap(radius: float) -> float:
    """S(R) = max_c 2√(1 − c²)σ(Rc) on a fine grid (docs/mathematics.md#the-gradient-gap)."""
    c = np.linspace(0, 1, 2_000_001)
    return float(np.max(2 * np.sqrt(1 - c * c) / (1 + np.exp(-radius * c))))


def test_constants_follow_the_spec(ridge_problem: RidgeProblem, logistic_problem: LogisticProblem) -> None:
    r, lg = ridge_problem, logistic_problem
    assert r.norm_bound == pytest.approx(1 / np.sqrt(0.005))
    assert r.query_sensitivity == pytest.approx((r.norm_bound + 1) ** 2 / r.n)
    assert r.theta_sensitivity == pytest.approx(ridge_gap(r.norm_bound) * np.sqrt(r.p) / (r.n * 0.005), rel=1e-9)
    assert lg.norm_bound == pytest.approx(np.sqrt(2 * np.log(2) / 0.005))
    M = lg.norm_bound
    assert lg.query_sensitivity == pytest.approx(2 / lg.n * np.log((1 + np.exp(M)) / (1 + np.exp(-M))))
    assert lg.theta_sensitivity == pytest.approx(logistic_gap(M) * np.sqrt(lg.p) / (lg.n * 0.005), rel=1e-9)


def test_logistic_lower_bound_never_exceeds_the_excess_risk(logistic_problem: LogisticProblem) -> None:
    rng = np.random.default_rng(12)
    ratios = []
    for scale in np.geomspace(1e-3, 30, 60):
        theta = logistic_problem.project(
            logistic_problem.theta_star + rng.laplace(scale=scale, size=logistic_problem.p)
        )
        bound = logistic_problem.excess_risk_lower_bound(theta)
        risk = logistic_problem.excess_risk(theta)
        assert 0 <= bound <= risk
        ratios.append(bound / risk)
    assert np.median(ratios) > 0.3


def test_ridge_boundary_bound_holds_on_the_sphere(ridge_problem: RidgeProblem) -> None:
    rng = np.random.default_rng(13)
    thetas = rng.normal(size=(500, ridge_problem.p))
    thetas *= ridge_problem.norm_bound / np.linalg.norm(thetas, axis=1, keepdims=True)
    assert np.min(ridge_problem.excess_risk(thetas)) >= ridge_problem.boundary_risk_lower_bound() > 0


@pytest.mark.parametrize(
    ("X", "y", "lam", "error", "message"),
    [
        (np.array([[0.7, 0.6]]), [0.5], 0.1, DataError, "ℓ1 norm ≤ 1"),
        (np.array([[0.1, np.nan]]), [0.5], 0.1, DataError, "NaN or infinite"),
        (np.array([[0.1, np.inf]]), [0.5], 0.1, DataError, "NaN or infinite"),
        (np.array([[0.1, 0.2]]), [1.5], 0.1, DataError, "|y| ≤ 1"),
        (np.array([[0.1, 0.2]]), [0.5, 0.5], 0.1, DataError, "one entry per row"),
        (np.zeros((0, 3)), [], 0.1, DataError, "non-empty"),
        (np.array([[0.1, 0.2]]), [0.5], 0.0, AccFirstError, "lam"),
        (np.array([[0.1, 0.2]]), [0.5], -1.0, AccFirstError, "lam"),
        (np.array([[0.1, 0.2]]), [0.5], float("nan"), AccFirstError, "lam"),
        (np.array([[0.1, 0.2]]), [0.5], "0.1", AccFirstError, "lam"),
        ([["a", "b"]], [0.5], 0.1, DataError, "numeric"),
    ],
)
def test_ridge_rejects_bad_input(X, y, lam, error, message) -> None:
    with pytest.raises(error, match=message):
        RidgeProblem(X, y, lam)


def test_rows_a_float_excess_above_the_bound_are_clipped_onto_it() -> None:
    """Every sensitivity assumes ‖x‖₁ ≤ 1 and |y| ≤ 1 exactly: a row or target above by float excess (here 5·10⁻¹⁰)
    is accepted and clipped inside the bound, on a copy; the problem sees the clipped rows (on 856a42a it saw the
    rows as given: exact ‖x‖₁ = 1 + 5·10⁻¹⁰ and y² = 1 + 10⁻⁹ in its statistics)."""
    X = np.array([[0.5 + 2.5e-10, -0.5 - 2.5e-10], [0.1, 0.2], [0.25, 0.75]])
    y = np.array([1 + 5e-10, -0.3, -1 - 5e-10])
    given = X.copy(), y.copy()
    problem = RidgeProblem(X, y, 0.1)
    np.testing.assert_array_equal(X, given[0])
    np.testing.assert_array_equal(y, given[1])  # the caller's arrays are not touched
    clipped = validate_features(X)
    assert all(sum(abs(Fraction(value)) for value in row) <= 1 for row in clipped)
    np.testing.assert_array_equal(clipped[1:], X[1:])  # rows inside the ball stay as they are
    np.testing.assert_array_equal(problem.A, (clipped.T @ clipped + (clipped.T @ clipped).T) / 2)
    target = np.array([1.0, -0.3, -1.0])
    np.testing.assert_array_equal(problem.b, clipped.T @ target)
    assert problem.c == float(target @ target)


@pytest.mark.parametrize(
    ("y", "message"), [([0.0, 1.0], "−1 or \\+1"), ([2.0, -1.0], "−1 or \\+1"), ([1.0, np.nan], "NaN")]
)
def test_logistic_rejects_bad_labels(y, message) -> None:
    with pytest.raises(DataError, match=message):
        LogisticProblem(np.array([[0.1, 0.2], [0.3, -0.1]]), y, 0.1)


def test_errors_are_value_errors() -> None:
    assert issubclass(DataError, ValueError) and issubclass(AccFirstError, ValueError)


def test_logistic_bound_accounts_for_the_residual_gradient_of_theta_star() -> None:
    """θ* is exact only to a gradient norm ≤ 1e−10: the bound must hold along −∇L(θ*) too."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        n, p, lam = int(rng.integers(20, 400)), int(rng.integers(1, 6)), float(10 ** rng.uniform(-6, -2))
        X = rng.normal(size=(n, p)) * rng.exponential(size=(n, 1))
        X /= np.abs(X).sum(axis=1).max() * 10 ** rng.uniform(0, 2)
        y = np.where(X @ rng.normal(size=p) + 0.01 * rng.normal(size=n) >= 0, 1.0, -1.0)
        problem = LogisticProblem(X, y, lam)
        gradient = problem.loss_and_gradient(problem.theta_star[None, :])[1][0]
        if np.linalg.norm(gradient) < 1e-14:
            continue
        checked += 1
        for step in np.geomspace(1e-7, problem.norm_bound, 25):
            theta = problem.project(problem.theta_star - step * gradient / np.linalg.norm(gradient))
            # Rounding in L(θ) − L(θ*) is ~1e−16; the testers keep a 1e−12 decision margin.
            assert problem.excess_risk_lower_bound(theta) <= problem.excess_risk(theta) + 1e-14
    assert checked > 20


def test_ridge_boundary_bound_holds_for_computed_solutions_in_one_dimension() -> None:
    """p = 1 makes the sphere bound tight: it must stay below R despite rounding."""
    from accfirst.erm.generators import CovariancePerturbation

    rng = np.random.default_rng(3)
    boundary = 0
    for _ in range(300):
        n = int(rng.integers(5, 500))
        X = rng.uniform(-1, 1, size=(n, 1))
        y = np.clip(0.5 * X[:, 0] + 0.1 * rng.normal(size=n), -1, 1)
        hypothesis = CovariancePerturbation(RidgeProblem(X, y, 1e-8)).sample(float(10 ** rng.uniform(-3, 1)), rng)
        boundary += hypothesis._shape[0] == "boundary"
        assert hypothesis.risk_lower_bound <= hypothesis.excess_risk
        assert np.linalg.norm(hypothesis.theta) <= hypothesis.problem.norm_bound * (1 + 1e-15)
    assert boundary > 30


def test_projection_of_enormous_noise_lands_on_the_sphere(logistic_problem) -> None:
    from accfirst.erm.generators import OutputPerturbation

    theta = OutputPerturbation(logistic_problem).sample(1e-160, np.random.default_rng(0)).theta
    assert np.linalg.norm(theta) == pytest.approx(logistic_problem.norm_bound, rel=1e-12)


def test_logistic_batched_loss_and_gradient_match_finite_differences(logistic_problem: LogisticProblem) -> None:
    thetas = np.random.default_rng(0).normal(scale=30.0, size=(3, logistic_problem.p))  # large margins too
    losses, gradients = logistic_problem.loss_and_gradient(thetas)
    np.testing.assert_allclose(losses, logistic_problem.loss(thetas), rtol=1e-13)
    step = 1e-6
    for k, theta in enumerate(thetas):
        numeric = [
            (logistic_problem.loss(theta + step * e) - logistic_problem.loss(theta - step * e)) / (2 * step)
            for e in np.eye(logistic_problem.p)
        ]
        np.testing.assert_allclose(gradients[k], numeric, rtol=1e-5, atol=1e-8)
    hessian = logistic_problem.hessian_at(logistic_problem.theta_star)
    shift = 1e-4 * np.eye(logistic_problem.p)
    _, up = logistic_problem.loss_and_gradient(logistic_problem.theta_star + shift)
    _, down = logistic_problem.loss_and_gradient(logistic_problem.theta_star - shift)
    np.testing.assert_allclose(hessian, (up - down) / 2e-4, rtol=1e-5, atol=1e-9)
