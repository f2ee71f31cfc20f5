"""Shared fixtures: small problems that satisfy docs/mathematics.md#setting-and-notation, built from fixed seeds, and
the browser; the order the tests run in and the BLAS threads of parallel test workers."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from threadpoolctl import threadpool_limits

from accfirst import LogisticProblem, RidgeProblem
from tests.app.browsing import SharedChromium
from tests.data import make_logistic_data, make_ridge_data

CHROMIUM = SharedChromium()
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure() -> None:
    """A pytest-xdist worker, and every process it starts (the command line, the app's server), uses one BLAS thread.

    The workers already share the cores: two workers with two BLAS threads each on two cores wait on each other's
    threads (side by side on a loaded 2-core machine, a logistic θ* on 80,000 rows took 31 s with two threads and
    1.9 s with one). The app's and the command line's own worker processes use one thread already.
    """
    if "PYTEST_XDIST_WORKER" in os.environ:
        for name in BLAS_THREADS:
            os.environ.setdefault(name, "1")
        threadpool_limits(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests last (see ``SharedChromium``), the long ones (``browser(long=True)``) first among them.

    pytest-xdist hands each worker tests in this order, so a worker starts its Chromium and its
    Streamlit server once, after its other tests, and both workers share the browser tests; with the
    long ones first, the last tests to finish are short ones and no worker waits long for the other.
    """

    def order(item: pytest.Item) -> tuple[bool, bool]:
        browser = item.get_closest_marker("browser")
        return browser is not None, browser is not None and not browser.kwargs.get("long", False)

    items.sort(key=order)


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
