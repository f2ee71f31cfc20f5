"""Shared fixtures: small problems that satisfy SPEC §1, built from fixed seeds."""

from __future__ import annotations

import pytest

from accfirst import LogisticProblem, RidgeProblem
from tests.data import make_logistic_data, make_ridge_data


@pytest.fixture(scope="session")
def ridge_problem() -> RidgeProblem:
    X, y = make_ridge_data(0, 2000, 6)
    return RidgeProblem(X, y, 0.005)


@pytest.fixture(scope="session")
def logistic_problem() -> LogisticProblem:
    X, y = make_logistic_data(1, 2000, 5)
    return LogisticProblem(X, y, 0.005)
