"""The Gibbs posterior as an accuracy-first method (docs/mathematics.md#the-gibbs-posterior; Minami et al. 2016, derived form).

Release one θ drawn from G_β(θ) ∝ exp(−β·n·L(θ)), L the regularised loss of
docs/mathematics.md#the-two-learning-problems (the ridge penalty plays the prior). Privacy does not need the loss to be
bounded, only L-Lipschitz per row and the posterior m-strongly log-concave (m = βnλ, also when restricted to a convex
set): the privacy loss is 2βL-Lipschitz, and Herbst's bound gives (ρ_G + 2√(ρ_G ln(1/δ)), δ)-DP with ρ_G = 2β²L²/m =
2βL²/(nλ) [derived, docs/mathematics.md#the-gibbs-posterior]. The slides' theorem gives ε = 2L√(β(1 + 2 ln(1/δ))/(nλ))
in this parametrisation (docs/mathematics.md#the-gibbs-posterior, shown for comparison). For ridge on C the loss per row
lies in [0, ½(r + 1)²], so the same sampler is also the exponential mechanism with pure ε = β(r + 1)² (δ = 0); a ridge
run reports whichever guarantee has the smaller ε (the choice reads only public numbers).

Accuracy needs no private test: for ridge exp(−βnL) is N(θ*, (βnH)⁻¹), so 2βn·R ∼ χ²_p
exactly and β = χ²_{p,1−γ}/(2nα) meets α with probability 1 − γ (docs/mathematics.md#the-gibbs-posterior). Truncating to
C (needed for the Lipschitz constant) is handled without reading the data [derived]: every
ridge problem has ‖θ_u‖ ≤ 1/(2√λ) = M/2 for its unconstrained minimiser θ_u (dot the
first-order condition with θ_u: λ‖θ_u‖² = (1/n)Σ(y_i u_i − u_i²) ≤ ¼ when |y| ≤ 1, docs/mathematics.md#the-free-radius),
so C contains {R_u ≤ α_C} with α_C = λ(r − 1/(2√λ))²/2, and
P(R > α | C) ≤ min(P(R_u > min(α, α_C)), P(R_u > α)/P(R_u ≤ α_C)) — the first from
P(A | C) ≤ P(A ∪ Cᶜ), the second the bound P(R > α)/P(C) of docs/mathematics.md#the-gibbs-posterior with a
data-independent lower bound on P(C). β is the smallest value that brings this bound to γ. With a public radius too
small for the argument (r ≤ M/2, the default radius of docs/mathematics.md#the-free-radius among them) the guarantee is
γ/P(C), and P(C) is known only as the rejection sampler's acceptance rate, which reads the data (evaluation only).

Logistic regression (L = 1 on R^p) has only approximate accuracy (the Laplace approximation
N(θ*, (βnH*)⁻¹) gives the same β) but a certified sampler (``accfirst.erm.proximal_sampler``):
exact rejection from a Gaussian envelope that strong convexity guarantees, or, where its
acceptance rate is too low, the proximal sampler, whose total-variation distance γ_TV from the
posterior after K steps follows from a theorem with explicit constants. A sampler within γ_TV
is (ε, δ_G + (e^ε + 1)γ_TV)-DP [Minami et al. 2016]; a run splits the requested δ so that
δ_G = δ/(1 + ``TV_SHARE``) and (e^ε + 1)γ_TV = TV_SHARE·δ_G: its reported δ is the one asked
for. Whether a run can release depends only on public numbers (δ > 0, and p, λ within what the
sampler can finish in ``MAX_STEPS`` steps); it is decided before the data are read.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, stats
from scipy.linalg import solve_triangular

from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.proximal_sampler import MAX_STEPS, proximal_steps_bound, sample_logistic_gibbs
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.result import RunResult, SamplerReport
from accfirst.teaching.composition import dp_to_zcdp, zcdp_to_dp
from accfirst.validation import (
    as_generator,
    validate_alpha,
    validate_count,
    validate_gamma,
    validate_positive,
    validate_probability,
)

# The calibration a logistic run reports: its accuracy rests on the Laplace approximation.
APPROXIMATE_ACCURACY = "laplace-approx"
# The calibration a ridge run reports when a public radius cuts into the posterior so far that
# only γ/P(C) bounds its failure: P(C) is estimated from the draws, so the bound reads the data.
DATA_DEPENDENT_ACCURACY = "chi-square/P(C)"
FORMS = ("derived", "slides")
# Rejection sampling on C gives up (with an error) after this many proposals: a ball that holds
# under 10⁻⁵ of the posterior leaves no accuracy bound (γ/P(C) > 1), and a shared worker is freed
# within seconds.
MAX_REJECTION_DRAWS = 100_000
REJECTION_BATCH = 1024
# Share of the requested δ that pays for the logistic sampler's total-variation bound.
TV_SHARE = 0.01


def _check_gibbs(n: int, lam: float, lipschitz: float, delta: float) -> tuple[int, float, float, float]:
    return (
        validate_count("n", n, 1),
        validate_positive("lam", lam),
        validate_positive("lipschitz (L)", lipschitz),
        validate_probability("delta", delta),
    )


def gibbs_epsilon(beta: float, n: int, lam: float, lipschitz: float, delta: float, form: str = "derived") -> float:
    """ε of the Gibbs posterior exp(−βnL) at δ (docs/mathematics.md#the-gibbs-posterior).

    ``form="derived"``: ρ_G = 2βL²/(nλ), ε = ρ_G + 2√(ρ_G ln(1/δ)) (valid for every ε).
    ``form="slides"``: the slides' theorem with m_π = βnλ, ε = 2L√(β(1 + 2 ln(1/δ))/(nλ)).

    Parameters
    ----------
    beta : inverse temperature β > 0.
    n, lam : rows and the ridge/logistic λ (the posterior is βnλ-strongly log-concave).
    lipschitz : L, the per-row Lipschitz constant of the loss (logistic 1; ridge on C: r + 1).
    delta : δ in (0, 1).
    """
    beta = validate_positive("beta", beta)
    n, lam, lipschitz, delta = _check_gibbs(n, lam, lipschitz, delta)
    if form == "derived":
        return zcdp_to_dp(2 * beta * lipschitz**2 / (n * lam), delta)
    if form == "slides":
        return 2 * lipschitz * math.sqrt(beta * (1 + 2 * math.log(1 / delta)) / (n * lam))
    raise AccFirstError(f"form must be one of {FORMS}; got {form!r}")


def gibbs_beta(epsilon: float, n: int, lam: float, lipschitz: float, delta: float, form: str = "derived") -> float:
    """The largest β whose ``gibbs_epsilon`` is ``epsilon`` (the inverse of each form)."""
    epsilon = validate_positive("epsilon", epsilon)
    n, lam, lipschitz, delta = _check_gibbs(n, lam, lipschitz, delta)
    if form == "derived":
        return dp_to_zcdp(epsilon, delta) * n * lam / (2 * lipschitz**2)
    if form == "slides":
        return (epsilon / (2 * lipschitz)) ** 2 * n * lam / (1 + 2 * math.log(1 / delta))
    raise AccFirstError(f"form must be one of {FORMS}; got {form!r}")


def exponential_mechanism_epsilon(beta: float, radius: float) -> float:
    """Pure ε = β(r + 1)² of ridge's Gibbs posterior on C = {‖θ‖ ≤ r} (docs/mathematics.md#the-gibbs-posterior, δ = 0).

    Replacing one row moves Σℓ by at most ½(r + 1)² (each ℓ ∈ [0, ½(r + 1)²] on C), and the
    exponential mechanism exp(−β·Σℓ) is 2β·½(r + 1)²-DP.
    """
    return validate_positive("beta", beta) * (validate_positive("radius", radius) + 1) ** 2


def gibbs_lipschitz(problem: Problem) -> float:
    """L of one row's loss: 1 for logistic on R^p, r + 1 for ridge on C (r = ``norm_bound``)."""
    return 1.0 if isinstance(problem, LogisticProblem) else problem.norm_bound + 1.0


def truncation_margin(lam: float, radius: float) -> float:
    """α_C = λ(r − 1/(2√λ))²/2: {R_u ≤ α_C} ⊆ C for every ridge problem (0 when r ≤ M/2) [derived].

    R_u(θ) ≥ (λ/2)‖θ − θ_u‖², so R_u ≤ α_C puts θ within √(2α_C/λ) = r − 1/(2√λ) of θ_u, and
    ‖θ_u‖ ≤ 1/(2√λ) (docs/mathematics.md#the-free-radius) keeps it in the ball of radius r.
    """
    gap = radius - 1 / (2 * math.sqrt(lam))
    return lam * gap * gap / 2 if gap > 0 else 0.0


def ridge_failure_bound(beta: float, n: int, p: int, alpha: float, alpha_c: float) -> float:
    """A data-independent bound on P(R > α | C) for ridge's truncated Gibbs posterior [derived].

    min(F̄(2βn·min(α, α_C)), F̄(2βnα)/F(2βnα_C)) with F the χ²_p distribution function; 1
    when α_C = 0 (no bound without reading the data).
    """
    chi2 = stats.chi2(p)
    scale = 2 * beta * n
    union = float(chi2.sf(scale * min(alpha, alpha_c)))
    inside = float(chi2.cdf(scale * alpha_c))
    ratio = float(chi2.sf(scale * alpha)) / inside if inside > 0 else math.inf
    return min(union, ratio, 1.0)


def chi_square_beta(n: int, p: int, alpha: float, gamma: float) -> float:
    """β = χ²_{p,1−γ}/(2nα): P(2βn·R > 2βnα) = γ for R ∼ χ²_p/(2βn) (docs/mathematics.md#the-gibbs-posterior)."""
    return float(stats.chi2.isf(gamma, p)) / (2 * n * alpha)


def ridge_beta(problem: RidgeProblem, alpha: float, gamma: float) -> tuple[float, float]:
    """The accuracy-first β for ridge on C and its data-independent failure bound (≤ γ; 1 if none).

    The smallest β with ``ridge_failure_bound`` ≤ γ; when the radius is too small for a
    data-independent bound, the χ² choice of docs/mathematics.md#the-gibbs-posterior (its guarantee is then γ/P(C)).
    Depends only on public numbers (n, p, λ, the radius, α, γ).
    """
    return _ridge_beta(
        problem.n, problem.p, problem.lam, problem.norm_bound, validate_alpha(alpha), validate_gamma(gamma)
    )


@functools.lru_cache(maxsize=1024)
def _ridge_beta(n: int, p: int, lam: float, radius: float, alpha: float, gamma: float) -> tuple[float, float]:
    alpha_c = truncation_margin(lam, radius)
    low = chi_square_beta(n, p, alpha, gamma)
    if alpha_c == 0:
        return low, 1.0
    if alpha <= alpha_c:  # {R_u ≤ α} ⊆ C: truncation cannot hurt, the χ² choice stands
        return low, gamma
    # At ``high`` the union bound alone is γ (nudged past rounding); the ratio bound may get there sooner.
    high = chi_square_beta(n, p, alpha_c, gamma) * (1 + 1e-9)

    def excess(beta: float) -> float:
        return ridge_failure_bound(beta, n, p, alpha, alpha_c) - gamma

    beta = high if excess(low) * excess(high) > 0 else optimize.brentq(excess, low, high, rtol=1e-12)
    beta = min(high, beta * (1 + 1e-9))  # on the safe side of the root
    return beta, ridge_failure_bound(beta, n, p, alpha, alpha_c)


def posterior_hessian(problem: Problem) -> NDArray[np.float64]:
    """H with G_β ≈ N(θ*, (βnH)⁻¹): exact for ridge (A/n + λI), the Laplace approximation's ∇²L(θ*) for logistic."""
    if isinstance(problem, RidgeProblem):
        return problem.hessian
    if isinstance(problem, LogisticProblem):
        return problem.hessian_at(problem.theta_star)
    raise AccFirstError(f"the Gibbs posterior is implemented for ridge and logistic problems, not {problem!r}")


@dataclass(frozen=True)
class RidgeDraws:
    """Exact draws from ridge's Gibbs posterior (truncated to C when asked).

    ``proposals`` Gaussian draws were made, ``inside`` of them in C; the first ``size`` of
    those are ``thetas``.
    """

    thetas: NDArray[np.float64]
    proposals: int
    inside: int

    @property
    def acceptance_rate(self) -> float:
        """Share of proposals inside C: an estimate of P(C) (reads the data: evaluation only)."""
        return self.inside / self.proposals


def sample_ridge_gibbs(
    problem: RidgeProblem, beta: float, size: int, rng: np.random.Generator, truncate: bool = True
) -> RidgeDraws:
    """``size`` exact draws from N(θ_u, (βnH)⁻¹), kept only inside C = {‖θ‖ ≤ r} when ``truncate``.

    θ_u = H⁻¹b/n is the unconstrained minimiser (it is θ* unless a public radius cut it off).
    Rejection sampling: the kept draws are exactly the posterior restricted to C.
    """
    if not isinstance(problem, RidgeProblem):
        raise AccFirstError("exact Gibbs sampling needs a ridge problem")
    beta = validate_positive("beta", beta)
    size = validate_count("size", size, 1)
    factor = np.linalg.cholesky(posterior_hessian(problem))
    center = np.linalg.solve(problem.hessian, problem.b / problem.n)
    scale = math.sqrt(beta * problem.n)
    kept: list[NDArray[np.float64]] = []
    proposals = inside = 0
    while inside < size:
        if proposals >= MAX_REJECTION_DRAWS:
            raise AccFirstError(
                f"the Gibbs posterior lies almost entirely outside the ball ‖θ‖ ≤ {problem.norm_bound:.4g}. "
                "The stated radius is too small for these data"
            )
        batch = max(REJECTION_BATCH, size - inside) if truncate else size
        z = rng.standard_normal((batch, problem.p))
        # H = FFᵀ, so F⁻ᵀz ∼ N(0, H⁻¹).
        thetas = center + solve_triangular(factor.T, z.T, lower=False).T / scale
        if truncate:
            thetas = thetas[np.einsum("ki,ki->k", thetas, thetas) <= problem.norm_bound**2]
        proposals += batch
        inside += len(thetas)
        kept.append(thetas)
    return RidgeDraws(np.concatenate(kept)[:size], proposals, inside)


def _ridge_guarantee(problem: RidgeProblem, beta: float, delta: float) -> tuple[float, float]:
    """(ε, δ) of ridge's Gibbs posterior on C at β: the smaller of the derived ε at δ and the pure ε.

    Both guarantees hold at once and the choice reads only public numbers; δ = 0 asks for
    the pure one.
    """
    pure = exponential_mechanism_epsilon(beta, problem.norm_bound)
    if delta == 0:
        return pure, 0.0
    derived = gibbs_epsilon(beta, problem.n, problem.lam, gibbs_lipschitz(problem), delta)
    return (pure, 0.0) if pure <= derived else (derived, delta)


def _require_delta(delta: float) -> None:
    if delta == 0:
        raise AccFirstError("the logistic Gibbs posterior has no pure-ε guarantee: choose delta > 0")


def logistic_guarantee(problem: LogisticProblem, beta: float, delta: float) -> tuple[float, float]:
    """(ε, γ_TV) of a logistic run at β whose whole δ is ``delta``; refuses a run its sampler cannot finish.

    The Gibbs posterior is (ε, δ_G)-DP at δ_G = δ/(1 + ``TV_SHARE``) (docs/mathematics.md#the-gibbs-posterior), and a
    sampler within total variation γ_TV = TV_SHARE·δ_G/(e^ε + 1) of it adds (e^ε + 1)·γ_TV
    (docs/mathematics.md#the-gibbs-posterior), so the release is (ε, δ)-DP. Reads only public numbers (n, p, λ, β, δ):
    ``AccFirstError`` when δ is 0 or when some dataset of this shape could need more than
    ``MAX_STEPS`` proximal steps (``proximal_steps_bound``).
    """
    _require_delta(delta)
    posterior_delta = delta / (1 + TV_SHARE)
    epsilon = gibbs_epsilon(beta, problem.n, problem.lam, gibbs_lipschitz(problem), posterior_delta)
    # (e^ε + 1)⁻¹ = e^{−ε}/(1 + e^{−ε}): no overflow for a large ε.
    tv = TV_SHARE * posterior_delta * math.exp(-epsilon) / (1 + math.exp(-epsilon))
    if tv == 0 or proximal_steps_bound(problem.p, problem.lam, tv) > MAX_STEPS:
        raise AccFirstError(
            f"the logistic Gibbs posterior cannot be sampled with a certified error at λ = {problem.lam:g} with "
            f"{problem.p} features (ε = {epsilon:.3g}): some data of this shape would need more than {MAX_STEPS:,} "
            "sampler steps. Choose a larger λ, fewer features or a larger α"
        )
    return epsilon, tv


def gibbs_bound(problem: Problem, alpha: float, gamma: float, delta: float = DEFAULT_DELTA) -> tuple[float, float]:
    """(ε, δ) of ``gibbs_run`` before it runs, for a privacy filter (docs/mathematics.md#the-ex-post-filter). Reads no
    data.

    Ridge: ``_ridge_guarantee`` at ``ridge_beta``. Logistic: ``logistic_guarantee`` at the
    Laplace approximation's β, whose δ is ``delta``; it raises ``AccFirstError`` for a run that
    could not release, so a filter refuses it before admission.
    """
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    delta = validate_probability("delta", delta, zero=True)
    if isinstance(problem, RidgeProblem):
        beta, _ = ridge_beta(problem, alpha, gamma)
        return _ridge_guarantee(problem, beta, delta)
    if isinstance(problem, LogisticProblem):
        epsilon, _ = logistic_guarantee(problem, chi_square_beta(problem.n, problem.p, alpha, gamma), delta)
        return epsilon, delta
    raise AccFirstError(f"the Gibbs posterior is implemented for ridge and logistic problems, not {problem!r}")


def gibbs_run(
    problem: Problem,
    alpha: float,
    gamma: float,
    delta: float = DEFAULT_DELTA,
    rng: np.random.Generator | int | None = None,
) -> RunResult:
    """One θ from the Gibbs posterior at the accuracy-first β (docs/mathematics.md#the-gibbs-posterior): no test, no
    fallback.

    Ridge: exact sampling on C at ``ridge_beta``; (ε, δ) is the derived form's at ``delta`` or
    the exponential mechanism's (ε, 0), whichever has the smaller ε (only the pure one when
    ``delta`` is 0). Logistic: the certified sampler (``sample_logistic_gibbs``) at the Laplace
    approximation's β (approximate accuracy); (ε, ``delta``) from ``logistic_guarantee``, whose
    refusals (δ = 0, a shape the sampler cannot finish) come before any data are read.

    Returns a ``RunResult`` with method "gibbs", ``eps_test`` 0, ``eps_hypothesis`` = ε, the
    run's δ, and a ``SamplerReport`` (β, acceptance rate, failure bound, steps, TV bound).
    """
    started = time.perf_counter()
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    delta = validate_probability("delta", delta, zero=True)
    rng = as_generator(rng)
    if isinstance(problem, RidgeProblem):
        beta, bound = ridge_beta(problem, alpha, gamma)
        draws = sample_ridge_gibbs(problem, beta, 1, rng)
        theta = draws.thetas[0]
        epsilon, run_delta = _ridge_guarantee(problem, beta, delta)
        # Without a data-independent bound the guarantee is γ/P(C), P(C) the acceptance rate.
        failure = bound if bound < 1 else min(gamma / draws.acceptance_rate, 1.0)
        sampler = SamplerReport(beta, draws.acceptance_rate, failure, draws.proposals, 0.0)
        generator, calibration = "gibbs-exact", "chi-square" if bound < 1 else DATA_DEPENDENT_ACCURACY
    elif isinstance(problem, LogisticProblem):
        beta = chi_square_beta(problem.n, problem.p, alpha, gamma)
        epsilon, tv = logistic_guarantee(problem, beta, delta)
        logistic = sample_logistic_gibbs(problem, beta, 1, rng, tv)
        theta, run_delta = logistic.thetas[0], delta
        sampler = SamplerReport(beta, logistic.acceptance_rate, gamma, logistic.steps, tv)
        generator, calibration = "gibbs-proximal", APPROXIMATE_ACCURACY
    else:
        raise AccFirstError(f"the Gibbs posterior is implemented for ridge and logistic problems, not {problem!r}")
    return RunResult.untested(
        problem,
        theta,
        alpha=alpha,
        started=started,
        epsilon=epsilon,
        method="gibbs",
        generator=generator,
        calibration=calibration,
        gamma=gamma,
        noise="gibbs",
        delta=run_delta,
        sampler=sampler,
    )
