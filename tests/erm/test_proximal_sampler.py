"""The certified logistic Gibbs sampler against the derivation and against exact posteriors.

The envelope's inequalities are checked at random points (deterministic: no false failures); the energy's float64
error bound against decimal evaluation (deterministic); the theorem's KL contraction and the start's KL bound on a
1-D posterior by quadrature of the chain's own transition kernel (deterministic); forced exact coins and exact
lattice cells against the float64 decisions (deterministic: the same releases); the draws of both paths (exact
rejection and the proximal sampler) against posteriors integrated numerically in one and two dimensions.
Each statistical assertion uses a fixed seed and a p-value threshold of 1e-3: a correct sampler
fails one with probability ≤ 1e-3 for a random seed (≤ 1.2% for the ~12 of them in this file).
With 20,000 draws a one-sample KS test at that level catches any error of the distribution
function above 0.014. Runtime about 90 s.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest
from scipy import integrate, stats

from accfirst import AccFirstError, LogisticProblem
from accfirst.erm import exact_rejection, proximal_sampler
from accfirst.erm.logistic_energy import ROW_BOUND, Energy
from accfirst.erm.proximal_sampler import (
    EXACT_LIMIT,
    MAX_STEPS,
    MODE_TOLERANCE,
    mixing_steps,
    oracle_share,
    posterior_mode,
    proximal_steps_bound,
    run_chains,
    start_divergence,
)
from accfirst.mechanisms import lattice
from accfirst.mechanisms.ideal_noise import ROUNDOFF
from tests.attacks import on_lattice
from tests.data import make_logistic_data

SKEWED_BETA_N = 13.5
SPACING = 2.0**-30


def skewed_problem(seed: int = 3) -> LogisticProblem:
    """n = 20, p = 1, separable labels, λ = 0.002: at βn = 13.5 the posterior is strongly skewed."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(20, 1))
    return LogisticProblem(x, np.where(x[:, 0] > 0, 1.0, -1.0), 0.002)


def one_hot_problem(p: int, rows_per_feature: int, lam: float) -> LogisticProblem:
    """Rows e_j with balanced labels: G = I/p and margins 0 at θ* = 0, the global envelope's worst case."""
    X = np.repeat(np.eye(p), 2 * rows_per_feature, axis=0)
    y = np.tile(np.repeat([1.0, -1.0], rows_per_feature), p)
    return LogisticProblem(X, y, lam)


def force_proximal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the proximal sampler's path even where exact rejection would do."""
    monkeypatch.setattr(proximal_sampler, "EXACT_LIMIT", -math.inf)


def quadrature_cdf(problem: LogisticProblem, beta: float, low: float, high: float):
    """The 1-D posterior's distribution function by the trapezoid rule on 40,001 points."""
    grid = np.linspace(low, high, 40_001)
    log_density = -beta * problem.n * problem.loss(grid[:, None])
    density = np.exp(log_density - log_density.max())
    cdf = integrate.cumulative_trapezoid(density, grid, initial=0)
    cdf /= cdf[-1]
    return lambda t: np.interp(t, grid, cdf)


def assert_matches(draws: np.ndarray, cdf, probabilities=(0.001, 0.01, 0.99, 0.999)) -> None:
    """KS against ``cdf``, and each tail probability by a two-sided binomial test (thresholds 1e-3)."""
    assert stats.kstest(draws, cdf).pvalue > 1e-3
    values = cdf(draws)
    for q in probabilities:
        below = int(np.count_nonzero(values <= q))
        assert stats.binomtest(below, len(draws), q).pvalue > 1e-3, q


@pytest.mark.parametrize("seed", [1, 2])
def test_envelope_inequalities_hold_at_random_points(seed: int) -> None:
    """The derivation's two bounds on the Bregman remainder of L at 20,000 random pairs, near and far:
    0 ≤ L(θ) − L(θ′) − ∇L(θ′)ᵀΔ − (λ/2)‖Δ‖² ≤ ⅛ ΔᵀGΔ, Δ = θ − θ′."""
    X, y = make_logistic_data(seed, 300, 3)
    problem = LogisticProblem(X, y, 0.005)
    rng = np.random.default_rng(seed)
    anchors = problem.theta_star + rng.standard_normal((20_000, 3)) * rng.choice([0.3, 3.0, 30.0], (20_000, 1))
    points = anchors + rng.standard_normal((20_000, 3)) * rng.choice([0.1, 3.0, 100.0], (20_000, 1))
    step = points - anchors
    losses, gradients = problem.loss_and_gradient(anchors)
    remainder = problem.loss(points) - losses - np.sum(gradients * step, axis=1) - 0.005 / 2 * np.sum(step**2, axis=1)
    ceiling = np.einsum("kp,pq,kq->k", step, problem.gram, step) / 8
    rounding = 1e-12 * (1 + np.abs(losses) + np.sum(step**2, axis=1))
    assert np.all(remainder >= -rounding)
    assert np.all(remainder <= ceiling + rounding)


def test_the_energys_float_error_bound_holds_and_is_not_loose() -> None:
    """f at 24 points near and far, in float64 with its bound, against decimal evaluation at 40 digits: within the
    bound, and the bound within 10⁻⁶ of |f| + 1 (so that coins need the exact path rarely); the gradient
    against a decimal central difference."""
    X, y = make_logistic_data(3, 400, 3)
    problem = LogisticProblem(X, y, 0.01)
    energy = Energy(problem, 0.3, problem.theta_star)
    rng = np.random.default_rng(0)
    points = rng.standard_normal((24, 3)) * rng.choice([0.1, 3.0, 40.0], (24, 1))
    at = energy.evaluate(points)
    for k, point in enumerate(points):
        exact = energy.exact([Decimal(float(v)) for v in point], Decimal(0), 40)
        middle = float((exact.lo + exact.hi) / 2)
        assert abs(at.value[k] - middle) <= at.error[k]
        assert at.error[k] <= 1e-6 * (abs(at.value[k]) + 1)
        step = Decimal("1e-12")
        for j in range(3 if k < 6 else 0):
            shifted = [Decimal(float(v)) for v in point]
            shifted[j] += step
            upper = energy.exact(shifted, Decimal(0), 40)
            shifted[j] -= 2 * step
            lower = energy.exact(shifted, Decimal(0), 40)
            slope = float(((upper.lo + upper.hi) - (lower.lo + lower.hi)) / (4 * step))
            assert abs(at.gradient[k, j] - slope) <= at.gradient_error[k] + 1e-9 * (abs(slope) + 1)


def _problem_energy(problem: LogisticProblem, beta: float):
    """θ_c and u ↦ βn(L(θ_c + u/s) − L(θ_c)) on a 1-D grid of u."""
    centre = posterior_mode(problem, beta)
    scale = math.sqrt(beta * problem.n * problem.lam)
    loss = float(problem.loss(centre))

    def energy(u: np.ndarray) -> np.ndarray:
        return beta * problem.n * (problem.loss(centre + u[:, None] / scale) - loss)

    return centre, energy


def test_exact_paths_acceptance_and_the_starts_divergence_by_quadrature() -> None:
    """1-D skewed posterior: the exact path's certified acceptance below the true Z/Z_envelope, KL(N(0, 1)‖π)
    below ``start_divergence``, and the sampler's proposals per draw against the true rate (binomial test)."""
    problem = skewed_problem()
    beta = SKEWED_BETA_N / problem.n
    centre, energy_of = _problem_energy(problem, beta)
    energy = Energy(problem, beta, centre)
    excess = np.array([(float(problem.gram[0, 0]) + 1e-12) / (4 * problem.lam)])
    envelope = exact_rejection.certified_envelope(
        energy,
        np.zeros((1, 1)),
        np.zeros((1, 1)),
        np.zeros((1, 1)),
        math.inf,
        exact_rejection.log_det_bound(excess, math.inf, 1 / energy.convexity),
    )
    u = np.linspace(-60, 60, 120_001)
    values = energy_of(u)
    shift = float(energy.evaluate(np.zeros((1, 1))).value[0])  # f(0) in the energy's own offset
    z = integrate.trapezoid(np.exp(-values), u)
    log_envelope_mass = -(float(envelope.floor[0]) - shift) + 0.5 * math.log(2 * math.pi * envelope.spread**2)
    acceptance = z / math.exp(log_envelope_mass)
    assert math.exp(float(envelope.log_acceptance[0])) <= acceptance <= 1
    log_start = stats.norm.logpdf(u)
    kl = integrate.trapezoid(np.exp(log_start) * (log_start + values + math.log(z)), u)
    gradient = float(np.abs(energy.evaluate(np.zeros((1, 1))).gradient[0, 0]))
    trace = (1 + 4 * ROUNDOFF) * (1 + float(excess[0]))
    assert 0 < kl <= start_divergence(trace, 1, energy.convexity, gradient)
    chains = run_chains(problem, beta, 4000, np.random.default_rng(5), 1e-9, SPACING)
    assert chains.steps == 1
    assert stats.binomtest(4000, chains.proposals, acceptance).pvalue > 1e-3


def kl_along_the_chain(problem: LogisticProblem, eta: float, start: np.ndarray, u: np.ndarray, steps: int):
    """KL(μ_k‖π) for k = 0..steps, μ₀ = ``start`` on the grid ``u``, by the chain's own kernel on the grid:
    the Gaussian step y = u + √η ξ, then the oracle's exact conditional ∝ exp(−f(u) − (u − y)²/(2η))."""
    _, energy_of = _problem_energy(problem, SKEWED_BETA_N / problem.n)
    du = u[1] - u[0]
    energy = energy_of(u)
    log_target = -(energy - energy.min())
    log_target -= math.log(np.sum(np.exp(log_target)) * du)
    y = np.arange(u[0] - 5, u[-1] + 5 + du / 2, du)
    forward = stats.norm.pdf(y[:, None], loc=u[None, :], scale=math.sqrt(eta)) * du  # (y, u)
    log_backward = -energy[:, None] - (u[:, None] - y[None, :]) ** 2 / (2 * eta)  # (u', y)
    backward = np.exp(log_backward - log_backward.max(axis=0, keepdims=True))
    backward /= backward.sum(axis=0, keepdims=True) * du
    law, divergences = start, []
    for _ in range(steps + 1):
        assert np.all(np.isfinite(law))
        inside = law > 0
        divergences.append(float(np.sum(law[inside] * (np.log(law[inside]) - log_target[inside])) * du))
        law = backward @ (forward @ law) * du
    return np.array(divergences)


def test_proximal_sampler_contracts_kl_as_the_theorem_says() -> None:
    """KL(μ_k‖π) ≤ KL(μ₀‖π)·(1 + η)^(−2k) (u-coordinates, where π is 1-strongly log-concave), checked
    on the chain's kernel wherever the bound is above the grid's accuracy (10⁻⁹):
    - the skewed posterior from the sampler's start N(0, 1) and its η;
    - a posterior whose curvature is nearly 1 (λ = 0.5) from a start 3 away, η = 0.5: there the
      bound is nearly attained (within 3× at k = 12), so a faster rate than the theorem's would fail.
    """
    problem = skewed_problem()
    excess = float(problem.gram[0, 0]) / (4 * problem.lam)
    share = oracle_share(np.array([excess]))
    eta = share / (1 - share)
    u = np.linspace(-25, 45, 2801)
    divergences = kl_along_the_chain(problem, eta, stats.norm.pdf(u), u, 60)
    bounds = divergences[0] * (1 + eta) ** (-2.0 * np.arange(61))
    checked = bounds >= 1e-9
    assert checked.sum() > 20 and np.all(divergences[checked] <= bounds[checked])

    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(20, 1))
    flat = LogisticProblem(x, np.where(x[:, 0] > 0, 1.0, -1.0), 0.5)
    u = np.linspace(-15, 15, 3001)
    divergences = kl_along_the_chain(flat, 0.5, stats.norm.pdf(u, loc=3.0), u, 30)
    bounds = divergences[0] * 1.5 ** (-2.0 * np.arange(31))
    checked = bounds >= 1e-9
    assert checked.sum() > 20 and np.all(divergences[checked] <= bounds[checked])
    assert divergences[12] >= bounds[12] / 3


def test_exact_path_matches_the_skewed_posterior() -> None:
    """The issue's case (n = 20, βn = 13.5, 1-D): exact rejection, 20,000 lattice draws, KS and tails."""
    problem = skewed_problem()
    beta = SKEWED_BETA_N / problem.n
    centre = float(problem.theta_star[0])
    chains = run_chains(problem, beta, 20_000, np.random.default_rng(11), 1e-9, SPACING)
    assert chains.steps == 1 and np.all(on_lattice(chains.released, SPACING))
    draws = chains.released[:, 0]
    assert abs(stats.skew(draws)) > 0.3  # far from the Laplace approximation
    assert_matches(draws, quadrature_cdf(problem, beta, centre - 60, centre + 120))


def test_proximal_path_matches_the_skewed_posterior(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same posterior through the proximal sampler from N(0, 1), for the steps its bound asks at TV 10⁻⁹:
    3,000 independent chains (KS catches a CDF error above 0.036)."""
    force_proximal(monkeypatch)
    problem = skewed_problem()
    beta = SKEWED_BETA_N / problem.n
    centre = float(problem.theta_star[0])
    chains = run_chains(problem, beta, 3000, np.random.default_rng(12), 1e-9, SPACING)
    assert chains.steps > 50
    assert_matches(chains.released[:, 0], quadrature_cdf(problem, beta, centre - 60, centre + 120), (0.01, 0.99))


def _undecided(share: float, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Leave a ``share`` of the coins (chosen at random) and every lattice cell to the exact path; counts them."""
    fast, nearest, picker, counted = exact_rejection._coin_fast, lattice.nearest_fast, np.random.default_rng(5), [0]

    def coins(*args):
        v, v_rad, verdict = fast(*args)
        hidden = picker.random(len(verdict)) < share
        counted[0] += int(hidden.sum())
        return v, v_rad, np.where(hidden, -1, verdict)

    def cells(*args):
        values, _ = nearest(*args)
        return values, np.ones(values.shape, dtype=bool)

    monkeypatch.setattr(exact_rejection, "_coin_fast", coins)
    monkeypatch.setattr(lattice, "nearest_fast", cells)
    return counted


@pytest.mark.parametrize(("path", "rows", "share"), [("exact", 60, 1.0), ("proximal", 6, 0.05)])
def test_forced_exact_coins_and_cells_release_the_same_lattice_points(
    path: str, rows: int, share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Coins and lattice cells decided exactly (the chain's state enclosed again from its draws, the energy in
    decimal arithmetic) give the releases the float64 decisions gave: the exact path agrees wherever the fast one
    decides, every step of the chain included. Deterministic."""
    if path == "proximal":
        force_proximal(monkeypatch)
    problem = skewed_problem()
    beta = SKEWED_BETA_N / problem.n
    fast = run_chains(problem, beta, rows, np.random.default_rng(21), 1e-9, SPACING)
    counted = _undecided(share, monkeypatch)
    exact = run_chains(problem, beta, rows, np.random.default_rng(21), 1e-9, SPACING)
    assert np.array_equal(exact.released, fast.released) and counted[0] >= rows


def two_dimensional_posterior(problem: LogisticProblem, beta: float):
    """The 2-D posterior on a 801 × 801 grid: the grid axes and the normalised cell masses."""
    centre = problem.theta_star
    spread = 12 / math.sqrt(beta * problem.n * problem.lam)
    axes = [np.linspace(c - spread, c + spread, 801) for c in centre]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    log_density = np.concatenate([problem.loss(mesh[i : i + 40_000]) for i in range(0, len(mesh), 40_000)])
    log_density = -beta * problem.n * log_density
    mass = np.exp(log_density - log_density.max()).reshape(801, 801)
    return axes, mass / mass.sum()


def assert_matches_in_two_dimensions(thetas: np.ndarray, axes, mass: np.ndarray) -> None:
    """KS on both marginals, and a χ² test on 8 × 8 cells cut at the marginals' octiles (the joint law)."""
    cuts = []
    for j in range(2):
        marginal = mass.sum(axis=1 - j)
        cdf = np.cumsum(marginal) - marginal / 2  # each grid point holds the mass of the cell around it
        assert stats.kstest(thetas[:, j], lambda t, cdf=cdf, j=j: np.interp(t, axes[j], cdf)).pvalue > 1e-3
        cuts.append(np.searchsorted(cdf, np.arange(1, 8) / 8))
    expected = np.add.reduceat(np.add.reduceat(mass, np.r_[0, cuts[0]], axis=0), np.r_[0, cuts[1]], axis=1)
    half = [(a[1] - a[0]) / 2 for a in axes]
    edges = [axes[j][np.r_[0, cuts[j]]] - half[j] for j in range(2)]
    cells = [np.clip(np.searchsorted(edges[j], thetas[:, j], side="right") - 1, 0, 7) for j in range(2)]
    observed = np.zeros((8, 8))
    np.add.at(observed, tuple(cells), 1)
    assert stats.chisquare(observed.ravel(), expected.ravel() * len(thetas)).pvalue > 1e-3


@pytest.mark.parametrize("path", ["exact", "proximal"])
def test_draws_match_a_two_dimensional_posterior(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """p = 2, n = 40 and βn = 20 (a posterior far from Gaussian): both paths against the grid."""
    if path == "proximal":
        force_proximal(monkeypatch)
    X, y = make_logistic_data(4, 40, 2)
    problem = LogisticProblem(X, y, 0.005)
    beta = 20 / problem.n
    chains = run_chains(problem, beta, 20_000 if path == "exact" else 3000, np.random.default_rng(13), 1e-9, SPACING)
    assert (chains.steps == 1) == (path == "exact")
    assert_matches_in_two_dimensions(chains.released, *two_dimensional_posterior(problem, beta))


def test_the_global_envelopes_worst_case_takes_the_proximal_path() -> None:
    """One-hot rows with balanced labels at p = 20, λ = 0.005 (tr G = 1 spread evenly: the data for
    which the public bound is reached): the exact path's certified acceptance is e^{−12.5}, so the
    proximal sampler runs, for nearly the public bound's steps. The posterior is a product of
    1-D posteriors (coordinate j sees only its 10 rows): all coordinates of 30 draws, pooled,
    against that 1-D posterior by quadrature."""
    problem = one_hot_problem(20, 5, 0.005)
    beta = 400 / problem.n
    tv = 5e-9
    chains = run_chains(problem, beta, 30, np.random.default_rng(14), tv, SPACING)
    assert proximal_steps_bound(20, 0.005, tv) - 3 <= chains.steps <= proximal_steps_bound(20, 0.005, tv)
    # Coordinate j: exp(−β·5(φ(t) + φ(−t)) − βnλt²/2), the 1-D problem on 10 rows at λ·n/10, same β.
    one = one_hot_problem(1, 5, 0.005 * problem.n / 10)
    assert stats.kstest(chains.released.ravel(), quadrature_cdf(one, beta, -30, 30)).pvalue > 1e-3


def test_public_steps_bound() -> None:
    """The bound reads only p, λ and the TV bound; exact path whenever S_pub ≤ 6; the run is refused
    beyond ``MAX_STEPS``."""
    assert proximal_steps_bound(1, 0.002, 1e-9) == 1  # S_pub = ½ log(1 + 125) ≈ 2.4 ≤ 6
    worst = 0.5 * 38 * math.log1p(ROW_BOUND**2 / (4 * 38 * 0.005))
    assert worst > EXACT_LIMIT
    share = 4 * 38 * 0.005 * math.expm1(2 / 38) / ROW_BOUND**2
    convexity = 1 - 8 * ROUNDOFF
    divergence = start_divergence(
        (1 + 4 * ROUNDOFF) * (38 + ROW_BOUND**2 / (4 * 0.005)), 38, convexity, math.sqrt(2 * MODE_TOLERANCE * 1.01)
    )
    assert proximal_steps_bound(38, 0.005, 5e-9) == mixing_steps(divergence, share / (1 - share), convexity, 2.5e-9)
    assert proximal_steps_bound(38, 0.005, 5e-9) < proximal_steps_bound(38, 0.001, 5e-9) < MAX_STEPS
    assert proximal_steps_bound(200, 1e-4, 5e-9) > MAX_STEPS
    with pytest.raises(AccFirstError, match="tv_bound"):
        proximal_steps_bound(3, 0.01, 0.0)


def test_a_rejection_loop_that_never_accepts_raises_after_its_certified_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every proposal rejected the loop stops after ⌈log(1/failure)/A⌉ proposals with a typed error."""
    problem = skewed_problem()
    fast, looked = exact_rejection._coin_fast, []

    def reject_all(*args):
        v, v_rad, verdict = fast(*args)
        looked.append(len(verdict))
        return v, v_rad, np.zeros_like(verdict)

    monkeypatch.setattr(exact_rejection, "_coin_fast", reject_all)
    beta = SKEWED_BETA_N / problem.n
    with pytest.raises(AccFirstError, match="rejected every proposal"):
        run_chains(problem, beta, 1, np.random.default_rng(0), 1e-9, SPACING)
    energy = Energy(problem, beta, posterior_mode(problem, beta))
    excess = np.array([float(problem.gram[0, 0]) / (4 * problem.lam)])
    excess += (exact_rejection.gamma(problem.n) + 4 * ROUNDOFF) * ROW_BOUND**2 * 2 / (4 * problem.lam)
    zero = np.zeros((1, 1))
    envelope = exact_rejection.certified_envelope(
        energy, zero, zero, zero, math.inf, exact_rejection.log_det_bound(excess, math.inf, 1 / energy.convexity)
    )
    cap = math.ceil(math.log(2 / 1e-9) / math.exp(float(envelope.log_acceptance[0])))
    assert cap <= sum(looked) < cap + max(looked)
