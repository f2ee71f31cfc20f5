"""Shared fixtures: small problems that satisfy docs/mathematics.md#setting-and-notation, built from fixed seeds, and
the browser; the order the tests run in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accfirst import LogisticProblem, RidgeProblem
from tests.app.browsing import SharedChromium
from tests.data import make_logistic_data, make_ridge_data

CHROMIUM = SharedChromium()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests last, in their own order (see ``SharedChromium``).

    pytest-xdist hands each worker tests in this order, so a worker starts its Chromium and its
    Streamlit server once, after its other tests, and both workers share the browser tests.
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser") is None:
        CHROMIUM.stop()


def pytest_sessionfinish() -> None:
    CHROMIUM.stop()


@pytest.fixture(scope="session")
def ridge_problem() -> RidgeProblem:
    X, y = make_ridge_data(0, 2000, 6)
    return RidgeProblem(X, y, 0.005)


@pytest.fixture(scope="session")
def logistic_problem() -> LogisticProblem:
    X, y = make_logistic_data(1, 2000, 5)
    return LogisticProblem(X, y, 0.005)


@pytest.fixture
def browser() -> Iterator[object]:
    """Headless Chromium for a browser test: one per test process, a fresh context for each test (every
    context the test opened is closed after it); skipped where it is missing, a failure in CI."""
    yield CHROMIUM.get()
    CHROMIUM.close_contexts()
