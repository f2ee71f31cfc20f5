"""The run around a method: the radius it runs on and the parts of the bill that are not its own."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accfirst import LogisticProblem, RidgeProblem, SearchOptions
from accfirst.errors import AccFirstError
from accfirst.methods.pipeline import feasible_problem, search
from accfirst.methods.relative import RelativeTarget
from accfirst.search.experiments import declared_bound, trial_rng
from tests.data import make_logistic_data, make_ridge_data


@pytest.fixture(scope="module")
def ridge() -> RidgeProblem:
    X, y = make_ridge_data(0, 2000, 6)
    return RidgeProblem(X, y, 0.005)


@pytest.fixture(scope="module")
def logistic() -> LogisticProblem:
    X, y = make_logistic_data(1, 2000, 5)
    return LogisticProblem(X, y, 0.005)


@pytest.mark.parametrize("name", ["ridge", "logistic"])
def test_with_radius_is_the_problem_built_with_that_radius(name: str, request: pytest.FixtureRequest) -> None:
    problem = request.getfixturevalue(name)
    X, y = make_ridge_data(0, 2000, 6) if name == "ridge" else make_logistic_data(1, 2000, 5)
    for radius in (0.3, problem.free_radius(problem.lam), None):
        moved, built = problem.with_radius(radius), type(problem)(X, y, problem.lam, radius)
        np.testing.assert_allclose(moved.theta_star, built.theta_star, rtol=0, atol=1e-12)
        assert moved.norm_bound == built.norm_bound and moved.query_sensitivity == built.query_sensitivity
        theta = np.full(problem.p, 0.05)
        assert moved.excess_risk_lower_bound(theta) == pytest.approx(built.excess_risk_lower_bound(theta), abs=1e-12)
        assert moved.zero_risk == pytest.approx(built.zero_risk, rel=1e-12)
    assert problem.norm_bound == problem.max_norm  # the original is untouched


def test_the_free_radius_keeps_theta_star_and_shrinks_the_test(ridge: RidgeProblem) -> None:
    free = feasible_problem(ridge, "nr", SearchOptions(radius_mode="free"))
    assert free.norm_bound == pytest.approx(ridge.max_norm / 2) and free.theta_star is not None
    np.testing.assert_array_equal(free.theta_star, ridge.theta_star)
    assert free.query_sensitivity < ridge.query_sensitivity / 3
    # The Gibbs posterior keeps the problem's own radius; "none" keeps M.
    assert feasible_problem(ridge, "gibbs", SearchOptions(radius_mode="free")) is ridge
    assert feasible_problem(ridge, "nr", SearchOptions(radius_mode="none")) is ridge
    # A public radius below R₀ stays.
    small = ridge.with_radius(1.0)
    assert feasible_problem(small, "nr", SearchOptions(radius_mode="free")) is small
    bound_free, _ = declared_bound(ridge, "nr", 0.05, 0.1, SearchOptions(radius_mode="free"))
    bound_none, _ = declared_bound(ridge, "nr", 0.05, 0.1, SearchOptions(radius_mode="none"))
    assert bound_free < bound_none


def test_a_run_on_prepared_rows_reports_the_preparation_in_its_total(ridge: RidgeProblem) -> None:
    options = SearchOptions(T=50)
    plain = search(ridge, "nr", 0.05, 0.1, trial_rng(0, "nr", 0.05, 0), options)
    prepared = ridge.with_preparation(0.2, 1e-7)
    paid = search(prepared, "nr", 0.05, 0.1, trial_rng(0, "nr", 0.05, 0), options)
    assert paid.eps_prep == 0.2 and plain.eps_prep == 0.0
    assert paid.eps_total == pytest.approx(plain.eps_total + 0.2)
    assert paid.eps_total == pytest.approx(
        paid.eps_prep + paid.eps_radius + paid.eps_scale + paid.eps_test + paid.eps_hypothesis
    )
    assert paid.delta == pytest.approx(1e-7) and plain.delta == 0
    np.testing.assert_array_equal(paid.theta, plain.theta)
    assert math.isnan(paid.kappa) and paid.r0 == pytest.approx(ridge.zero_risk)
    with pytest.raises(AccFirstError, match="prep_epsilon"):
        ridge.with_preparation(-1.0, 0.0)
    with pytest.raises(AccFirstError, match="radius_mode must be one of"):
        SearchOptions(radius_mode="tiny")


def test_the_papers_fallback_is_refused_on_a_tables_rows_before_anything_is_read(ridge: RidgeProblem) -> None:
    """docs/mathematics.md#what-a-failed-run-releases: θ* may be released only on data that hold no one's record."""
    exact = SearchOptions(fallback="exact")
    for mode in ("private", "evaluation"):
        table = ridge.with_preparation(0.5 if mode == "private" else 0.0, 0.0, mode)
        for target in (0.05, RelativeTarget(0.5)):
            with pytest.raises(AccFirstError, match="fallback='exact'"):
                declared_bound(table, "nr", target, 0.1, exact)
            with pytest.raises(AccFirstError, match="fallback='exact'"):
                search(table, "nr", target, 0.1, trial_rng(0, "nr", target, 0), exact)
    assert declared_bound(ridge, "nr", 0.05, 0.1, exact)[0] > 0  # rows passed in as they are: the caller's choice
    with pytest.raises(AccFirstError, match="fallback must be one of"):
        SearchOptions(fallback="theta-star")
