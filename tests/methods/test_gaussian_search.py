"""Gaussian noise reduction and doubling in the search (docs/mathematics.md#brownian-noise-reduction), and their
top-level bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from accfirst import AccFirstError, SearchOptions, doubling, epsilon_grid, noise_reduction, run_trials, theory_run
from accfirst.erm.generators import CovariancePerturbation, OutputPerturbation, make_generator
from accfirst.mechanisms.brownian import GAUSSIAN, brownian_expost_epsilon, variance_matched_rhos
from accfirst.methods.doubling import doubling_levels
from accfirst.search.experiments import declared_bound, search


@pytest.fixture(params=["ridge-covariance", "ridge-output", "logistic-output"])
def setting(request, ridge_problem, logistic_problem):
    task, generator = request.param.split("-")
    return (ridge_problem if task == "ridge" else logistic_problem), generator


def test_noise_reduction_charges_the_brownian_ex_post_loss(setting) -> None:
    problem, generator = setting
    grid = epsilon_grid(problem, 0.05, generator, T=150)
    gen = make_generator(problem, generator)
    rhos = variance_matched_rhos(grid, gen.sensitivity, gen.l2_sensitivity)
    laplace = noise_reduction(problem, 0.05, 0.1, grid, generator=generator, rng=4)
    result = noise_reduction(problem, 0.05, 0.1, grid, generator=generator, rng=4, noise="gaussian", delta=1e-5)
    assert (laplace.noise, laplace.delta) == ("laplace", 0.0)
    assert (result.noise, result.delta) == ("gaussian", 1e-5)
    assert not result.fallback
    k = result.stop_index - 1
    expected = brownian_expost_epsilon(rhos[k], 1e-5, rho_ref=rhos[0])
    assert result.eps_hypothesis == pytest.approx(expected, rel=1e-13)
    assert result.eps_test == laplace.eps_test  # the test is the same Laplace AboveThreshold
    assert result.eps_total == result.eps_test + result.eps_hypothesis
    # The trace's ε of each level is the generation loss of halting there.
    np.testing.assert_allclose(result.trace.epsilon, brownian_expost_epsilon(rhos[: k + 1], 1e-5, rho_ref=rhos[0]))
    options = SearchOptions(T=150, generator=generator, noise="gaussian", delta=1e-5, radius_mode="none")
    np.testing.assert_array_equal(options.grid(problem, 0.05), grid)
    bound, delta = declared_bound(problem, "nr", 0.05, 0.1, options)
    assert delta == 1e-5 and result.eps_total < bound
    assert bound == pytest.approx(result.eps_test + brownian_expost_epsilon(rhos[-1], 1e-5, rho_ref=rhos[0]))


def test_doubling_charges_the_sum_of_its_independent_levels(ridge_problem) -> None:
    grid = epsilon_grid(ridge_problem, 0.05, T=100)
    levels = doubling_levels(grid[0], grid[-1])
    gen = CovariancePerturbation(ridge_problem)
    rhos = variance_matched_rhos(levels, gen.sensitivity, gen.l2_sensitivity)
    result = doubling(ridge_problem, 0.05, 0.1, grid[0], grid[-1], rng=2, noise="gaussian")
    k = result.stop_index
    assert result.eps_hypothesis == pytest.approx(brownian_expost_epsilon(rhos[:k].sum(), 1e-6, rho_ref=rhos[0]))
    assert result.delta == 1e-6 and result.noise == "gaussian"
    bound, _ = declared_bound(
        ridge_problem, "doubling", 0.05, 0.1, SearchOptions(T=100, noise="gaussian", radius_mode="none")
    )
    assert result.eps_total < bound


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("method", ["nr", "doubling"])
def test_a_run_that_halts_at_the_top_level_costs_exactly_the_declared_bound(method, noise, ridge_problem) -> None:
    """Two levels. Noise reduction: the first far too noisy, so runs halt at the last one or
    fall back. Doubling: both accurate, and its test fails a good level about 2.5% of the
    time, so about 1 run in 40 halts at the second level (none in 400: probability ~1e-4)."""
    # On a fixed radius (R₀): a private radius would run below the ceiling the bound is declared on.
    if method == "nr":
        options = SearchOptions(T=2, eps_min=1e-9, eps_max=1e3, noise=noise, radius_mode="free")
    else:
        options = SearchOptions(eps_min=1e3, eps_max=2e3, noise=noise, radius_mode="free")
    bound, delta = declared_bound(ridge_problem, method, 0.05, 0.1, options)
    for seed in range(400):
        result = search(ridge_problem, method, 0.05, 0.1, np.random.default_rng(seed), options)
        assert result.eps_total <= bound
        if result.stop_index == 2:
            assert result.eps_total == pytest.approx(bound, rel=1e-14) and result.delta == delta
            return
    pytest.fail("no run halted at the top level")


def test_gaussian_output_perturbation_noise_has_the_laplace_variance(logistic_problem) -> None:
    """KS at 1e-3 on 20,000 coordinates of the variance-matched Gaussian: false-failure rate ≤ 1e-3."""
    gen = OutputPerturbation(logistic_problem, GAUSSIAN)
    epsilon = 5e4 * gen.sensitivity  # no projection at this level
    rho = variance_matched_rhos([epsilon], gen.sensitivity, gen.l2_sensitivity)[0]
    rng = np.random.default_rng(21)
    noise = np.concatenate([gen.sample(rho, rng).theta - logistic_problem.theta_star for _ in range(4000)])
    sd = math.sqrt(2) * gen.sensitivity / epsilon
    assert stats.kstest(noise, stats.norm(scale=sd).cdf).pvalue > 1e-3


def test_results_frame_carries_noise_and_delta(ridge_problem) -> None:
    frame = run_trials(ridge_problem, [0.05], 0.1, ["nr", "doubling"], 2, seed=1, T=60, noise="gaussian", delta=1e-4)
    assert set(frame["noise"]) == {"gaussian"} and set(frame["delta"]) == {1e-4}
    laplace = run_trials(ridge_problem, [0.05], 0.1, ["nr"], 1, seed=1, T=60)
    assert set(laplace["noise"]) == {"laplace"} and set(laplace["delta"]) == {0.0}


def test_theory_approach_refuses_gaussian_noise(ridge_problem) -> None:
    with pytest.raises(AccFirstError, match="no Gaussian version"):
        run_trials(ridge_problem, [0.05], 0.1, ["nr", "theory"], 1, seed=0, T=60, noise="gaussian")
    with pytest.raises(AccFirstError, match="no Gaussian version"):
        theory_run(ridge_problem, 0.05, generator=make_generator(ridge_problem, None, "gaussian"))
    with pytest.raises(AccFirstError, match="no Gaussian version"):
        declared_bound(ridge_problem, "theory", 0.05, 0.1, SearchOptions(noise="gaussian"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"noise": "cauchy"}, "unknown noise"),
        ({"delta": 0.0}, r"delta must be in \(0, 1\)"),
        ({"delta": 1.0}, r"delta must be in \(0, 1\)"),
        ({"delta": "tiny"}, "delta must be a number"),
    ],
)
def test_bad_noise_options_raise(kwargs, message, ridge_problem) -> None:
    with pytest.raises(AccFirstError, match=message):
        SearchOptions(**({"noise": "gaussian"} | kwargs))
    with pytest.raises(AccFirstError, match=message):
        noise_reduction(ridge_problem, 0.05, 0.1, [0.1, 1.0], **({"noise": "gaussian"} | kwargs))


def test_a_generator_with_other_noise_is_refused(ridge_problem) -> None:
    gaussian = make_generator(ridge_problem, None, "gaussian")
    with pytest.raises(AccFirstError, match="adds gaussian noise, not laplace"):
        noise_reduction(ridge_problem, 0.05, 0.1, [0.1, 1.0], generator=gaussian)
