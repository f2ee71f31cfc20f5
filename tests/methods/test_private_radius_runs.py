"""Runs on a private radius (docs/mathematics.md#a-private-radius): the rule reads no data, the bill adds up, accuracy
holds."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from accfirst import LogisticProblem, RidgeProblem, SearchOptions
from accfirst.accounting.filters import ExPostFilter, filtered_search
from accfirst.erm.generators import make_generator
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import brownian_expost_epsilon, variance_matched_rhos
from accfirst.methods.pipeline import run_step, search
from accfirst.search.experiments import declared_bound, run_trials, trial_rng
from tests.data import make_logistic_data, make_ridge_data

PRIVATE = SearchOptions(radius_mode="private")
# A stated ε_R for the 2,000-row fixtures (Δ_N = (M + 2)/(nλ) ≈ 1.6 there): the radius lands well below R₀.
EPS_R = 5.0


def test_the_rule_reads_no_statistic_of_the_data() -> None:
    """Same plan on neighbouring datasets and on datasets whose ‖θ*‖ differ 50-fold but whose n, p, λ agree."""
    X, y = make_ridge_data(20, 3000, 4)
    neighbour_X, neighbour_y = X.copy(), y.copy()
    neighbour_X[0], neighbour_y[0] = [1.0, 0.0, 0.0, 0.0], -1.0
    ridges = [RidgeProblem(X, y, 0.005), RidgeProblem(neighbour_X, neighbour_y, 0.005), RidgeProblem(X, y / 50, 0.005)]
    norms = [float(np.linalg.norm(problem.theta_star)) for problem in ridges]
    assert max(norms) > 20 * min(norms)
    X, y = make_logistic_data(21, 3000, 4)
    logistics = [LogisticProblem(X, y, 0.005), LogisticProblem(X / 20, y, 0.005)]
    bought = 0
    for problems in (ridges, logistics):
        for method in ("nr", "doubling", "theory"):
            for alpha in (0.01, 0.1):
                for options in (PRIVATE, dataclasses.replace(PRIVATE, noise="gaussian")):
                    if method == "theory" and options.noise == "gaussian":
                        continue
                    plans = {run_step(problem, method, alpha, 0.1, options).plan for problem in problems}
                    assert len(plans) == 1
                    bought += not plans.pop().skipped
    assert bought >= 4  # the rule buys a radius in some cells: the equalities are not all "skipped"


def bought_options(noise: str) -> SearchOptions:
    return dataclasses.replace(PRIVATE, noise=noise, radius_epsilon=EPS_R, radius_beta=0.02)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_the_bill_of_a_private_radius_adds_up(ridge_problem: RidgeProblem, noise: str) -> None:
    """ε_total = ε_R + ε_test + ε_hypothesis: Laplace ε_R pure; Gaussian ε_R = ℰ_BM(ρ_R + ρ_k) − ℰ_BM(ρ_k), same δ."""
    options = bought_options(noise)
    bound, delta = declared_bound(ridge_problem, "nr", 0.05, 0.1, options)
    free_bound, _ = declared_bound(ridge_problem, "nr", 0.05, 0.1, SearchOptions(radius_mode="free", noise=noise))
    step = run_step(ridge_problem, "nr", 0.05, 0.1, options)
    assert step.private and step.gamma == pytest.approx(0.08)
    for trial in range(5):
        run = search(ridge_problem, "nr", 0.05, 0.1, trial_rng(3, "nr", 0.05, trial), options)
        assert not run.fallback and run.gamma == 0.1
        assert run.eps_total == pytest.approx(run.eps_radius + run.eps_test + run.eps_hypothesis, rel=1e-12)
        assert run.eps_total <= bound and run.norm_bound < ridge_problem.free_radius(ridge_problem.lam)
        if noise == "laplace":
            assert run.eps_radius == EPS_R and run.delta == 0 and bound == pytest.approx(free_bound + EPS_R, rel=0.05)
            continue
        # The joint Brownian loss, recomputed: ρ_R = ε_R²/4 on the clock before the run's variance-matched levels.
        generator = make_generator(ridge_problem.with_radius(run.norm_bound), None, "gaussian")
        rhos = variance_matched_rhos(step.options.grid(ridge_problem, 0.05), generator.sensitivity, 3 / math.sqrt(2))
        rho = rhos[run.stop_index - 1]
        joint = brownian_expost_epsilon(np.array([rho, rho + EPS_R**2 / 4]), options.delta, rho_ref=rhos[0])
        assert run.eps_hypothesis == pytest.approx(joint[0], rel=1e-12)
        assert run.eps_radius == pytest.approx(joint[1] - joint[0], rel=1e-12) and run.eps_radius > 0
        assert run.delta == delta == options.delta


def test_a_skipped_radius_changes_nothing(logistic_problem: LogisticProblem) -> None:
    """Where the rule skips the radius, a run is the run on R₀ to the last bit: the method's stream is untouched."""
    skipped = [
        alpha for alpha in (0.02, 0.05, 0.1, 0.2) if run_step(logistic_problem, "nr", alpha, 0.1, PRIVATE).plan.skipped
    ]
    assert skipped
    free = run_trials(logistic_problem, skipped, 0.1, ["nr", "theory"], 2, 5, radius_mode="free")
    private = run_trials(logistic_problem, skipped, 0.1, ["nr", "theory"], 2, 5, radius_mode="private")
    assert free.equals(private)


def test_a_filter_admits_the_radius_inside_the_search(ridge_problem: RidgeProblem) -> None:
    """The radius is part of the search's declared bound: one round, charged the whole realised ε."""
    options = bought_options("laplace")
    budget = ExPostFilter(200.0)
    run = filtered_search(budget, ridge_problem, "nr", 0.05, 0.1, trial_rng(4, "nr", 0.05, 0), options)
    assert run.status == "released" and len(budget.ledger) == 1
    assert run.charged == pytest.approx(run.result.eps_total) and run.result.eps_radius == EPS_R
    assert run.declared == pytest.approx(declared_bound(ridge_problem, "nr", 0.05, 0.1, options)[0])


def test_stated_radius_options_are_checked(ridge_problem: RidgeProblem) -> None:
    with pytest.raises(AccFirstError, match="only apply with radius_mode='private'"):
        SearchOptions(radius_mode="free", radius_epsilon=0.1)
    with pytest.raises(AccFirstError, match="radius_beta"):
        SearchOptions(radius_mode="private", radius_beta=0.7)
    with pytest.raises(AccFirstError, match="smaller than γ"):
        run_step(ridge_problem, "nr", 0.05, 0.01, dataclasses.replace(PRIVATE, radius_beta=0.02))


def test_accuracy_holds_with_a_private_radius_in_the_worst_case() -> None:
    """2,000 runs on a problem whose ‖θ*‖ the released radius undercuts with probability β = 0.05.

    When it does, the ball's minimiser is not θ* and a run's excess risk, measured against the true θ*,
    exceeds α in most such runs; the method runs with γ − β. The failure share must stay ≤ γ = 0.1:
    one-sided binomial test at 10⁻³ (false-failure rate 10⁻³). A pipeline that measured the risk against
    the ball's minimiser would hide those failures: the test also asks that they be seen.
    """
    rng = np.random.default_rng(230)
    n, lam = 2000, 0.02
    X = rng.choice([-1.0, 1.0], size=(n, 2)) * rng.dirichlet([1.0, 1.0], size=n)
    y = np.clip(X @ np.array([2.5, -1.5]) + rng.normal(scale=0.1, size=n), -1, 1)
    problem = RidgeProblem(X, y, lam)
    options = dataclasses.replace(PRIVATE, T=20, generator="output", radius_epsilon=0.3, radius_beta=0.05)
    runs = run_trials(problem, [0.01], 0.1, ["nr"], 2000, 6, **options.to_dict())
    norm = float(np.linalg.norm(problem.theta_star))
    undercut = runs["norm_bound"] < norm
    failures = int((~runs["success"]).sum())
    assert binomtest(failures, len(runs), 0.1, alternative="greater").pvalue > 1e-3
    assert binomtest(int(undercut.sum()), len(runs), 0.05).pvalue > 1e-3
    assert (~runs["success"][undercut]).mean() > 0.5
    halted = runs[~runs["fallback"]]
    assert (halted["eps_total"] <= declared_bound(problem, "nr", 0.01, 0.1, options)[0]).all()
