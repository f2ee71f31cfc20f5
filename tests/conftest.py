"""Shared fixtures: small problems that satisfy docs/mathematics.md#setting-and-notation, built from fixed seeds, and
the browser."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accfirst import LogisticProblem, RidgeProblem
from tests.app.browsing import launch_chromium
from tests.data import make_logistic_data, make_ridge_data


@pytest.fixture(scope="session")
def ridge_problem() -> RidgeProblem:
    X, y = make_ridge_data(0, 2000, 6)
    return RidgeProblem(X, y, 0.005)


@pytest.fixture(scope="session")
def logistic_problem() -> LogisticProblem:
    X, y = make_logistic_data(1, 2000, 5)
    return LogisticProblem(X, y, 0.005)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium for the browser tests (one per module: Playwright's event loop must not outlive it,
    since other tests run in the same process); skipped where it is missing, a failure in CI."""
    with launch_chromium() as chromium:
        yield chromium
