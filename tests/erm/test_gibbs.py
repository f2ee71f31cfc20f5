"""The Gibbs posterior (docs/mathematics.md#the-gibbs-posterior): ridge's exact χ² accuracy with and without
truncation, its draws on a ball and on a lattice against the exact 1-D posterior, the plans fixed before the data are
read (refusals typed), the ε a run reports, and the logistic run's δ split between the posterior and a proven sampler
bound. The privacy bounds themselves are tested in test_gibbs_privacy.py, the logistic sampler's draws in
test_proximal_sampler.py.

Statistical assertions use fixed seeds with p-value thresholds of 1e-3 (binomial tails of
1e-4): a correct implementation fails each with probability ≤ 1e-3 for a random seed.
Runtime about 40 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from accfirst import AccFirstError, LogisticProblem, RidgeProblem
from accfirst.erm import gibbs, ridge_sampler
from accfirst.erm.gibbs import (
    TV_SHARE,
    chi_square_beta,
    gibbs_bound,
    gibbs_run,
    lattice_alpha,
    logistic_plan,
    ridge_failure_bound,
    ridge_plan,
    truncation_margin,
)
from accfirst.erm.gibbs_privacy import (
    exponential_mechanism_epsilon,
    gibbs_epsilon,
    logistic_gradient_gap,
    ridge_gradient_gap,
)
from accfirst.erm.ridge_sampler import BallSampler, ball_sampler, fallback_weight, sample_on_lattice
from accfirst.mechanisms import lattice
from tests.attacks import on_lattice
from tests.data import make_logistic_data, make_ridge_data


def test_docs_illustration() -> None:
    """docs/mathematics.md#the-gibbs-posterior: n = 10⁵, p = 38, λ = 0.005, γ = 0.1, δ = 10⁻⁶, ridge on its ball:
    α = 0.05 → ε ≈ 0.156, α = 0.01 → 0.304 (the docs quote these two numbers)."""
    for alpha, quoted in ((0.05, 0.156), (0.01, 0.304)):
        plan = gibbs._ridge_plan(100_000, 38, 0.005, 1 / math.sqrt(0.005), alpha, 0.1, 1e-6)
        assert plan.epsilon == pytest.approx(quoted, abs=0.0005) and plan.delta == 1e-6


@pytest.fixture(scope="module")
def small_ridge() -> RidgeProblem:
    X, y = make_ridge_data(3, 400, 4)
    return RidgeProblem(X, y, 0.01)


def test_two_beta_n_times_excess_risk_is_chi_square(small_ridge: RidgeProblem) -> None:
    """On a ball holding all but e^{−300} of the posterior, 20,000 lattice draws: 2βn·R ∼ χ²_p (KS)."""
    beta = 0.05
    ball = ball_sampler(small_ridge.n, small_ridge.p, small_ridge.lam, beta, small_ridge.norm_bound, 0.5)
    draws = sample_on_lattice(small_ridge, ball, np.random.default_rng(1), 20_000)
    scaled = 2 * beta * small_ridge.n * small_ridge.excess_risk(draws)
    assert stats.kstest(scaled, stats.chi2(small_ridge.p).cdf).pvalue > 1e-3
    assert np.all(on_lattice(draws, ball.spacing))


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_excess_risk_exceeds_alpha_with_probability_at_most_gamma(small_ridge: RidgeProblem, alpha: float) -> None:
    """4,000 releases of the plan (its ball, β and lattice): P(R > α) ≤ γ, and = γ where the χ² choice stands."""
    gamma, runs = 0.1, 4000
    plan = ridge_plan(small_ridge, alpha, gamma, 1e-6)
    assert plan.failure_bound <= gamma
    draws = sample_on_lattice(small_ridge, plan.sampler, np.random.default_rng(2), runs)
    assert np.all(np.linalg.norm(draws, axis=1) <= plan.sampler.radius + plan.sampler.spacing)
    failures = int(np.count_nonzero(small_ridge.excess_risk(draws) > alpha))
    assert failures <= stats.binom.ppf(1 - 1e-4, runs, gamma)
    if alpha <= truncation_margin(small_ridge.lam, plan.sampler.radius):
        assert stats.binomtest(failures, runs, gamma).pvalue > 1e-3


@pytest.mark.parametrize("share", [1.0, 0.8])
def test_ridge_draws_match_the_exact_one_dimensional_posterior(share: float) -> None:
    """p = 1: 20,000 draws on [−r, r] against exp(−βn·L) on it by quadrature (KS, both tails), with r = M and
    with a radius inside the posterior's bulk."""
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, size=(40, 1))
    y = np.clip(0.9 * x[:, 0] + rng.normal(scale=0.3, size=40), -1, 1)
    problem = RidgeProblem(x, y, 0.05)
    radius = problem.norm_bound if share == 1 else share * problem.unconstrained_norm
    beta = 0.5
    ball = ball_sampler(problem.n, 1, problem.lam, beta, radius, 0.05)
    draws = sample_on_lattice(problem, ball, np.random.default_rng(7), 20_000)[:, 0]
    grid = np.linspace(-radius, radius, 40_001)
    log_density = -beta * problem.n * problem.loss(grid[:, None])
    cdf = integrate.cumulative_trapezoid(np.exp(log_density - log_density.max()), grid, initial=0)
    cdf /= cdf[-1]
    values = np.interp(draws, grid, cdf)
    assert stats.kstest(values, "uniform").pvalue > 1e-3
    for q in (0.001, 0.01, 0.99, 0.999):
        assert stats.binomtest(int(np.count_nonzero(values <= q)), 20_000, q).pvalue > 1e-3


def test_truncation_bound_holds_in_its_worst_case() -> None:
    """The derived bound against Monte Carlo in the case its argument treats as worst: the centre
    as far out as any ridge problem allows (‖θ_u‖ = 1/(2√λ) = M/2) and the flattest Hessian λI."""
    lam, p, n, gamma = 0.05, 3, 50, 0.1
    radius = 1 / math.sqrt(lam)
    center = np.zeros(p)
    center[0] = 1 / (2 * math.sqrt(lam))
    rng = np.random.default_rng(8)
    for alpha in (0.1, 0.2, 0.3):  # α_C = λ(M/2)²/2 = 1/8: the χ² β stands below it, is raised above
        beta, bound = gibbs._ridge_beta(n, p, lam, radius, alpha, gamma)
        assert (beta > chi_square_beta(n, p, alpha, gamma)) == (alpha > 1 / 8) and bound <= gamma
        thetas = center + rng.standard_normal((400_000, p)) / math.sqrt(beta * n * lam)
        inside = thetas[np.linalg.norm(thetas, axis=1) <= radius]
        risk = lam / 2 * np.sum((inside - center) ** 2, axis=1)
        failures = int(np.count_nonzero(risk > alpha))
        assert failures <= stats.binom.ppf(1 - 1e-4, len(inside), gamma)


def test_failure_bound_and_margin() -> None:
    # At the radius M/2 of docs/mathematics.md#the-free-radius no data-independent bound remains; at M, α_C = 1/8.
    assert truncation_margin(0.005, 1 / (2 * math.sqrt(0.005))) == 0.0
    assert truncation_margin(0.005, 1 / math.sqrt(0.005)) == pytest.approx(1 / 8)
    assert ridge_failure_bound(1.0, 100, 3, 0.1, 0.0) == 1.0


def test_every_ridge_minimiser_lies_within_half_the_norm_bound() -> None:
    """docs/mathematics.md#the-free-radius, which ``truncation_margin`` and the fallback weight rest on:
    ‖θ_u‖ ≤ 1/(2√λ) for every ridge problem."""
    rng = np.random.default_rng(7)
    for lam in (0.5, 0.05, 0.005):
        for _ in range(20):
            X, y = make_ridge_data(int(rng.integers(1_000)), 200, 3)
            y = np.where(rng.random(200) < 0.5, y, rng.choice([-1.0, 1.0], 200))
            assert RidgeProblem(X, y, lam).unconstrained_norm <= 1 / (2 * math.sqrt(lam)) * (1 + 1e-12)
    # Tight: the one row x = 1, y = 1 at λ = 1 has θ_u = ½ = 1/(2√λ) (u = ½ maximises u − u²).
    assert RidgeProblem(np.array([[1.0]]), np.array([1.0]), 1.0).unconstrained_norm == pytest.approx(0.5)


def test_the_lattice_costs_what_lattice_alpha_says() -> None:
    """√R of a lattice point is within 2⁻¹⁷√(p/(2βn)) of the unrounded draw's, at the narrowest spread the
    spacing is cut for (H = (1 + λ)I, the largest curvature of any ridge problem) over 10,000 draws; and
    lattice_alpha's target meets α after that move."""
    n, p, lam, beta = 500, 6, 0.01, 0.3
    spacing = lattice.lattice_spacing(1 / math.sqrt(beta * n * (1 + lam)))
    rng = np.random.default_rng(9)
    theta = rng.standard_normal((10_000, p)) / math.sqrt(beta * n * (1 + lam))
    rounded = spacing * np.floor(theta / spacing + 0.5)
    moved = np.sqrt((1 + lam) / 2) * (np.linalg.norm(rounded, axis=1) - np.linalg.norm(theta, axis=1))
    assert np.max(moved) <= 2.0**-17 * math.sqrt(p / (2 * beta * n))
    assert np.max(moved) >= 2.0**-17 * math.sqrt(p / (2 * beta * n)) / 8  # the spacing is not far finer than said
    target = lattice_alpha(0.05, beta, n, p)
    assert math.sqrt(target) + 2.0**-17 * math.sqrt(p / (2 * beta * n)) == pytest.approx(math.sqrt(0.05))
    with pytest.raises(AccFirstError, match="too small"):
        lattice_alpha(1e-30, beta, n, p)


def test_a_radius_at_or_below_half_the_norm_bound_is_refused_before_the_data_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No data-independent bound keeps such a ball's share of the posterior or its accuracy: refused by the plan,
    by gibbs_bound and by gibbs_run alike, with the same message on every dataset."""
    X, y = make_ridge_data(3, 400, 4)
    problem = RidgeProblem(X, y, 0.01, radius=RidgeProblem.free_radius(0.01))
    monkeypatch.setattr(ridge_sampler, "sample_on_lattice", lambda *a: pytest.fail("the data were read"))
    messages = set()
    for call in (ridge_plan, gibbs_bound, gibbs_run):
        with pytest.raises(AccFirstError, match="above M/2") as refused:
            call(problem, 0.05, 0.1, 1e-6)
        messages.add(str(refused.value))
    assert len(messages) == 1


def test_a_sampler_that_misses_the_ball_releases_zero_after_its_cap() -> None:
    """A ball far from the posterior: after ``cap`` proposals, all outside, the release is the lattice point 0
    (an event of probability ≤ φ for any ball a plan would use; forced here with a cap of 300)."""
    X, y = make_ridge_data(4, 2000, 3)
    problem = RidgeProblem(X, y, 0.005)
    spacing = lattice.lattice_spacing(1 / math.sqrt(1e4 * problem.n))
    ball = BallSampler(1e4, 0.01 * problem.unconstrained_norm, spacing, 300, 0.5, 1.0)
    assert np.array_equal(sample_on_lattice(problem, ball, np.random.default_rng(0), 2), np.zeros((2, 3)))


def test_an_illustration_keeps_only_draws_inside_the_ball_within_its_budget(small_ridge: RidgeProblem) -> None:
    """With a budget (the Learn page's draws) a ball far from the posterior gives no draw rather than zeros, and a
    ball holding most of it gives every draw asked for, each inside the ball (up to half a lattice cell)."""
    X, y = make_ridge_data(4, 2000, 3)
    problem = RidgeProblem(X, y, 0.005)
    spacing = lattice.lattice_spacing(1 / math.sqrt(1e4 * problem.n))
    far = BallSampler(1e4, 0.01 * problem.unconstrained_norm, spacing, 300, 0.5, 1.0)
    assert sample_on_lattice(problem, far, np.random.default_rng(0), 5, budget=2000).shape == (0, 3)
    ball = ball_sampler(small_ridge.n, small_ridge.p, small_ridge.lam, 0.3, 5.5, 0.3)
    draws = sample_on_lattice(small_ridge, ball, np.random.default_rng(5), 50, budget=10_000)
    assert draws.shape == (50, small_ridge.p)
    assert np.all(np.linalg.norm(draws, axis=1) <= 5.5 + ball.spacing * math.sqrt(small_ridge.p))


def test_the_fallback_weight_bounds_the_probability_of_zero() -> None:
    """p = 1, θ_u as far out as any ridge problem allows (M/2) and the flattest posterior (H = λ): its mass on the
    cell of 0 is at least e^{−log K₀} (the bound takes the largest curvature 1 + λ with it, so it holds with room);
    the cap then makes φK₀ ≤ 2⁻⁴⁰, and the ε it adds is below 10⁻¹¹."""
    n, lam, beta = 50, 0.05, 0.4
    spacing = lattice.lattice_spacing(1 / math.sqrt(beta * n * (1 + lam)))
    centre, curvature = 1 / (2 * math.sqrt(lam)), beta * n * lam
    cell = stats.norm(centre, 1 / math.sqrt(curvature))
    mass = cell.cdf(spacing / 2) - cell.cdf(-spacing / 2)
    log_weight = fallback_weight(beta, n, 1, lam, spacing)
    assert -log_weight <= math.log(mass)
    ball = ball_sampler(n, 1, lam, beta, 1 / math.sqrt(lam), 0.3)
    assert ball.log_weight - ball.cap * ball.acceptance <= -40 * math.log(2)
    assert 0 <= ball.epsilon(1.0) - 1.0 < 1e-11


def test_forced_exact_decisions_release_the_same_lattice_points(
    small_ridge: RidgeProblem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ball test and every lattice cell decided exactly (decimal enclosures of the ideal Gaussians) gives
    the releases the float64 enclosures gave: the exact path agrees wherever the fast one decides. Deterministic."""
    ball = ball_sampler(small_ridge.n, small_ridge.p, small_ridge.lam, 0.3, 5.5, 0.3)
    fast = sample_on_lattice(small_ridge, ball, np.random.default_rng(4), 40)
    inside, nearest = ridge_sampler._inside_fast, lattice.nearest_fast

    def undecided(*args):
        return np.full(len(args[1]), -1, dtype=np.int64)

    def unsettled(*args):
        values, _ = nearest(*args)
        return values, np.ones(values.shape, dtype=bool)

    monkeypatch.setattr(ridge_sampler, "_inside_fast", undecided)
    monkeypatch.setattr(lattice, "nearest_fast", unsettled)
    assert np.array_equal(sample_on_lattice(small_ridge, ball, np.random.default_rng(4), 40), fast)
    assert inside is not undecided


@pytest.mark.parametrize(("alpha", "pure_wins"), [(0.01, False), (0.2, True)])
def test_ridge_run(small_ridge: RidgeProblem, alpha: float, pure_wins: bool) -> None:
    """A ridge run reports whichever of (derived ε, δ) and (pure ε, 0) has the smaller ε on its plan's ball,
    with the cap's allowance; a run asked for δ = 0 reports the pure ε."""
    run = gibbs_run(small_ridge, alpha, 0.1, rng=4)
    plan = ridge_plan(small_ridge, alpha, 0.1, 1e-6)
    ball = plan.sampler
    derived = gibbs_epsilon(ball.beta, 400, 0.01, ridge_gradient_gap(4, ball.radius), 1e-6)
    pure = exponential_mechanism_epsilon(ball.beta, 4, ball.radius)
    assert (pure < derived) == pure_wins
    assert (run.method, run.noise, run.generator, run.calibration) == ("gibbs", "gibbs", "gibbs-exact", "chi-square")
    assert run.eps_test == 0 and run.eps_total == run.eps_hypothesis == ball.epsilon(min(pure, derived))
    assert run.delta == (0.0 if pure_wins else 1e-6) and not run.fallback and run.stop_index == 1
    assert gibbs_bound(small_ridge, alpha, 0.1) == (run.eps_total, run.delta)
    assert (run.sampler.beta, run.sampler.radius, run.sampler.tv_bound) == (ball.beta, ball.radius, 0.0)
    assert np.all(on_lattice(run.theta, ball.spacing))
    assert run.excess_risk == pytest.approx(small_ridge.excess_risk(run.theta))
    asked_pure = gibbs_run(small_ridge, alpha, 0.1, delta=0.0, rng=4)
    assert asked_pure.delta == 0 and asked_pure.eps_total == ridge_plan(small_ridge, alpha, 0.1, 0.0).epsilon
    assert "sampler" not in run.to_dict()


def test_the_ball_is_the_one_with_the_least_epsilon() -> None:
    """The plan's radius lies in (M/2, M/2 + √(2α/λ)] and its ε is within 0.1% of the least over 200 radii
    between M/2 and M; a smaller public radius caps it."""
    n, p, lam, alpha = 100_000, 38, 0.005, 0.05
    half = 1 / (2 * math.sqrt(lam))
    plan = gibbs._ridge_plan(n, p, lam, 2 * half, alpha, 0.1, 1e-6)
    assert half < plan.sampler.radius <= half + math.sqrt(2 * alpha / lam) + 1e-9
    others = [
        gibbs._ridge_candidate(n, p, lam, float(r), alpha, 0.1, 1e-6) for r in np.linspace(half, 2 * half, 201)[1:]
    ]
    assert plan.epsilon <= 1.001 * min(other.epsilon for other in others if other is not None)
    capped = gibbs._ridge_plan(n, p, lam, 1.2 * half, alpha, 0.1, 1e-6)
    assert capped.sampler.radius <= 1.2 * half


@pytest.fixture(scope="module")
def small_logistic() -> LogisticProblem:
    X, y = make_logistic_data(5, 3000, 4)
    return LogisticProblem(X, y, 0.01)


def test_logistic_run_reports_the_delta_asked_for_with_a_proven_sampler_bound(small_logistic: LogisticProblem) -> None:
    """δ is split: the posterior's (ε, δ/(1 + TV_SHARE)) plus the sampler's (e^ε + 1)·γ_TV = the rest."""
    run = gibbs_run(small_logistic, 0.05, 0.1, delta=1e-6, rng=3)
    assert (run.generator, run.calibration, run.noise) == ("gibbs-proximal", "laplace-approx", "gibbs")
    posterior_delta = 1e-6 / (1 + TV_SHARE)
    epsilon = gibbs_epsilon(run.sampler.beta, small_logistic.n, 0.01, logistic_gradient_gap(4), posterior_delta)
    assert run.eps_total == run.eps_hypothesis == epsilon and run.eps_test == 0
    assert run.delta == 1e-6 and run.sampler.tv_bound == pytest.approx(
        TV_SHARE * posterior_delta / (math.exp(epsilon) + 1)
    )
    assert posterior_delta + (math.exp(epsilon) + 1) * run.sampler.tv_bound == pytest.approx(1e-6, rel=1e-12)
    assert gibbs_bound(small_logistic, 0.05, 0.1) == (run.eps_total, 1e-6)
    assert np.all(on_lattice(run.theta, run.sampler.spacing))
    assert run.excess_risk == pytest.approx(small_logistic.excess_risk(run.theta))


def test_no_logistic_release_reports_a_declared_allowance() -> None:
    """Across data and α (the skewed one-dimensional case among them) every run releases with the δ asked for and
    the TV bound ``logistic_plan`` proves, never δ = 1; at ε ≈ 20 (γ_TV far below 2⁻⁵³) too, its coins being exact."""
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, size=(20, 1))
    problems = [LogisticProblem(x, np.where(x[:, 0] > 0, 1.0, -1.0), 0.002)]
    problems += [LogisticProblem(*make_logistic_data(seed, 500, 3), 0.005) for seed in (1, 2)]
    for problem in problems:
        for alpha in (0.01, 0.1, float(stats.chi2.isf(0.1, problem.p)) / 27):
            for seed in range(3):
                run = gibbs_run(problem, alpha, 0.1, 1e-7, seed)
                plan = logistic_plan(problem, alpha, 0.1, 1e-7)
                assert run.delta == 1e-7 and run.eps_total == plan.epsilon and run.sampler.tv_bound == plan.tv_bound
                assert 0 < plan.tv_bound < 1e-7 / 100
    sharp = logistic_plan(problems[0], 0.05, 0.1, 1e-6)
    assert sharp.epsilon > 18 and sharp.tv_bound < 2.0**-53
    assert np.all(on_lattice(gibbs_run(problems[0], 0.05, 0.1, 1e-6, 0).theta, sharp.spacing))


def test_logistic_refusals_are_typed_and_read_no_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """δ = 0, and a shape the sampler could not finish for some data (many features, tiny λ), are refused
    by ``gibbs_bound`` and ``gibbs_run`` before the problem's data are touched."""
    X, y = make_logistic_data(3, 300, 40)
    tiny = LogisticProblem(X, y, 1e-5)
    touched = []
    for name in ("loss", "loss_and_gradient", "hessian_at", "reduce_rows"):
        monkeypatch.setattr(LogisticProblem, name, lambda *args, name=name: touched.append(name))
    for call in (gibbs_bound, gibbs_run):
        with pytest.raises(AccFirstError, match="delta > 0"):
            call(tiny, 0.05, 0.1, 0.0)
        with pytest.raises(AccFirstError, match="larger λ, fewer features"):
            call(tiny, 0.05, 0.1, 1e-6)
    assert touched == []
