"""Certified sampling of logistic regression's Gibbs posterior with exact coins, released on a lattice.

docs/mathematics.md#the-gibbs-posterior and docs/mathematics.md#exact-coins-for-the-logistic-posterior. The target is
π(u) ∝ exp(−f(u)), f the energy of ``accfirst.erm.logistic_energy`` in coordinates u = s(θ − θ_c) (θ_c near the
minimiser of L, s = √(βnλ)). For every dataset with rows ‖x_i‖₁ ≤ 1, m·I ⪯ ∇²f ⪯ I + Σ/(4λ) (Σ = XᵀX/n, m ≈ 1).

- *Exact path (rejection).* Strong convexity puts e^{−f} under a Gaussian bump centred at −∇f(0)/m: proposals from
  it, each kept with probability e^{−D}, are exact draws from π (``_oracle_step`` with η = ∞).
- *Proximal sampler (Lee, Shen & Tian 2021), where that rate is too low.* From u₀ ~ N(0, I), alternate
  y = u + √η ξ and u ~ π(u | y) ∝ exp(−f(u) − ‖u − y‖²/(2η)), the latter exactly by the same rejection around a
  point w near its mode. The KL divergence to π contracts by (1 + ηm)⁻² a step (Chen, Chewi, Salim & Wibisono
  2022, with Bakry–Émery's log-Sobolev constant 1/m), so by Pinsker after K steps TV ≤ √(KL₀/2)·(1 + ηm)^(−K).

Every random number is ideal: Gaussians from ideal uniforms (``accfirst.mechanisms.ideal_noise``), and each coin
compares an ideal exponential variable E = −ln U with the exact D, from float64 enclosures of both where they settle
it, else exactly (``_exact_coin``: the chain's state is enclosed again from its draws, f in decimal arithmetic).
The release is the lattice point of the ideal θ = θ_c + u/s. Every rejection loop stops after a certified number of
proposals; all of them together fail with probability below half the TV budget, the mixing takes the other half.
The path and the number of steps read the data but are not released; the most steps any data can need
(``proximal_steps_bound``) depends only on p, λ and the TV bound, so a run that could need too many is refused
before the data are read.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from accfirst.erm.exact_rejection import (
    History,
    IdealGaussians,
    RejectionSampler,
    Step,
    certified_envelope,
    gamma,
    log_det_bound,
    norms,
)
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.logistic_energy import ROW_BOUND, Energy
from accfirst.errors import AccFirstError
from accfirst.mechanisms.ideal_noise import (
    GROW,
    ROUNDOFF,
    Interval,
    exact,
    multiply,
)
from accfirst.mechanisms.lattice import release_nearest
from accfirst.validation import validate_count, validate_positive

# The exact path runs when its certified acceptance rate is at least e^{−6} (≈ 0.25%): up to
# there a batch of rejection proposals costs less than the proximal sampler's steps.
EXACT_LIMIT = 6.0
# S_c of the proximal sampler's oracle: its certified acceptance is about e^{−1}.
ORACLE_LIMIT = 1.0
# The oracle's centre w is refined until c‖∇F(w)‖²/2 is at most this (at most that many passes).
CENTRE_TOLERANCE = 0.01
CENTRE_ITERATIONS = 10
# θ_c is refined by Newton's method until ½‖∇f(0)‖² is at most this.
MODE_TOLERANCE = 1e-3
MODE_ITERATIONS = 50
# The most proximal steps a run may need for any dataset: beyond, the run is refused.
MAX_STEPS = 10_000
# Chains that run together keep at most this many bytes of draws for their exact enclosures.
HISTORY_BYTES = 2**26


def oracle_share(excess: NDArray[np.float64], limit: float = ORACLE_LIMIT) -> float:
    """c in (0, 1] with ½ Σ log(1 + c·x_j) = ``limit`` (1 if even c = 1 stays below it); x = eigenvalues of Σ/(4λ)."""

    def gap(c: float) -> float:
        return 0.5 * float(np.sum(np.log1p(c * excess))) - limit

    if gap(1.0) <= 0:
        return 1.0
    return float(optimize.brentq(gap, 0.0, 1.0, xtol=1e-14, rtol=1e-12))


def mixing_steps(divergence: float, eta: float, convexity: float, tv: float) -> int:
    """Proximal steps K with √(divergence/2)·(1 + η·m)^(−K) ≤ ``tv`` (with room for float64's roundings)."""
    needed = math.log(math.sqrt(divergence / 2) / tv) / math.log1p(eta * convexity)
    return max(1, math.ceil(needed * (1 + 1e-9) + 1e-9))


def start_divergence(trace: float, p: int, convexity: float, gradient: float) -> float:
    """A bound on KL(N(0, I) ‖ π) [derived]: ½(tr H − p − p·log m) + ‖∇f(0)‖²/(2m), ∇²f ⪯ H = (1 + 4·2⁻⁵³)(I + Σ/(4λ)).

    E f ≤ f(0) + ½tr H under N(0, I) (upper curvature), log ∫e^{−f} ≤ −f(0) + ‖∇f(0)‖²/(2m) + (p/2)log(2π/m)
    (lower curvature); ``trace`` is tr H.
    """
    return 0.5 * (trace - p - p * math.log(convexity)) + gradient * gradient / (2 * convexity)


def proximal_steps_bound(p: int, lam: float, tv_bound: float) -> int:
    """The most proximal steps any logistic dataset with p features can need at λ and TV bound (1: exact path).

    Reads no data: tr Σ ≤ X₁² for rows with ‖x‖₁ ≤ X₁, so by concavity of the logarithm the exact path's
    S = ½ Σ log(1 + x_j) + ½‖∇f(0)‖² ≤ (p/2)·log(1 + X₁²/(4pλ)) + ``MODE_TOLERANCE``, the oracle's share c
    solving S_c = 1 is at least c_pub = 4pλ(e^{2/p} − 1)/X₁², and the start's divergence is at most
    ``start_divergence`` at tr H = (1 + 4·2⁻⁵³)(p + X₁²/(4λ)). K grows with the divergence and falls with c.
    """
    p = validate_count("p (features)", p, 1)
    lam = validate_positive("lam", lam)
    mixing = validate_positive("tv_bound", tv_bound) / 2
    worst = 0.5 * p * math.log1p(ROW_BOUND**2 / (4 * p * lam)) + MODE_TOLERANCE
    if worst <= EXACT_LIMIT:
        return 1
    share = min(4 * p * lam * math.expm1(2 * ORACLE_LIMIT / p) / ROW_BOUND**2, 1.0)
    if share >= 1:
        return 1
    convexity = 1.0 - 8 * ROUNDOFF
    trace = (1 + 4 * ROUNDOFF) * (p + ROW_BOUND**2 / (4 * lam))
    divergence = start_divergence(trace, p, convexity, math.sqrt(2 * MODE_TOLERANCE * 1.01))
    return mixing_steps(divergence, share / (1 - share), convexity, mixing)


def posterior_mode(problem: LogisticProblem, beta: float) -> NDArray[np.float64]:
    """θ_c with ½‖∇f(0)‖² = βn‖∇L(θ_c)‖²/(2λ) ≤ ``MODE_TOLERANCE`` (in float64; it only places the coordinates).

    θ* itself unless a public radius cut the unconstrained minimiser off (the logistic Gibbs
    posterior lives on all of R^p); then Newton's method with backtracking from θ*.
    """
    weight = beta * problem.n / (2 * problem.lam)
    theta = np.array(problem.theta_star, dtype=np.float64)
    losses, gradients = problem.loss_and_gradient(theta[None, :])
    loss, gradient = float(losses[0]), gradients[0]
    for _ in range(MODE_ITERATIONS):
        if weight * float(gradient @ gradient) <= MODE_TOLERANCE:
            return theta
        step = np.linalg.solve(problem.hessian_at(theta), gradient)
        slope = float(gradient @ step)
        scale = 1.0
        while True:
            trial = theta - scale * step
            losses, gradients = problem.loss_and_gradient(trial[None, :])
            # Near the optimum loss differences drown in rounding: the full Newton step is taken.
            if losses[0] <= loss - 1e-4 * scale * slope or slope <= 1e-12 * abs(loss) or scale < 1e-8:
                break
            scale /= 2
        theta, loss, gradient = trial, float(losses[0]), gradients[0]
    raise AccFirstError("Newton's method did not reach the logistic posterior's mode; this should not happen")


def _oracle_centre(
    energy: Energy,
    y: NDArray[np.float64],
    start: NDArray[np.float64],
    eta: float,
    share: float,
    local: NDArray[np.float64],
    majoriser: NDArray[np.float64],
) -> NDArray[np.float64]:
    """w near the mode of F(u) = f(u) + ‖u − y‖²/(2η) for each row (float64: the envelope is valid at any w).

    Steps w − M⁻¹∇F(w) from ``start``: M = ∇²f at the posterior's mode + I/η (``local``⁻¹; fast where the
    posterior is nearly Gaussian), or where that step does not lower F the majoriser I + Σ/(4λ) + I/η of F's
    Hessian (``majoriser``⁻¹), which always does. Stops when c‖∇F(w)‖²/2 ≤ ``CENTRE_TOLERANCE`` or after
    ``CENTRE_ITERATIONS`` steps: only the acceptance rate depends on how close w is.
    """
    w = start.copy()
    at = energy.evaluate(w)
    value, gradient = at.value, at.gradient
    for _ in range(CENTRE_ITERATIONS):
        pull = gradient + (w - y) / eta
        far = np.flatnonzero(share * np.einsum("kp,kp->k", pull, pull) / 2 > CENTRE_TOLERANCE)
        if not far.size:
            break
        objective = value[far] + np.einsum("kp,kp->k", w[far] - y[far], w[far] - y[far]) / (2 * eta)
        trial = w[far] - pull[far] @ local
        trial_at = energy.evaluate(trial)
        trial_value, trial_gradient = trial_at.value, trial_at.gradient
        worse = trial_value + np.einsum("kp,kp->k", trial - y[far], trial - y[far]) / (2 * eta) > objective
        if worse.any():
            trial[worse] = w[far[worse]] - pull[far[worse]] @ majoriser
            again = energy.evaluate(trial[worse])
            trial_value[worse], trial_gradient[worse] = again.value, again.gradient
        w[far], value[far], gradient[far] = trial, trial_value, trial_gradient
    return w


class Chains(NamedTuple):
    """``rows`` lattice releases and how they were made: proximal ``steps`` (1: exact rejection) and the
    ``proposals`` looked at (both read the data: for tests and benchmarks, never released)."""

    released: NDArray[np.float64]
    steps: int
    proposals: int


def run_chains(
    problem: LogisticProblem,
    beta: float,
    rows: int,
    rng: np.random.Generator,
    tv_bound: float,
    spacing: float,
) -> Chains:
    """``rows`` independent lattice releases, each within total variation ``tv_bound`` of the rounded posterior."""
    centre = posterior_mode(problem, beta)
    energy = Energy(problem, beta, centre)
    p = problem.p
    curvatures, basis = np.linalg.eigh(problem.gram)
    # The float Gram matrix is within γ_n·X₁² of XᵀX/n, its eigenvalues within 4p·2⁻⁵³ of its norm more.
    widen = (gamma(problem.n) + 4 * p * ROUNDOFF) * ROW_BOUND**2 * 2
    excess = (np.maximum(curvatures, 0.0) + widen) / (4 * problem.lam)
    at_zero = energy.evaluate(np.zeros((1, p)))
    gradient = float(norms(at_zero.gradient)[0] + at_zero.gradient_error[0])
    divergence = 0.5 * float(np.sum(np.log1p(excess))) + 0.5 * gradient**2
    zeros = np.zeros((rows, p))
    if divergence <= EXACT_LIMIT:
        history = History(None, 0.0, 1.0, 0.0)
        sampler = RejectionSampler(energy, rng, history)
        envelope = certified_envelope(
            energy, zeros, zeros, zeros, math.inf, log_det_bound(excess, math.inf, 1 / energy.convexity)
        )
        history.spread = envelope.spread
        mid, rad, cells, serials = sampler.oracle_step(envelope, rows, 0, zeros, zeros, tv_bound / 2)
        history.steps.append(Step(None, envelope.offset, cells, serials))
    else:
        share = oracle_share(excess)
        eta = share / (1 - share)
        trace = (1 + 4 * ROUNDOFF) * float(np.sum(1 + excess))
        steps = mixing_steps(
            start_divergence(trace, p, energy.convexity, gradient), eta, energy.convexity, tv_bound / 2
        )
        kick = math.sqrt(eta)
        eta = kick * kick  # the η the chain runs with: √η is what scales ξ
        local = np.asarray(np.linalg.inv(problem.hessian_at(centre) / problem.lam + np.eye(p) / eta), dtype=np.float64)
        majoriser = (basis / (1 + excess + 1 / eta)) @ basis.T
        start = IdealGaussians(rng, rows, p)
        history = History(start.cells.transpose(1, 0, 2).copy(), 0.0, 1.0, kick)
        sampler = RejectionSampler(energy, rng, history)
        c = 1 / (energy.convexity + 1 / eta)
        log_det = log_det_bound(excess, eta, c)
        mid, rad = start.mid, start.rad
        for k in range(steps):
            noise = IdealGaussians(rng, rows, p)
            y_mid = mid + kick * noise.mid
            y_rad = (rad + kick * noise.rad + 2 * ROUNDOFF * (np.abs(y_mid) + kick * np.abs(noise.mid))) * GROW
            w = _oracle_centre(energy, y_mid, mid, eta, c, local, majoriser)
            envelope = certified_envelope(energy, w, y_mid, y_rad, eta, log_det)
            history.mix, history.spread = envelope.mix, envelope.spread
            pending_cells = np.zeros((rows, 2, (p + 1) // 2), dtype=np.int64)
            step = Step(noise.cells.transpose(1, 0, 2).copy(), envelope.offset, pending_cells, np.zeros(rows, np.int64))
            history.steps.append(step)
            mid, rad, step.kept, step.serial = sampler.oracle_step(
                envelope, rows, k, y_mid, y_rad, tv_bound / (2 * steps)
            )
    inverse = 1 / energy.scale
    released = np.empty((rows, p))
    for row in range(rows):

        def coordinate(j: int, precision: int, row: int = row) -> Interval | None:
            u = history.state(sampler.bits, row, len(history.steps), p, precision)
            return None if u is None else multiply(exact(Fraction(1) / Fraction(energy.scale)), u[j])

        released[row] = release_nearest(centre, mid[row], rad[row], spacing, coordinate, inverse)
    return Chains(released, len(history.steps), sampler.proposals)


def sample_logistic_gibbs(
    problem: LogisticProblem,
    beta: float,
    rng: np.random.Generator,
    tv_bound: float,
    spacing: float,
    size: int = 1,
) -> NDArray[np.float64]:
    """``size`` independent draws from exp(−βn·L(θ)), each within total variation ``tv_bound`` of it, on the lattice
    of ``spacing`` (a (size, p) array).

    Exact rejection sampling where its certified acceptance rate is at least e^{−6}; the proximal sampler
    otherwise, run for the steps its mixing bound needs (module docstring). Half of ``tv_bound`` covers the
    rejection loops' caps, half the mixing. Chains run together in groups whose histories fit ``HISTORY_BYTES``.
    """
    if not isinstance(problem, LogisticProblem):
        raise AccFirstError("the certified Gibbs sampler is for logistic problems")
    beta = validate_positive("beta", beta)
    size = validate_count("size", size, 1)
    tv_bound = validate_positive("tv_bound", tv_bound)
    steps = proximal_steps_bound(problem.p, problem.lam, tv_bound)
    group = max(1, HISTORY_BYTES // (24 * (problem.p + 1) * steps))
    groups = range(0, size, group)
    return np.concatenate(
        [run_chains(problem, beta, min(group, size - first), rng, tv_bound, spacing).released for first in groups]
    )
