"""Certified sampling of logistic regression's Gibbs posterior (docs/mathematics.md, “The Gibbs posterior”).

The target is π(θ) ∝ exp(−βn·L(θ)), L the regularised logistic loss of docs/mathematics.md#the-two-learning-problems. In
the coordinates u = s(θ − θ_c), s = √(βnλ), θ_c the minimiser of L (computed to a small gradient), the energy f(u) =
βn(L(θ) − L(θ_c)) satisfies, for every dataset with rows ‖x_i‖₁ ≤ 1:

    I ⪯ ∇²f(u) ⪯ I + G/(4λ),   G = XᵀX/n,

because ∇²L = (1/n) Σ σ'(m_i) x_i x_iᵀ + λI with 0 < σ' ≤ ¼. The lower bound makes π
1-strongly log-concave in u; both bounds give certified envelopes [derived]:

- *Exact path (rejection).* f(u) ≥ f(0) + ∇f(0)ᵀu + ½‖u‖², so N(−∇f(0), I) is an envelope of
  exp(−f); a proposal v is kept with probability exp(−D(v; 0)), D the Bregman remainder
  D(v; w) = f(v) − f(w) − ∇f(w)ᵀ(v − w) − ½‖v − w‖² ≥ 0. The kept draws are exactly π. The
  upper bound gives the acceptance rate A ≥ exp(−S − ½‖∇f(0)‖²), S = ½ log det(I + G/(4λ)).
- *Proximal sampler (Lee, Shen & Tian 2021), where that rate is too low.* Alternate
  y = u + √η ξ and u ~ π(u | y) ∝ exp(−f(u) − ‖u − y‖²/(2η)) (the restricted Gaussian oracle),
  the latter exactly by rejection from the same kind of envelope around a point w near its
  mode: proposal N(w − c∇F(w), cI), c = η/(1 + η), F(u) = f(u) + ‖u − y‖²/(2η), kept with
  probability exp(−D(v; w)); certified acceptance exp(−S_c − c‖∇F(w)‖²/2),
  S_c = ½ log det(I + cG/(4λ)). Started from μ₀ = N(0, (I + G/(4λ))⁻¹), whose KL divergence to
  π is at most S + ½‖∇f(0)‖² [derived], the chain contracts KL by (1 + η)⁻² a step for a
  1-strongly log-concave target (Chen, Chewi, Salim & Wibisono 2022, the log-Sobolev case,
  with Bakry–Émery's constant 1), so by Pinsker after K steps
  TV ≤ √((S + ½‖∇f(0)‖²)/2)·(1 + η)^(−K). η is chosen so that S_c = 1 (acceptance ≥ e⁻¹).

Exact rejection is the proximal sampler's limit η → ∞ (one step, c = 1, w = 0). Every
rejection loop stops after a certified number of proposals, so that all of them together fail
with probability below half the TV budget; the mixing takes the other half. The choice between
the paths and the number of steps read the data, but every path meets the same public TV
bound, so the release's (ε, δ) does not depend on them. The most steps any dataset can need
(``proximal_steps_bound``) depends only on p, λ and the TV bound (tr G ≤ 1), so a run the
sampler cannot finish in ``MAX_STEPS`` is refused before reading the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from accfirst.erm.logistic import LogisticProblem
from accfirst.errors import AccFirstError
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
# Proposals a rejection loop draws per pass for each draw still pending, and the most θ's one
# pass evaluates at once (an n × k matrix of margins: about 32 MB).
MAX_BATCH = 256
MARGIN_ELEMENTS = 2**22


@dataclass(frozen=True)
class LogisticDraws:
    """Draws from logistic regression's Gibbs posterior, each within total variation ``tv_bound`` of it.

    ``steps`` proximal steps per draw (1: exact rejection sampling); ``proposals`` Gaussian
    proposals were made in all, ``accepted`` of them kept (one per draw and step).
    """

    thetas: NDArray[np.float64]
    proposals: int
    accepted: int
    steps: int
    tv_bound: float

    @property
    def acceptance_rate(self) -> float:
        """Share of proposals kept (reads the data: evaluation only)."""
        return self.accepted / self.proposals


def oracle_share(excess: NDArray[np.float64], limit: float = ORACLE_LIMIT) -> float:
    """c in (0, 1] with ½ Σ log(1 + c·x_j) = ``limit`` (1 if even c = 1 stays below it); x = eigenvalues of G/(4λ)."""

    def gap(c: float) -> float:
        return 0.5 * float(np.sum(np.log1p(c * excess))) - limit

    if gap(1.0) <= 0:
        return 1.0
    return float(optimize.brentq(gap, 0.0, 1.0, xtol=1e-14, rtol=1e-12))


def mixing_steps(divergence: float, share: float, tv: float) -> int:
    """Proximal steps K with √(divergence/2)·(1 + η)^(−K) ≤ ``tv``, η = c/(1 − c) for c = ``share`` < 1."""
    eta = share / (1 - share)
    needed = math.log(math.sqrt(divergence / 2) / tv) / math.log1p(eta)
    return max(1, math.ceil(needed))


def proximal_steps_bound(p: int, lam: float, tv_bound: float) -> int:
    """The most proximal steps any logistic dataset with p features can need at λ and TV bound (1: exact path).

    Reads no data: tr G ≤ 1 for rows with ‖x‖₁ ≤ 1, so by concavity of the logarithm
    S_c ≤ (p/2)·log(1 + c/(4pλ)) for every dataset. Hence S ≤ S_pub, and the oracle's share
    c solving S_c = 1 is at least c_pub = 4pλ(e^{2/p} − 1); K grows with S and falls with c.
    """
    p = validate_count("p (features)", p, 1)
    lam = validate_positive("lam", lam)
    mixing = validate_positive("tv_bound", tv_bound) / 2
    worst = 0.5 * p * math.log1p(1 / (4 * p * lam)) + MODE_TOLERANCE
    if worst <= EXACT_LIMIT:
        return 1
    share = min(4 * p * lam * math.expm1(2 * ORACLE_LIMIT / p), 1.0)
    return 1 if share >= 1 else mixing_steps(worst, share, mixing)


class _Energy:
    """f(u) = βn(L(θ_c + u/s) − L(θ_c)) and its gradient, for batches of u (rows), in passes over the data."""

    def __init__(self, problem: LogisticProblem, beta: float, centre: NDArray[np.float64], loss: float) -> None:
        self.problem = problem
        self.temperature = beta * problem.n  # βn
        self.scale = math.sqrt(self.temperature * problem.lam)  # s
        self.centre = centre
        self.loss = loss
        self.chunk = max(1, MARGIN_ELEMENTS // problem.n)

    def theta(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.centre + u / self.scale

    def value(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        parts = [self.problem.loss(self.theta(u[i : i + self.chunk])) for i in range(0, len(u), self.chunk)]
        return self.temperature * (np.concatenate(parts) - self.loss)

    def value_and_gradient(self, u: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        values, gradients = [], []
        for i in range(0, len(u), self.chunk):
            losses, grads = self.problem.loss_and_gradient(self.theta(u[i : i + self.chunk]))
            values.append(losses)
            gradients.append(grads)
        # ∇_u f = (βn/s)·∇L = (s/λ)·∇L.
        scale = self.scale / self.problem.lam
        return self.temperature * (np.concatenate(values) - self.loss), scale * np.concatenate(gradients)


def posterior_mode(problem: LogisticProblem, beta: float) -> tuple[NDArray[np.float64], float, NDArray[np.float64]]:
    """θ_c, L(θ_c) and ∇L(θ_c) with ½‖∇f(0)‖² = βn‖∇L(θ_c)‖²/(2λ) ≤ ``MODE_TOLERANCE``.

    θ* itself unless a public radius cut the unconstrained minimiser off (the logistic Gibbs
    posterior lives on all of R^p); then Newton's method with backtracking from θ*.
    """
    weight = beta * problem.n / (2 * problem.lam)
    theta = np.array(problem.theta_star, dtype=np.float64)
    losses, gradients = problem.loss_and_gradient(theta[None, :])
    loss, gradient = float(losses[0]), gradients[0]
    for _ in range(MODE_ITERATIONS):
        if weight * float(gradient @ gradient) <= MODE_TOLERANCE:
            return theta, loss, gradient
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


def _bregman(
    energy: _Energy,
    proposals: NDArray[np.float64],
    anchor: NDArray[np.float64],
    anchor_value: NDArray[np.float64],
    anchor_gradient: NDArray[np.float64],
) -> NDArray[np.float64]:
    """D(v; w) = f(v) − f(w) − ∇f(w)ᵀ(v − w) − ½‖v − w‖² (≥ 0 up to rounding) for proposals shaped (m, b, p)."""
    m, b, p = proposals.shape
    values = energy.value(proposals.reshape(m * b, p)).reshape(m, b)
    step = proposals - anchor[:, None, :]
    linear = np.einsum("mbp,mp->mb", step, anchor_gradient)
    divergence: NDArray[np.float64] = (
        values - anchor_value[:, None] - linear - 0.5 * np.einsum("mbp,mbp->mb", step, step)
    )
    return divergence


def _squares(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """‖r‖² of each row."""
    squares: NDArray[np.float64] = np.einsum("kp,kp->k", rows, rows)
    return squares


def _oracle_centre(
    energy: _Energy,
    y: NDArray[np.float64],
    start: NDArray[np.float64],
    eta: float,
    share: float,
    local: NDArray[np.float64],
    majoriser: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """w near the mode of F(u) = f(u) + ‖u − y‖²/(2η) for each row, with f(w) and ∇f(w).

    Steps w − M⁻¹∇F(w) from ``start``: M = ∇²f at the posterior's mode + I/η (``local``⁻¹;
    fast where the posterior is nearly Gaussian), or where that step does not lower F the
    majoriser I + G/(4λ) + I/η of F's Hessian (``majoriser``⁻¹), which always does. Stops
    when c‖∇F(w)‖²/2 ≤ ``CENTRE_TOLERANCE`` or after ``CENTRE_ITERATIONS`` steps: the
    envelope is valid at any w, only its acceptance rate depends on how close w is.
    """
    w = start.copy()
    value, gradient = energy.value_and_gradient(w)
    for _ in range(CENTRE_ITERATIONS):
        pull = gradient + (w - y) / eta
        far = np.flatnonzero(share * _squares(pull) / 2 > CENTRE_TOLERANCE)
        if not far.size:
            break
        objective = value[far] + _squares(w[far] - y[far]) / (2 * eta)
        trial = w[far] - pull[far] @ local
        trial_value, trial_gradient = energy.value_and_gradient(trial)
        worse = trial_value + _squares(trial - y[far]) / (2 * eta) > objective
        if worse.any():
            trial[worse] = w[far[worse]] - pull[far[worse]] @ majoriser
            trial_value[worse], trial_gradient[worse] = energy.value_and_gradient(trial[worse])
        w[far], value[far], gradient[far] = trial, trial_value, trial_gradient
    return w, value, gradient


def _reject(
    energy: _Energy,
    anchor: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]],
    mean: NDArray[np.float64],
    spread: float,
    log_acceptance: NDArray[np.float64],
    failure: float,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], int]:
    """One exact draw per row from ∝ exp(−f(v) − (quadratic)) by rejection from N(mean, spread²I).

    ``anchor`` is (w, f(w), ∇f(w)) of each row's envelope; a proposal v is kept with
    probability exp(−D(v; w)). Row i stops after ⌈log(1/failure)/A_i⌉ proposals, A_i =
    exp(``log_acceptance``) its certified acceptance rate, so it fails with probability
    ≤ (1 − A_i)^N ≤ ``failure``; a failure raises ``AccFirstError``. Returns the draws and the
    proposals looked at.
    """
    rows, p = mean.shape
    rates = np.exp(log_acceptance)
    caps = np.ceil(math.log(1 / failure) / rates)
    batch = np.clip(np.ceil(2 / rates), 1, MAX_BATCH).astype(int)
    draws = np.empty_like(mean)
    used = np.zeros(rows)
    pending = np.arange(rows)
    while pending.size:
        size = int(batch[pending].max())
        proposals = mean[pending, None, :] + spread * rng.standard_normal((pending.size, size, p))
        remainder = _bregman(energy, proposals, *(part[pending] for part in anchor))
        order = used[pending, None] + np.arange(size)
        kept = (np.log(rng.random(remainder.shape)) < -remainder) & (order < caps[pending, None])
        hit = kept.any(axis=1)
        first = np.argmax(kept, axis=1)
        draws[pending[hit]] = proposals[hit, first[hit]]
        used[pending] = np.minimum(np.where(hit, used[pending] + first + 1, used[pending] + size), caps[pending])
        exhausted = ~hit & (used[pending] >= caps[pending])
        if exhausted.any():
            raise AccFirstError(
                "the Gibbs posterior's certified sampler rejected every proposal it may make (an event of "
                f"probability below {failure:.2g}, counted in the run's δ); run it again"
            )
        pending = pending[~hit]
    return draws, int(used.sum())


def sample_logistic_gibbs(
    problem: LogisticProblem, beta: float, size: int, rng: np.random.Generator, tv_bound: float
) -> LogisticDraws:
    """``size`` independent draws from exp(−βn·L(θ)), each within total variation ``tv_bound`` of it.

    Exact rejection sampling where its certified acceptance rate is at least e^{−6}; the
    proximal sampler otherwise, run for the steps its mixing bound needs (module docstring,
    docs/mathematics.md). Half of ``tv_bound`` covers the rejection loops' caps, half the mixing.
    """
    if not isinstance(problem, LogisticProblem):
        raise AccFirstError("the certified Gibbs sampler is for logistic problems")
    beta = validate_positive("beta", beta)
    size = validate_count("size", size, 1)
    tv_bound = validate_positive("tv_bound", tv_bound)
    centre, loss, _ = posterior_mode(problem, beta)
    energy = _Energy(problem, beta, centre, loss)
    curvatures, basis = np.linalg.eigh(problem.gram)
    excess = np.maximum(curvatures, 0.0) / (4 * problem.lam)  # eigenvalues of G/(4λ)
    zero = np.zeros((size, problem.p))
    value, gradient = energy.value_and_gradient(zero[:1])
    divergence = 0.5 * float(np.sum(np.log1p(excess))) + 0.5 * float(gradient[0] @ gradient[0])
    if divergence <= EXACT_LIMIT:
        anchor = (zero, np.repeat(value, size), np.repeat(gradient, size, axis=0))
        rates = np.full(size, -divergence)
        u, proposals = _reject(energy, anchor, -anchor[2], 1.0, rates, tv_bound / 2, rng)
        return LogisticDraws(energy.theta(u), proposals, size, 1, tv_bound)
    share = oracle_share(excess)
    eta = share / (1 - share)
    steps = mixing_steps(divergence, share, tv_bound / 2)
    oracle_log_det = 0.5 * float(np.sum(np.log1p(share * excess)))
    local = np.asarray(
        np.linalg.inv(problem.hessian_at(centre) / problem.lam + np.eye(problem.p) / eta), dtype=np.float64
    )
    majoriser = (basis / (1 + excess + 1 / eta)) @ basis.T
    u = (rng.standard_normal((size, problem.p)) / np.sqrt(1 + excess)) @ basis.T
    proposals = 0
    for _ in range(steps):
        y = u + math.sqrt(eta) * rng.standard_normal(u.shape)
        w, value, gradient = _oracle_centre(energy, y, u, eta, share, local, majoriser)
        pull = gradient + (w - y) / eta
        rates = -(oracle_log_det + share * _squares(pull) / 2)
        failure = tv_bound / (2 * steps)
        u, used = _reject(energy, (w, value, gradient), w - share * pull, math.sqrt(share), rates, failure, rng)
        proposals += used
    return LogisticDraws(energy.theta(u), proposals, size * steps, steps, tv_bound)
