"""Attack: a round that reads the data and then fails is charged and closed; public checks come first.

An error raised after the data were read may depend on them, so it is an output: the filter must charge
the round's declared bound, close it and go on admitting. Its message may quote the
data, and the ledger is released: the ledger and the run record a fixed reason, never the message (on
856a42a the ledger's reason and ``FilteredRun.error`` were the message itself, quoting the data's first
statistic to 17 digits). A setting a method cannot serve, known from public quantities, is refused before
admission and costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from accfirst import ExPostFilter, RidgeProblem, SearchOptions, filtered_search
from accfirst.accounting.filters import FAILED
from accfirst.errors import AccFirstError
from accfirst.methods.base import Method
from accfirst.methods.registry import register, unregister
from accfirst.result import RunResult
from tests.data import make_ridge_data

BOUND = 0.5
UNEXPECTED = 0.07


class Fragile(Method):
    """A toy round that reads the data and raises when the first target is positive (its failure leaks it, and its
    message quotes the data)."""

    key = "fragile"
    label = "Fragile"
    in_sentence = "the fragile method"
    color = "#000000"
    fixed_epsilon = True

    def run(self, setting, rng, exact=False) -> RunResult:
        problem, alpha = setting.problem, setting.alpha
        if problem.b[0] > 0:
            raise AccFirstError(f"the data made the round fail: b[0] = {problem.b[0]!r}")
        if alpha == UNEXPECTED:
            raise ZeroDivisionError("an unexpected error after reading the data")
        fields = {"generator": "none", "calibration": "none", "T": 1, "stop_index": 1, "fallback": False}
        return RunResult.released(
            problem,
            np.zeros(problem.p),
            alpha=alpha,
            started=time.perf_counter(),
            method=self.key,
            gamma=setting.gamma,
            eps_test=0.0,
            eps_hypothesis=0.25,
            eps_total=0.25,
            **fields,
        )

    def declared_bound(self, setting) -> tuple[float, float]:
        return BOUND, 0.0


@pytest.fixture
def fragile() -> Iterator[Method]:
    method = register(Fragile())
    yield method
    unregister(method.key)


def _problem(sign: float) -> RidgeProblem:
    X, y = make_ridge_data(0, 500, 4)
    problem = RidgeProblem(X, y, 0.005)
    return RidgeProblem.from_statistics(problem.A, sign * np.abs(problem.b), problem.c, problem.n, 0.005)


def test_a_round_that_fails_after_reading_the_data_is_charged_and_closed(fragile: Method) -> None:
    budget = ExPostFilter(2.0)
    problem = _problem(+1)
    failed = filtered_search(budget, problem, "fragile", 0.05, 0.1, 0)
    assert failed.status == "failed" and failed.charged == BOUND and failed.error == FAILED
    assert failed.result is None and failed.refund == 0
    released = filtered_search(budget, _problem(-1), "fragile", 0.05, 0.1, 0)
    assert released.status == "released" and released.charged == 0.25
    ledger = budget.ledger
    assert list(ledger["status"]) == ["failed", "charged"]
    assert list(ledger["reason"]) == [FAILED, ""]
    assert not any(repr(problem.b[0]) in str(value) for value in ledger.to_numpy().ravel())
    assert budget.spent == pytest.approx(BOUND + 0.25) and budget.remaining == pytest.approx(2.0 - BOUND - 0.25)


def test_an_unexpected_error_is_charged_before_it_goes_on(fragile: Method) -> None:
    budget = ExPostFilter(2.0)
    with pytest.raises(ZeroDivisionError):
        filtered_search(budget, _problem(-1), "fragile", UNEXPECTED, 0.1, 0)
    assert list(budget.ledger["status"]) == ["failed"] and budget.spent == BOUND
    assert list(budget.ledger["reason"]) == [FAILED]
    assert filtered_search(budget, _problem(-1), "fragile", 0.05, 0.1, 0).status == "released"


def test_a_gibbs_round_whose_radius_is_too_small_is_refused_before_it_reads_anything() -> None:
    X, y = make_ridge_data(0, 500, 4)
    problem = RidgeProblem(X, y, 0.005, radius=RidgeProblem.free_radius(0.005))
    budget = ExPostFilter(50.0, 1e-6)
    refused = filtered_search(budget, problem, "gibbs", 0.05, 0.1, 0, SearchOptions())
    assert refused.status == "refused" and refused.charged == 0 and "M/2" in refused.error
    assert budget.spent == 0 and budget.remaining == 50.0
    assert list(budget.ledger["status"]) == ["refused"]
    # The next round is admitted as if nothing happened.
    next_round = filtered_search(
        budget, problem, "nr", 0.1, 0.1, 0, SearchOptions(T=50, eps_max=1.0, radius_mode="none")
    )
    assert next_round.status in ("released", "fallback") and budget.spent > 0
