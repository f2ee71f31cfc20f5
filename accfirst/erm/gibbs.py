"""The Gibbs posterior as an accuracy-first method (docs/mathematics.md#the-gibbs-posterior; Minami et al. 2016, derived form).

Release one θ drawn from G_β(θ) ∝ exp(−β·n·L(θ)), L the regularised loss of docs/mathematics.md#the-two-learning-problems
(the ridge penalty plays the prior), rounded to a lattice (docs/mathematics.md#the-gibbs-posterior-on-a-lattice). Its
(ε, δ) is the Gaussian privacy profile of ``accfirst.erm.gibbs_privacy``; for ridge on a ball the pure ε of the
exponential mechanism too, and a run reports whichever is smaller (the choice reads only public numbers).

Accuracy needs no private test: for ridge exp(−βnL) is N(θ*, (βnH)⁻¹), so 2βn·R ∼ χ²_p exactly and
β = χ²_{p,1−γ}/(2nα) meets α with probability 1 − γ (docs/mathematics.md#the-gibbs-posterior). The ridge posterior is
kept on a ball ‖θ‖ ≤ ρ (needed for its privacy), handled without reading the data [derived]: every ridge problem has
‖θ_u‖ ≤ 1/(2√λ) = M/2 for its unconstrained minimiser θ_u (docs/mathematics.md#the-free-radius), so the ball contains
{R_u ≤ α_C} with α_C = λ(ρ − M/2)²/2, and P(R > α | ball) ≤ min(P(R_u > min(α, α_C)), P(R_u > α)/P(R_u ≤ α_C)). β is
the smallest value that brings this bound to γ, and ρ ∈ (M/2, r] the one that makes ε least (``ridge_plan``). A
radius r ≤ M/2 leaves no bound that reads no data: such a run is refused before the data are read.

Logistic regression has only approximate accuracy (the Laplace approximation N(θ*, (βnH*)⁻¹) gives the same β) but a
certified sampler (``accfirst.erm.proximal_sampler``) within total variation γ_TV of the posterior, which is
(ε, δ_G + (e^ε + 1)γ_TV)-DP [Minami et al. 2016]; a run splits the requested δ so that δ_G = δ/(1 + ``TV_SHARE``)
and (e^ε + 1)γ_TV = TV_SHARE·δ_G. Whether a run can release depends only on public numbers; it is decided before the
data are read. Rounding to the lattice moves θ by at most g√p/2 with g ≤ 2⁻¹⁶ of the posterior's narrowest spread:
the excess risk's square root by at most 2⁻¹⁷√(p/(2βn)), which β is raised to absorb (``lattice_alpha``).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from accfirst.erm.gibbs_privacy import (
    exponential_mechanism_epsilon,
    gibbs_epsilon,
    logistic_gradient_gap,
    ridge_gradient_gap,
)
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.proximal_sampler import MAX_STEPS, proximal_steps_bound, sample_logistic_gibbs
from accfirst.erm.ridge import RidgeProblem
from accfirst.erm.ridge_sampler import BallSampler, ball_sampler, sample_on_lattice
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.lattice import lattice_spacing
from accfirst.result import RunResult, SamplerReport
from accfirst.validation import as_generator, validate_alpha, validate_gamma, validate_probability

# The calibration a logistic run reports: its accuracy rests on the Laplace approximation.
APPROXIMATE_ACCURACY = "laplace-approx"
# Share of the requested δ that pays for the logistic sampler's total-variation bound.
TV_SHARE = 0.01
# The ball's radius ρ is chosen among this many candidates between M/2 and the largest useful radius.
RADIUS_CANDIDATES = 48
# The most proposals a ridge run may need (public): beyond, the run is refused before the data are read.
MAX_PROPOSALS = 2_000_000
# Room for the float64 centre and factor of the ridge proposals in the public acceptance bound.
ACCEPTANCE_ROOM = 0.99
# The lattice is 2⁻¹⁶ of the narrowest spread or finer (accfirst.mechanisms.lattice): half a step of
# the excess risk's square root per coordinate, ≤ 2⁻¹⁷√(p/(2βn)) in all.
LATTICE_SHIFT = 2.0**-17
# The most proposals the Learn page's illustration draws at one β (evaluation only: about a second).
ILLUSTRATION_PROPOSALS = 40_000


def truncation_margin(lam: float, radius: float) -> float:
    """α_C = λ(ρ − 1/(2√λ))²/2: {R_u ≤ α_C} lies in the ball ‖θ‖ ≤ ρ for every ridge problem (0 when ρ ≤ M/2) [derived].

    R_u(θ) ≥ (λ/2)‖θ − θ_u‖², so R_u ≤ α_C puts θ within √(2α_C/λ) = ρ − 1/(2√λ) of θ_u, and
    ‖θ_u‖ ≤ 1/(2√λ) (docs/mathematics.md#the-free-radius) keeps it in the ball.
    """
    gap = radius - 1 / (2 * math.sqrt(lam))
    return lam * gap * gap / 2 if gap > 0 else 0.0


def ridge_failure_bound(beta: float, n: int, p: int, alpha: float, alpha_c: float) -> float:
    """A data-independent bound on P(R > α | ball) for ridge's truncated Gibbs posterior [derived].

    min(F̄(2βn·min(α, α_C)), F̄(2βnα)/F(2βnα_C)) with F the χ²_p distribution function; 1
    when α_C = 0 (no bound without reading the data).
    """
    scale = 2 * beta * n
    union = float(special.chdtrc(p, scale * min(alpha, alpha_c)))
    inside = float(special.chdtr(p, scale * alpha_c))
    ratio = float(special.chdtrc(p, scale * alpha)) / inside if inside > 0 else math.inf
    return min(union, ratio, 1.0)


def chi_square_beta(n: int, p: int, alpha: float, gamma: float) -> float:
    """β = χ²_{p,1−γ}/(2nα): P(2βn·R > 2βnα) = γ for R ∼ χ²_p/(2βn) (docs/mathematics.md#the-gibbs-posterior)."""
    return float(special.chdtri(p, gamma)) / (2 * n * alpha)


def lattice_alpha(alpha: float, beta: float, n: int, p: int) -> float:
    """The target an unrounded draw must meet for its lattice point to meet α: (√α − 2⁻¹⁷√(p/(2βn)))².

    √R is a norm of θ − θ*, and the lattice moves θ by at most g√p/2 with g ≤ 2⁻¹⁶/√(βn·c), c ≥ the
    largest curvature of L (1 + λ for ridge, ¼ + λ for logistic): √R moves by at most √(c/2)·g√p/2.
    It grows with β, so a β planned for it at a smaller β stays valid (docs/mathematics.md#the-gibbs-posterior-on-a-lattice).
    """
    root = math.sqrt(alpha) - LATTICE_SHIFT * math.sqrt(p / (2 * beta * n))
    if root <= 0:
        raise AccFirstError(f"α = {alpha:g} is too small for the Gibbs posterior's lattice: choose a larger α")
    return root * root


def _ridge_beta(n: int, p: int, lam: float, radius: float, alpha: float, gamma: float) -> tuple[float, float]:
    """The smallest β whose ``ridge_failure_bound`` at α is at most γ, and that bound (1 when ρ ≤ M/2)."""
    alpha_c = truncation_margin(lam, radius)
    low = chi_square_beta(n, p, alpha, gamma)
    if alpha_c == 0:
        return low, 1.0
    if alpha <= alpha_c:  # {R_u ≤ α} lies in the ball: truncation cannot hurt, the χ² choice stands
        return low, gamma
    # At ``high`` the union bound alone is γ (nudged past rounding); the ratio bound may get there sooner.
    high = chi_square_beta(n, p, alpha_c, gamma) * (1 + 1e-9)

    def excess(beta: float) -> float:
        return ridge_failure_bound(beta, n, p, alpha, alpha_c) - gamma

    beta = high if excess(low) * excess(high) > 0 else optimize.brentq(excess, low, high, rtol=1e-12)
    beta = min(high, beta * (1 + 1e-9))  # on the safe side of the root
    return beta, ridge_failure_bound(beta, n, p, alpha, alpha_c)


@dataclass(frozen=True)
class RidgePlan:
    """Everything a ridge Gibbs run fixes before it reads the data (docs/mathematics.md#the-gibbs-posterior-on-a-lattice):
    the ``sampler`` (β, the ball, the lattice, the proposal cap), ``failure_bound`` ≥ P(R > α) of the release, and
    its guarantee (``epsilon``, ``delta``)."""

    sampler: BallSampler
    failure_bound: float
    epsilon: float
    delta: float


def _acceptance(n: int, p: int, lam: float, beta: float, radius: float) -> float:
    """A public lower bound on the share of every posterior in the ball: it holds {R_u ≤ α_C}
    (``truncation_margin``), which has probability F_χ²_p(2βnα_C); ``ACCEPTANCE_ROOM`` of it."""
    return ACCEPTANCE_ROOM * float(special.chdtr(p, 2 * beta * n * truncation_margin(lam, radius)))


def _ball(n: int, p: int, lam: float, beta: float, radius: float) -> BallSampler | None:
    """The ball sampler at β, or ``None`` when its proposals could exceed ``MAX_PROPOSALS``."""
    acceptance = _acceptance(n, p, lam, beta, radius)
    if acceptance <= 0:
        return None
    sampler = ball_sampler(n, p, lam, beta, radius, acceptance)
    return sampler if sampler.cap <= MAX_PROPOSALS else None


def _logistic_spacing(beta: float, n: int, lam: float) -> float:
    """2⁻¹⁶ of the logistic posterior's narrowest spread 1/√(βn(¼ + λ)), or finer (``lattice_spacing``)."""
    return lattice_spacing(1 / math.sqrt(beta * n * (0.25 + lam)))


def _ridge_candidate(
    n: int, p: int, lam: float, radius: float, alpha: float, gamma: float, delta: float
) -> RidgePlan | None:
    """The plan on the ball of ``radius``, or ``None`` when its proposals could exceed ``MAX_PROPOSALS``."""
    plain, _ = _ridge_beta(n, p, lam, radius, alpha, gamma)
    target = lattice_alpha(alpha, plain, n, p)
    beta, bound = _ridge_beta(n, p, lam, radius, target, gamma)
    sampler = _ball(n, p, lam, beta, radius)
    alpha_c = truncation_margin(lam, radius)
    if sampler is None and target > alpha_c > 0:
        # The ratio bound's β can leave the ball a tiny public share of the posterior; the union bound's larger
        # β, F̄(2βnα_C) = γ, leaves it at least 1 − γ.
        beta = max(beta, chi_square_beta(n, p, alpha_c, gamma) * (1 + 1e-9))
        bound = ridge_failure_bound(beta, n, p, target, alpha_c)
        sampler = _ball(n, p, lam, beta, radius)
    if sampler is None:
        return None
    epsilon, run_delta = exponential_mechanism_epsilon(beta, p, radius), 0.0
    if delta > 0:
        derived = gibbs_epsilon(beta, n, lam, ridge_gradient_gap(p, radius), delta)
        epsilon, run_delta = (epsilon, 0.0) if epsilon <= derived else (derived, delta)
    return RidgePlan(sampler, bound, sampler.epsilon(epsilon), run_delta)


@functools.lru_cache(maxsize=1024)
def _ridge_plan(n: int, p: int, lam: float, radius: float, alpha: float, gamma: float, delta: float) -> RidgePlan:
    half = 1 / (2 * math.sqrt(lam))
    if radius <= half:
        raise AccFirstError(
            f"the ridge Gibbs posterior needs a radius above M/2 = {half:.4g} (given ‖θ‖ ≤ {radius:.4g}): below it "
            "no bound known before the data are read keeps the posterior on the ball or certifies its accuracy. "
            "Give a larger radius, or none"
        )
    # Beyond M/2 + √(2α/λ) the ball already holds {R_u ≤ α}: a larger one only widens the privacy loss.
    top = min(radius, half + math.sqrt(2 * alpha / lam))

    def plan_at(share: float) -> RidgePlan | None:
        return _ridge_candidate(n, p, lam, half + (top - half) * share, alpha, gamma, delta)

    shares = np.geomspace(2.0**-10, 1.0, RADIUS_CANDIDATES)
    plans = {k: plan for k, share in enumerate(shares) if (plan := plan_at(float(share))) is not None}
    if not plans:
        raise AccFirstError(
            f"the ridge Gibbs posterior at λ = {lam:g} with {p} features and α = {alpha:g} could need more than "
            f"{MAX_PROPOSALS:,} proposals for some data. Choose a larger λ or a larger α"
        )
    best = min(plans, key=lambda k: plans[k].epsilon)
    # The least ε between the best candidate's neighbours (ε is smooth in the radius there).
    low, high = shares[max(best - 1, 0)], shares[min(best + 1, len(shares) - 1)]

    def epsilon_at(share: float) -> float:
        plan = plan_at(share)
        return math.inf if plan is None else plan.epsilon

    refined = plan_at(float(optimize.minimize_scalar(epsilon_at, bounds=(low, high), method="bounded").x))
    return refined if refined is not None and refined.epsilon < plans[best].epsilon else plans[best]


def ridge_plan(problem: RidgeProblem, alpha: float, gamma: float, delta: float) -> RidgePlan:
    """The public plan of a ridge Gibbs run (``RidgePlan``): β, the ball, the lattice and (ε, δ). Reads no data.

    Among radii ρ in (M/2, r] it takes the one whose (ε, δ) — the smaller of the exponential mechanism's pure ε
    and the Gaussian profile's ε at ``delta``, or the pure one when ``delta`` is 0 — is least. Refuses r ≤ M/2
    and a shape whose proposals could exceed ``MAX_PROPOSALS`` (``AccFirstError``).
    """
    return _ridge_plan(
        problem.n,
        problem.p,
        problem.lam,
        problem.norm_bound,
        validate_alpha(alpha),
        validate_gamma(gamma),
        validate_probability("delta", delta, zero=True),
    )


@dataclass(frozen=True)
class LogisticPlan:
    """Everything a logistic Gibbs run fixes before it reads the data: β, (ε, δ), γ_TV and the lattice spacing."""

    beta: float
    epsilon: float
    delta: float
    tv_bound: float
    spacing: float


@functools.lru_cache(maxsize=1024)
def _logistic_plan(n: int, p: int, lam: float, alpha: float, gamma: float, delta: float) -> LogisticPlan:
    if delta == 0:
        raise AccFirstError("the logistic Gibbs posterior has no pure-ε guarantee: choose delta > 0")
    beta = chi_square_beta(n, p, lattice_alpha(alpha, chi_square_beta(n, p, alpha, gamma), n, p), gamma)
    posterior_delta = delta / (1 + TV_SHARE)
    epsilon = gibbs_epsilon(beta, n, lam, logistic_gradient_gap(p), posterior_delta)
    # (e^ε + 1)⁻¹ = e^{−ε}/(1 + e^{−ε}): no overflow for a large ε.
    tv = TV_SHARE * posterior_delta * math.exp(-epsilon) / (1 + math.exp(-epsilon))
    if tv == 0 or proximal_steps_bound(p, lam, tv) > MAX_STEPS:
        raise AccFirstError(
            f"the logistic Gibbs posterior cannot be sampled with a certified error at λ = {lam:g} with {p} "
            f"features (ε = {epsilon:.3g}): some data of this shape would need more than {MAX_STEPS:,} sampler "
            "steps. Choose a larger λ, fewer features or a larger α"
        )
    return LogisticPlan(beta, epsilon, delta, tv, _logistic_spacing(beta, n, lam))


def logistic_plan(problem: LogisticProblem, alpha: float, gamma: float, delta: float) -> LogisticPlan:
    """The public plan of a logistic Gibbs run (``LogisticPlan``), from n, p, λ, α, γ and δ only.

    The Gibbs posterior is (ε, δ_G)-DP at δ_G = δ/(1 + ``TV_SHARE``) and a sampler within total variation
    γ_TV = TV_SHARE·δ_G/(e^ε + 1) of it adds (e^ε + 1)·γ_TV, so the release is (ε, δ)-DP. Refuses δ = 0 and a
    shape some data of which could need more than ``MAX_STEPS`` proximal steps (``AccFirstError``).
    """
    return _logistic_plan(
        problem.n,
        problem.p,
        problem.lam,
        validate_alpha(alpha),
        validate_gamma(gamma),
        validate_probability("delta", delta, zero=True),
    )


def gibbs_bound(problem: Problem, alpha: float, gamma: float, delta: float = DEFAULT_DELTA) -> tuple[float, float]:
    """(ε, δ) of ``gibbs_run`` before it runs, for a privacy filter (docs/mathematics.md#the-ex-post-filter). Reads no
    data; raises ``AccFirstError`` for a run that would be refused, so a filter refuses it before admission."""
    if isinstance(problem, RidgeProblem):
        ridge = ridge_plan(problem, alpha, gamma, delta)
        return ridge.epsilon, ridge.delta
    if isinstance(problem, LogisticProblem):
        logistic = logistic_plan(problem, alpha, gamma, delta)
        return logistic.epsilon, logistic.delta
    raise AccFirstError(f"the Gibbs posterior is implemented for ridge and logistic problems, not {problem!r}")


def posterior_hessian(problem: Problem) -> NDArray[np.float64]:
    """H with G_β ≈ N(θ*, (βnH)⁻¹): exact for ridge (A/n + λI), the Laplace approximation's ∇²L(θ*) for logistic."""
    if isinstance(problem, RidgeProblem):
        return problem.hessian
    if isinstance(problem, LogisticProblem):
        return problem.hessian_at(problem.theta_star)
    raise AccFirstError(f"the Gibbs posterior is implemented for ridge and logistic problems, not {problem!r}")


def posterior_draws(
    problem: Problem, beta: float, size: int, rng: np.random.Generator, plan: RidgePlan | LogisticPlan
) -> NDArray[np.float64]:
    """Up to ``size`` lattice draws of the posterior at any β with a run's ``plan`` (its ball, or its TV bound): what
    the Learn page shows as β grows (evaluation only). The lattice follows β. Ridge draws come from at most
    ``ILLUSTRATION_PROPOSALS`` proposals in all, and only those inside the ball are kept: at a small β the ball may
    hold too little of the posterior for ``size`` of them (``len`` of the result says how many)."""
    if isinstance(problem, RidgeProblem) and isinstance(plan, RidgePlan):
        radius = plan.sampler.radius
        acceptance = max(_acceptance(problem.n, problem.p, problem.lam, beta, radius), 1 / MAX_PROPOSALS)
        ball = ball_sampler(problem.n, problem.p, problem.lam, beta, radius, acceptance)
        return sample_on_lattice(problem, ball, rng, size, budget=ILLUSTRATION_PROPOSALS)
    if isinstance(problem, LogisticProblem) and isinstance(plan, LogisticPlan):
        spacing = _logistic_spacing(beta, problem.n, problem.lam)
        return sample_logistic_gibbs(problem, beta, rng, plan.tv_bound, spacing, size)
    raise AccFirstError(f"no Gibbs plan {plan!r} for {problem!r}")


def gibbs_run(
    problem: Problem,
    alpha: float,
    gamma: float,
    delta: float = DEFAULT_DELTA,
    rng: np.random.Generator | int | None = None,
) -> RunResult:
    """One θ from the Gibbs posterior at the accuracy-first β, on a lattice (docs/mathematics.md#the-gibbs-posterior):
    no test, no fallback.

    Ridge: exact sampling on the ball of ``ridge_plan`` (pure ε, or the Gaussian profile's (ε, δ) when smaller).
    Logistic: the certified sampler (``sample_logistic_gibbs``) at the Laplace approximation's β (approximate
    accuracy); (ε, ``delta``) from ``logistic_plan``. Every refusal comes before any data are read.

    Returns a ``RunResult`` with method "gibbs", ``eps_test`` 0, ``eps_hypothesis`` = ε, the run's δ, and a
    ``SamplerReport`` of public numbers only (β, the ball, failure bound, TV bound, lattice spacing).
    """
    started = time.perf_counter()
    rng = as_generator(rng)
    if isinstance(problem, RidgeProblem):
        ridge = ridge_plan(problem, alpha, gamma, delta)
        settings = ridge.sampler
        theta = sample_on_lattice(problem, settings, rng)[0]
        epsilon, run_delta = ridge.epsilon, ridge.delta
        sampler = SamplerReport(settings.beta, settings.radius, ridge.failure_bound, 0.0, settings.spacing)
        generator, calibration = "gibbs-exact", "chi-square"
    elif isinstance(problem, LogisticProblem):
        logistic = logistic_plan(problem, alpha, gamma, delta)
        theta = sample_logistic_gibbs(problem, logistic.beta, rng, logistic.tv_bound, logistic.spacing)[0]
        epsilon, run_delta = logistic.epsilon, logistic.delta
        sampler = SamplerReport(logistic.beta, math.inf, gamma, logistic.tv_bound, logistic.spacing)
        generator, calibration = "gibbs-proximal", APPROXIMATE_ACCURACY
    else:
        raise AccFirstError(f"the Gibbs posterior is implemented for ridge and logistic problems, not {problem!r}")
    return RunResult.untested(
        problem,
        theta,
        alpha=validate_alpha(alpha),
        started=started,
        epsilon=epsilon,
        method="gibbs",
        generator=generator,
        calibration=calibration,
        gamma=validate_gamma(gamma),
        noise="gibbs",
        delta=run_delta,
        sampler=sampler,
    )
