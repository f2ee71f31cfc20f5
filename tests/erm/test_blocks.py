"""Problems built from statistics and from rows in blocks (docs/mathematics.md#the-two-learning-problems): the same as
from arrays."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest

from accfirst import AccFirstError, DataError, LogisticProblem, RidgeProblem
from accfirst.erm.logistic import RowBlocks, combine_statistics
from tests.data import make_logistic_data, make_ridge_data


class ChunkedRows(RowBlocks):
    """Rows in memory, visited in blocks of ``size`` rows: the contract ``accfirst.scale`` follows."""

    def __init__(self, yX: np.ndarray, size: int) -> None:
        self.blocks = [yX[i : i + size] for i in range(0, len(yX), size)]
        self.n, self.p = yX.shape
        self.passes = 0

    def reduce(self, statistic, combine=None):
        self.passes += 1
        return reduce(lambda a, b: combine_statistics(a, b, combine), map(statistic, self.blocks))


@pytest.mark.parametrize("radius", [None, 2.0])
def test_ridge_from_statistics_is_the_ridge_problem_of_the_rows(radius) -> None:
    X, y = make_ridge_data(5, 700, 6)
    direct = RidgeProblem(X, y, 0.01, radius)
    built = RidgeProblem.from_statistics(X.T @ X, X.T @ y, y @ y, len(y), 0.01, radius)
    assert built.radius_binds == direct.radius_binds
    np.testing.assert_array_equal(built.theta_star, direct.theta_star)
    thetas = np.random.default_rng(1).normal(size=(5, 6))
    np.testing.assert_array_equal(built.excess_risk(thetas), direct.excess_risk(thetas))
    assert (built.n, built.p, built.query_sensitivity, built.theta_sensitivity) == (
        direct.n,
        direct.p,
        direct.query_sensitivity,
        direct.theta_sensitivity,
    )


@pytest.mark.parametrize(
    ("A", "message"),
    [(np.eye(3) * 50, r"trace\(XᵀX\) = 150 exceeds n = 100"), (np.ones((3, 2)), "square matrix")],
)
def test_ridge_from_statistics_refuses_statistics_no_bounded_rows_have(A, message) -> None:
    with pytest.raises(DataError, match=message):
        RidgeProblem.from_statistics(A, np.zeros(3), 1.0, 100, 0.01)


def test_ridge_from_statistics_refuses_a_target_beyond_one() -> None:
    X, y = make_ridge_data(5, 100, 3)
    with pytest.raises(DataError, match="yᵀy = 400 exceeds n = 100"):
        RidgeProblem.from_statistics(X.T @ X, X.T @ y, 400.0, 100, 0.01)


@pytest.mark.parametrize("radius", [None, 1.0])
def test_logistic_from_rows_in_blocks_is_the_logistic_problem_of_the_rows(radius) -> None:
    X, y = make_logistic_data(6, 1500, 5)
    direct = LogisticProblem(X, y, 0.005, radius)
    rows = ChunkedRows(X * y[:, None], 128)
    built = LogisticProblem.from_rows(rows, 0.005, radius)
    assert built.radius_binds == direct.radius_binds == (radius is not None)
    np.testing.assert_allclose(built.theta_star, direct.theta_star, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(built.gram, direct.gram, rtol=1e-12, atol=1e-15)
    assert built.max_margin_star == pytest.approx(direct.max_margin_star, rel=1e-12)
    thetas = direct.theta_star + np.random.default_rng(2).normal(scale=0.3, size=(4, 5))
    passes = rows.passes
    np.testing.assert_allclose(built.excess_risk(thetas), direct.excess_risk(thetas), rtol=1e-9)
    assert rows.passes == passes + 1  # a batch of hypotheses is one pass
    for theta in thetas:
        assert built.excess_risk_lower_bound(theta) == pytest.approx(direct.excess_risk_lower_bound(theta), rel=1e-9)


def test_logistic_newton_makes_one_pass_per_iteration() -> None:
    """Building θ* reads the data once per Newton iteration (plus the start), and never for G apart."""
    X, y = make_logistic_data(6, 1500, 5)
    rows = ChunkedRows(X * y[:, None], 500)
    LogisticProblem.from_rows(rows, 0.005)
    assert rows.passes <= 5  # 4 here; two passes per iteration (a separate line search) would be 7+


def test_logistic_from_rows_refuses_other_objects() -> None:
    with pytest.raises(AccFirstError, match="rows must be a RowBlocks"):
        LogisticProblem.from_rows(np.ones((3, 2)), 0.01)
