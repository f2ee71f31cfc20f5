"""The Gibbs posterior (SPEC §17): ε(β) both ways, ridge's exact χ² accuracy with and without
truncation, MALA against the Laplace approximation and against an exact 1-D posterior.

Statistical assertions use fixed seeds with p-value thresholds of 1e-3 (binomial tails of
1e-4): a correct implementation fails each with probability ≤ 1e-3 for a random seed.
Runtime about 10 s (most of it the 1-D posterior's 1,000 chains).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from accfirst import AccFirstError, LogisticProblem, RidgeProblem
from accfirst.erm import gibbs
from accfirst.erm.gibbs import (
    chi_square_beta,
    exponential_mechanism_epsilon,
    gibbs_beta,
    gibbs_epsilon,
    gibbs_run,
    ridge_beta,
    ridge_failure_bound,
    sample_logistic_gibbs,
    sample_ridge_gibbs,
    split_rhat,
    truncation_margin,
)
from tests.data import make_logistic_data, make_ridge_data


def test_spec_illustration() -> None:
    """SPEC §17.4: n = 10⁵, p = 38, λ = 0.005, γ = 0.1, δ = 10⁻⁶ on C: α = 0.05 → 0.51, 0.01 → 1.14."""
    n, p, lam = 100_000, 38, 0.005
    lipschitz = 1 / math.sqrt(lam) + 1
    for alpha, expected in ((0.05, 0.51), (0.01, 1.14)):
        eps = gibbs_epsilon(chi_square_beta(n, p, alpha, 0.1), n, lam, lipschitz, 1e-6)
        assert eps == pytest.approx(expected, abs=0.005)


@pytest.mark.parametrize("form", gibbs.FORMS)
def test_epsilon_and_beta_round_trip(form: str) -> None:
    for beta in (1e-6, 1e-3, 0.05, 3.0):
        for delta in (1e-9, 1e-6, 0.01):
            eps = gibbs_epsilon(beta, 5000, 0.01, 2.5, delta, form)
            assert gibbs_beta(eps, 5000, 0.01, 2.5, delta, form) == pytest.approx(beta, rel=1e-10)


def test_derived_form_values_and_slides_comparison() -> None:
    beta, n, lam, lipschitz, delta = 0.002, 1000, 0.01, 1.0, 1e-6
    rho = 2 * beta * lipschitz**2 / (n * lam)
    assert gibbs_epsilon(beta, n, lam, lipschitz, delta) == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)))
    slides = 2 * lipschitz * math.sqrt(beta * (1 + 2 * math.log(1e6)) / (n * lam))
    assert gibbs_epsilon(beta, n, lam, lipschitz, delta, "slides") == pytest.approx(slides)
    # SPEC §17.2: the derived form implies the slides' form for ε ≲ 1 (it is no larger there).
    for beta in np.geomspace(1e-6, 0.08, 30):  # ε up to 0.96
        assert gibbs_epsilon(beta, n, lam, lipschitz, delta) <= gibbs_epsilon(beta, n, lam, lipschitz, delta, "slides")
    assert exponential_mechanism_epsilon(0.01, 9.0) == pytest.approx(1.0)
    with pytest.raises(AccFirstError):
        gibbs_epsilon(0.1, 100, 0.01, 1.0, 1e-6, "other")


@pytest.fixture(scope="module")
def small_ridge() -> RidgeProblem:
    X, y = make_ridge_data(3, 400, 4)
    return RidgeProblem(X, y, 0.01)


def test_two_beta_n_times_excess_risk_is_chi_square(small_ridge: RidgeProblem) -> None:
    beta = 0.05
    draws = sample_ridge_gibbs(small_ridge, beta, 20_000, np.random.default_rng(1), truncate=False)
    scaled = 2 * beta * small_ridge.n * small_ridge.excess_risk(draws.thetas)
    assert stats.kstest(scaled, stats.chi2(small_ridge.p).cdf).pvalue > 1e-3
    assert draws.acceptance_rate == 1.0


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_excess_risk_exceeds_alpha_with_probability_at_most_gamma(small_ridge: RidgeProblem, alpha: float) -> None:
    gamma, runs = 0.1, 4000
    beta, bound = ridge_beta(small_ridge, alpha, gamma)
    assert bound <= gamma
    draws = sample_ridge_gibbs(small_ridge, beta, runs, np.random.default_rng(2))
    assert np.all(np.linalg.norm(draws.thetas, axis=1) <= small_ridge.norm_bound)
    failures = int(np.count_nonzero(small_ridge.excess_risk(draws.thetas) > alpha))
    assert failures <= stats.binom.ppf(1 - 1e-4, runs, gamma)
    if alpha <= truncation_margin(small_ridge.lam, small_ridge.norm_bound):
        # The χ² choice is exact there: the failure rate is γ, not just below it.
        assert stats.binomtest(failures, runs, gamma).pvalue > 1e-3


def test_truncation_bound_holds_in_its_worst_case() -> None:
    """The derived bound against Monte Carlo in the case its argument treats as worst: the centre
    as far out as any ridge problem allows (‖θ_u‖ = 1/√(2λ)) and the flattest Hessian λI."""
    lam, p, n, gamma = 0.05, 3, 50, 0.1
    radius = 1 / math.sqrt(lam)
    center = np.zeros(p)
    center[0] = 1 / math.sqrt(2 * lam)
    rng = np.random.default_rng(8)
    for alpha in (0.1, 0.3):
        beta, bound = gibbs._ridge_beta(n, p, lam, radius, alpha, gamma)
        assert beta > chi_square_beta(n, p, alpha, gamma) and bound <= gamma
        thetas = center + rng.standard_normal((400_000, p)) / math.sqrt(beta * n * lam)
        inside = thetas[np.linalg.norm(thetas, axis=1) <= radius]
        risk = lam / 2 * np.sum((inside - center) ** 2, axis=1)
        failures = int(np.count_nonzero(risk > alpha))
        assert failures <= stats.binom.ppf(1 - 1e-4, len(inside), gamma)


def test_failure_bound_and_margin() -> None:
    assert truncation_margin(0.005, 1 / math.sqrt(2 * 0.005)) == 0.0
    assert truncation_margin(0.005, 1 / math.sqrt(0.005)) == pytest.approx((1 - 1 / math.sqrt(2)) ** 2 / 2)
    assert ridge_failure_bound(1.0, 100, 3, 0.1, 0.0) == 1.0


def test_a_small_public_radius_falls_back_to_the_chi_square_beta(small_ridge: RidgeProblem) -> None:
    class Radius(RidgeProblem):
        @property
        def norm_bound(self) -> float:
            return 5.0  # below 1/√(2λ) ≈ 7.07: no data-independent bound on P(C)

    X, y = make_ridge_data(3, 400, 4)
    problem = Radius(X, y, 0.01)
    beta, bound = ridge_beta(problem, 0.05, 0.1)
    assert (beta, bound) == (chi_square_beta(400, 4, 0.05, 0.1), 1.0)
    run = gibbs_run(problem, 0.05, 0.1, rng=0)
    assert run.calibration == "chi-square/P(C)"
    assert run.sampler.failure_bound == pytest.approx(min(0.1 / run.sampler.acceptance_rate, 1.0))


def test_a_ball_that_misses_the_posterior_is_refused_quickly() -> None:
    """A radius half the optimum's norm and β = 10⁴: the posterior (spread ≤ 10⁻³) lies outside C."""
    X, y = make_ridge_data(4, 20_000, 5)
    unconstrained = RidgeProblem(X, y, 0.005).unconstrained_norm
    problem = RidgeProblem(X, y, 0.005, radius=0.5 * unconstrained)
    with pytest.raises(AccFirstError, match=r"0 of 100,[0-9]{3} draws fell inside"):
        sample_ridge_gibbs(problem, 1e4, 1, np.random.default_rng(0))


@pytest.mark.parametrize(("alpha", "pure_wins"), [(0.01, False), (0.05, True)])
def test_ridge_run(small_ridge: RidgeProblem, alpha: float, pure_wins: bool) -> None:
    """A ridge run reports whichever of (derived ε, δ) and (pure ε, 0) has the smaller ε."""
    run = gibbs_run(small_ridge, alpha, 0.1, rng=4)
    beta, _ = ridge_beta(small_ridge, alpha, 0.1)
    radius = small_ridge.norm_bound
    derived = gibbs_epsilon(beta, 400, 0.01, radius + 1, 1e-6)
    pure = exponential_mechanism_epsilon(beta, radius)
    assert (pure < derived) == pure_wins
    assert (run.method, run.noise, run.generator, run.calibration) == ("gibbs", "gibbs", "gibbs-exact", "chi-square")
    assert run.eps_test == 0 and run.eps_total == run.eps_hypothesis == pytest.approx(min(pure, derived))
    assert run.delta == (0.0 if pure_wins else 1e-6) and not run.fallback and run.stop_index == 1
    assert gibbs.gibbs_bound(small_ridge, alpha, 0.1) == (run.eps_total, run.delta)
    assert run.sampler.beta == beta and run.sampler.tv_allowance == 0
    assert run.excess_risk == pytest.approx(small_ridge.excess_risk(run.theta))
    asked_pure = gibbs_run(small_ridge, alpha, 0.1, delta=0.0, rng=4)
    assert asked_pure.delta == 0 and asked_pure.eps_total == pytest.approx(pure)
    assert np.array_equal(asked_pure.theta, run.theta)
    assert "sampler" not in run.to_dict()


@pytest.fixture(scope="module")
def small_logistic() -> LogisticProblem:
    X, y = make_logistic_data(5, 3000, 4)
    return LogisticProblem(X, y, 0.01)


def test_mala_agrees_with_the_laplace_approximation(small_logistic: LogisticProblem) -> None:
    """At α = 0.01 (βn ≈ 400) the posterior is close to N(θ*, (βnH*)⁻¹): in whitened
    coordinates the samples' mean is near 0 (within 0.15 sd) and their covariance near I."""
    beta = chi_square_beta(small_logistic.n, small_logistic.p, 0.01, 0.1)
    chains = sample_logistic_gibbs(small_logistic, beta, np.random.default_rng(6), chains=100)
    assert chains.converged and chains.acceptance_rate > 0.8
    factor = np.linalg.cholesky(small_logistic.hessian_at(small_logistic.theta_star))
    u = (
        (chains.samples.reshape(-1, small_logistic.p) - small_logistic.theta_star)
        @ factor
        * math.sqrt(beta * small_logistic.n)
    )
    assert np.max(np.abs(u.mean(axis=0))) < 0.15
    eigenvalues = np.linalg.eigvalsh(np.cov(u.T))
    assert 0.85 < eigenvalues.min() and eigenvalues.max() < 1.15


def test_mala_samples_the_exact_posterior_in_one_dimension() -> None:
    """p = 1 and a small βn, where the posterior is visibly skewed: the final states of 1,000
    independent chains against the posterior's distribution function by quadrature (KS)."""
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, size=(300, 1))
    y = np.where(rng.random(300) < 1 / (1 + np.exp(-3 * x[:, 0])), 1.0, -1.0)
    problem = LogisticProblem(x, y, 0.01)
    beta = 0.05  # βn = 15: far from the Laplace approximation
    chains = sample_logistic_gibbs(problem, beta, rng, chains=1000)
    finals = chains.samples[:, -1, 0]
    grid = np.linspace(problem.theta_star[0] - 15, problem.theta_star[0] + 15, 6001)
    log_density = -beta * problem.n * problem.loss(grid[:, None])
    density = np.exp(log_density - log_density.max())
    cdf = integrate.cumulative_trapezoid(density, grid, initial=0)
    cdf /= cdf[-1]
    assert stats.kstest(finals, lambda t: np.interp(t, grid, cdf)).pvalue > 1e-3
    assert abs(stats.skew(finals)) > 0.2  # the test is not about a Gaussian


def test_logistic_run_adds_the_sampler_allowance_to_delta(small_logistic: LogisticProblem) -> None:
    run = gibbs_run(small_logistic, 0.05, 0.1, delta=1e-6, rng=3)
    assert (run.generator, run.calibration, run.noise) == ("gibbs-mala", "laplace-approx", "gibbs")
    expected = 1e-6 + (math.exp(run.eps_total) + 1) * gibbs.MALA_TV_ALLOWANCE
    assert run.delta == pytest.approx(expected)
    assert run.sampler.tv_allowance == gibbs.MALA_TV_ALLOWANCE and run.sampler.rhat <= gibbs.RHAT_LIMIT
    assert run.eps_total == pytest.approx(gibbs_epsilon(run.sampler.beta, small_logistic.n, 0.01, 1.0, 1e-6))
    with pytest.raises(AccFirstError, match="delta > 0"):
        gibbs_run(small_logistic, 0.05, 0.1, delta=0.0)
    with pytest.raises(AccFirstError, match="convergence check"):
        gibbs.gibbs_bound(small_logistic, 0.05, 0.1)


def test_a_failed_diagnostic_claims_no_privacy(small_logistic: LogisticProblem, monkeypatch) -> None:
    monkeypatch.setattr(gibbs, "RHAT_LIMIT", 0.5)  # never met
    run = gibbs_run(small_logistic, 0.05, 0.1, rng=3)
    assert run.delta == 1.0 and run.sampler.tv_allowance == 1.0
    assert run.sampler.steps == gibbs.MALA_MAX_STEPS


def test_split_rhat() -> None:
    rng = np.random.default_rng(0)
    assert split_rhat(rng.standard_normal((4, 400, 3))) < 1.02
    stuck = rng.standard_normal((4, 400, 1)) + np.arange(4)[:, None, None]
    assert split_rhat(stuck) > 1.5
    with pytest.raises(AccFirstError):
        split_rhat(np.zeros((2, 3, 1)))
