"""The row bound ρ in every sensitivity (docs/mathematics.md#rows-of-small-euclidean-norm).

Rows of Euclidean norm at most ρ on the ball ‖θ‖ ≤ R at λ are, with u = x/ρ and φ = ρθ, the unit-row problem at λ/ρ² on
the ball ρR: the same objective, so the same excess risks. These tests check that the code's map does exactly that, that
ρ = 1 changes no constant by a bit, and that a bound is stated only for rows it holds for. The worst-case searches that
come close to each bound with ρ < 1 are in tests/erm/test_sensitivity.py and tests/methods/test_relative.py, the Monte
Carlo of the privacy loss in tests/test_empirical_privacy_loss.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accfirst import LogisticProblem, RidgeProblem, SearchOptions
from accfirst.datasets import load_builtin
from accfirst.erm.generators import CovariancePerturbation, OutputPerturbation
from accfirst.erm.problems import prepared_problem
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError, DataError
from accfirst.methods.pipeline import feasible_problem, run_rows
from tests.data import make_logistic_data, make_ridge_data

KINDS = {"ridge": RidgeProblem, "logistic": LogisticProblem}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("lam", [0.001, 0.005, 0.3])
@pytest.mark.parametrize("share", [0.05, 0.5, 1.0])
def test_rows_of_norm_one_keep_every_unit_row_constant_to_the_bit(kind: str, lam: float, share: float) -> None:
    """ρ = 1 (the default, and what ‖x‖₁ ≤ 1 gives) is the identity: every sensitivity read through the shape equals
    the unit-row formula exactly, so the paper's settings and every saved number stay as they were."""
    cls = KINDS[kind]
    radius, n, p = share * cls.implied_norm_bound(lam), 80_000, 7
    shape = ProblemShape(cls, n, p, lam, radius)
    assert shape.row_bound == 1.0 and shape.unit_rows(radius, lam) == (radius, lam)
    assert shape.query_sensitivity == cls.risk_sensitivity(radius, n)
    for alpha in (1e-4, 0.01, 0.05, 0.5):
        for clipped in (True, False):
            assert shape.test_sensitivity(alpha, clipped=clipped) == cls.test_sensitivity_on(
                radius, n, lam, alpha, clipped=clipped
            )
            assert shape.test_sensitivity_formula("R", radius, n, lam, alpha, clipped=clipped) == (
                cls.test_sensitivity_formula("R", radius, n, lam, alpha, clipped=clipped)
            )
    assert shape.theta_sensitivity == cls.output_sensitivity(radius, n, p, lam)
    assert shape.minimiser_sensitivity_on(radius, n, lam) == cls.minimiser_sensitivity(radius, n, lam)
    assert shape.zero_risk_sensitivity == cls.zero_risk_width(radius, lam) / n
    assert CovariancePerturbation.sensitivities(shape) == (4.0, 3.0 / math.sqrt(2.0))


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("rho", [0.25, 0.6])
def test_rows_of_norm_rho_are_the_unit_row_problem_at_lambda_over_rho_squared(kind: str, rho: float) -> None:
    """The derivation's map, on data: rows X of norm ≤ ρ at (λ, R) and the unit rows X/ρ at (λ/ρ², ρR) have the same
    excess risk at θ and ρθ, minimisers ρ apart, the same R(0); and the code prices them alike: the risk-side
    sensitivities equal, the θ-side ones ρ apart. A map that forgot λ/ρ², or divided by ρ on the risk side, fails."""
    cls, lam = KINDS[kind], 0.01
    make = make_ridge_data if kind == "ridge" else make_logistic_data
    X, y = make(3, 400, 5)
    X *= rho
    radius = 0.4 * cls.free_radius(lam)
    rows = cls(X, y, lam, radius).with_row_bound(rho)
    unit = cls(X / rho, y, lam / rho**2, rho * radius)
    thetas = np.random.default_rng(0).normal(size=(20, 5)) * radius / 3
    np.testing.assert_allclose(rows.excess_risk(thetas), unit.excess_risk(rho * thetas), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(rho * rows.theta_star, unit.theta_star, rtol=1e-7, atol=1e-10)
    assert rows.zero_risk == pytest.approx(unit.zero_risk, rel=1e-9)
    assert rows.query_sensitivity == pytest.approx(unit.query_sensitivity, rel=1e-12)
    assert rows.zero_risk_sensitivity == pytest.approx(unit.zero_risk_sensitivity, rel=1e-12)
    for alpha in (0.001, 0.01, 0.1):
        assert rows.test_sensitivity(alpha, clipped=True) == pytest.approx(
            unit.test_sensitivity(alpha, clipped=True), rel=1e-12
        )
    formula = rows.shape.test_sensitivity_formula("R", radius, rows.n, lam, 0.01, clipped=True)
    assert f"R′ = ρR = {rho * radius:.3g}" in formula and f"ρ = {rho:.3g}" in formula
    assert rho * rows.theta_sensitivity == pytest.approx(unit.theta_sensitivity, rel=1e-12)
    assert rho * OutputPerturbation(rows).l2_sensitivity == pytest.approx(
        OutputPerturbation(unit).l2_sensitivity, rel=1e-12
    )


def test_a_stated_row_bound_must_hold_for_the_rows() -> None:
    """ρ must lie in (0, 1], and rows above it are refused where the problem sees them (a bound that failed for a row
    would understate every sensitivity); statistics alone cannot show a row's norm."""
    X, y = make_ridge_data(0, 200, 4)
    largest = float(np.linalg.norm(X, axis=1).max())
    problem = RidgeProblem(X, y, 0.01)
    assert problem.with_row_bound(largest).row_bound == largest and problem.row_bound == 1.0
    with pytest.raises(DataError, match="above the stated row bound"):
        problem.with_row_bound(0.9 * largest)
    labels = np.where(y >= 0, 1.0, -1.0)
    with pytest.raises(DataError, match="above the stated row bound"):
        LogisticProblem(X, labels, 0.01).with_row_bound(0.9 * largest)
    for bad in (0.0, -0.5, 1.5, math.nan):
        with pytest.raises(AccFirstError, match="row_bound"):
            problem.with_row_bound(bad)
    statistics = RidgeProblem.from_statistics(problem.A, problem.b, problem.c, problem.n, 0.01)
    assert statistics.largest_row_norm is None and statistics.with_row_bound(0.1).row_bound == 0.1


def test_the_papers_calibrations_run_on_unit_rows() -> None:
    """A prepared set carries its ρ into every sensitivity; the paper's calibrations ("theorem", "paper-code"), whose
    test keeps the paper's query, run with ρ = 1 so that the paper's figures reproduce; the exact ones use ρ."""
    data = load_builtin("synthetic-intrusion")
    problem = prepared_problem(data, 0.005)
    assert problem.row_bound == data.row_bound < 1
    assert problem.shape.row_bound == data.row_bound
    for calibration in ("theorem", "paper-code"):
        assert run_rows(problem, calibration).row_bound == 1.0
        assert run_rows(problem.shape, calibration).row_bound == 1.0
    assert run_rows(problem, "exact-paper-opt") is problem
    paper = feasible_problem(problem, "nr", SearchOptions.paper())
    assert paper.row_bound == 1.0 and paper.query_sensitivity == LogisticProblem.risk_sensitivity(
        paper.norm_bound, paper.n
    )
    exact = feasible_problem(problem, "nr", SearchOptions())
    assert exact.row_bound == data.row_bound
    assert exact.query_sensitivity == pytest.approx(2 * data.row_bound * exact.norm_bound / exact.n, rel=1e-14)
