"""Ridge regression's Gibbs posterior on a ball, drawn exactly and released on a lattice; it never gives up.

docs/mathematics.md#the-gibbs-posterior-on-a-lattice [derived]. The posterior exp(−β·n·L(θ)) is the Gaussian
N(θ_u, (βnH)⁻¹), H = A/n + λI, θ_u = H⁻¹b/n; the run keeps it on the ball ‖θ‖ ≤ r. A proposal is
θ = θ_u + Bz with B = F⁻ᵀ/√(βn) (H = FFᵀ; θ_u and B are computed in float64, like every statistic a release is
made from) and z ideal standard Gaussian noise (``accfirst.mechanisms.ideal_noise``): the ball test and the
released lattice point g·⌊θ/g + ½⌋ are decided on the ideal θ, from float64 enclosures where they settle it and
exactly otherwise. The first proposal inside the ball is released, so the release is exactly the rounding of
a draw from the Gaussian restricted to the ball.

The number of proposals is capped by a public number N, chosen so that all N miss the ball with probability at
most φ (each lands inside with probability at least a public A, ``RidgePlan.acceptance``); then the lattice point
0 is released. That outcome has probability ≤ φ under every dataset, and the point 0 has probability ≥ 1/K₀
under every posterior (``fallback_weight``), so it adds log(1 + φK₀e^{−ε}) − log(1 − φ) to ε and nothing to δ;
N makes φK₀ ≤ 2⁻⁴⁰. The run never stops with an error after reading the data.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import partial

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

from accfirst.erm.ridge import RidgeProblem
from accfirst.mechanisms.draws import own_generator
from accfirst.mechanisms.ideal_noise import (
    GROW,
    ROUNDOFF,
    Interval,
    UniformBits,
    add,
    draw_gaussian,
    exact,
    gaussian_exact,
    gaussian_fast,
    multiply,
    resolve,
)
from accfirst.mechanisms.lattice import lattice_spacing, release_nearest

# Proposals drawn per pass: enough that a pass nearly always holds one inside the ball (two per release
# still to make for many releases, at most ``MAX_PASS``).
PROPOSAL_BATCH = 64
MAX_PASS = 2**16
# φK₀ ≤ 2⁻⁴⁰: the cap's fallback adds at most 2⁻⁴⁰ to e^ε.
FALLBACK_BITS = 40


def fallback_weight(beta: float, n: int, p: int, lam: float, spacing: float) -> float:
    """log K₀ with K₀ ≥ 1/P(the lattice point 0) under every ridge posterior on a ball holding its cell [derived].

    The density of the posterior on the ball is at least (2π)^{−p/2}det(βnH)^{1/2}exp(−½(θ − θ_u)ᵀβnH(θ − θ_u))
    (its normaliser is at most the Gaussian's), with βnλ·I ⪯ βnH ⪯ βn(1 + λ)·I (rows ‖x‖₂ ≤ 1) and
    ‖θ − θ_u‖ ≤ 1/(2√λ) + g√p/2 on the cell [−g/2, g/2]^p of 0 (‖θ_u‖ ≤ M/2, docs/mathematics.md#the-free-radius).
    """
    reach = 0.5 / math.sqrt(lam) + spacing * math.sqrt(p) / 2
    return (
        -p * math.log(spacing)
        - 0.5 * p * math.log(beta * n * lam / (2 * math.pi))
        + 0.5 * beta * n * (1 + lam) * reach * reach
    )


def proposal_cap(acceptance: float, log_weight: float) -> int:
    """N with (1 − A)^N ≤ e^{−NA} ≤ φ and φK₀ ≤ 2^−``FALLBACK_BITS``."""
    return max(1, math.ceil((log_weight + FALLBACK_BITS * math.log(2)) / acceptance))


@dataclass(frozen=True)
class BallSampler:
    """The public settings of ``sample_on_lattice`` at one β and ball: the lattice ``spacing`` (2⁻¹⁶ of the narrowest
    spread 1/√(βn(1 + λ)) or finer), the proposal ``cap``, the ``acceptance`` bound it rests on and log K₀."""

    beta: float
    radius: float
    spacing: float
    cap: int
    acceptance: float
    log_weight: float

    def epsilon(self, epsilon: float) -> float:
        """ε + log(1 + φK₀e^{−ε}) − log(1 − φ), φ = e^{−NA}: the guarantee of the capped sampler for an ε of the posterior."""
        failure = math.exp(-self.cap * self.acceptance)
        weighted = math.exp(self.log_weight - self.cap * self.acceptance - epsilon)
        return epsilon + math.log1p(weighted) - math.log1p(-failure)


def ball_sampler(n: int, p: int, lam: float, beta: float, radius: float, acceptance: float) -> BallSampler:
    """The settings for a ball whose share of every posterior is at least ``acceptance`` (a public bound)."""
    spacing = lattice_spacing(1 / math.sqrt(beta * n * (1 + lam)))
    log_weight = fallback_weight(beta, n, p, lam, spacing)
    return BallSampler(beta, radius, spacing, proposal_cap(acceptance, log_weight), acceptance, log_weight)


class _Proposals:
    """One pass of proposals θ = c + Bz: their float enclosures and, on demand, exact enclosures of Bz."""

    def __init__(
        self,
        factor: NDArray[np.float64],
        magnitude: NDArray[np.float64],
        size: int,
        rng: np.random.Generator,
        name: int,
    ) -> None:
        p = factor.shape[0]
        self.factor, self.p, self.name = factor, p, name
        self.cells = draw_gaussian(rng, size * p)
        z_mid, z_rad = gaussian_fast(self.cells, size * p)
        z_mid, z_rad = z_mid.reshape(size, p), z_rad.reshape(size, p)
        self.mid = z_mid @ factor.T
        # A float product of p terms is within γ_p·Σ|B_jk z_k| of the exact one (any summation order).
        rounding = p * ROUNDOFF / (1 - p * ROUNDOFF)
        self.rad = (z_rad + rounding * np.abs(z_mid)) @ magnitude.T * GROW

    def exact_noise(self, bits: UniformBits, row: int, j: int, precision: int) -> Interval | None:
        """An enclosure of (Bz)_j for proposal ``row``."""
        terms = []
        for k in range(self.p):
            value = row * self.p + k
            pair = (int(self.cells[0, value // 2]), int(self.cells[1, value // 2]))
            unit = gaussian_exact(bits, (self.name, value // 2), pair, value % 2 == 1, precision)
            if unit is None:
                return None
            terms.append(multiply(exact(float(self.factor[j, k])), unit))
        return add(*terms)


def _inside_fast(
    centre: NDArray[np.float64], mid: NDArray[np.float64], rad: NDArray[np.float64], radius: float
) -> NDArray[np.int64]:
    """Whether each proposal c + Bz lies in ‖θ‖ ≤ r where its float enclosure settles it: 1 inside, 0 outside, −1 not settled.

    |θ_j| lies within |fl(c_j + m_j)| ± (r_j + the sum's rounding). A sum of p squares is within γ_{p+1} of its
    exact value; the comparisons with r² = fl(r·r)(1 ± 2⁻⁵³) leave 8·2⁻⁵³ beyond that for their own roundings.
    """
    theta = centre + mid
    reach = (rad + ROUNDOFF * np.abs(theta)) * GROW
    near = np.maximum(np.abs(theta) - reach, 0.0)
    far = np.abs(theta) + reach
    p = centre.size
    slack = (p + 1) * ROUNDOFF / (1 - (p + 1) * ROUNDOFF) + 8 * ROUNDOFF
    low = np.einsum("kj,kj->k", near, near) * (1 - slack)
    high = np.einsum("kj,kj->k", far, far) * (1 + slack)
    square = radius * radius
    verdict = np.full(len(theta), -1, dtype=np.int64)
    verdict[high < square * (1 - 8 * ROUNDOFF)] = 1
    verdict[low > square * (1 + 8 * ROUNDOFF)] = 0
    return verdict


def _inside_exact(centre: NDArray[np.float64], noise: Callable[[int, int], Interval | None], radius: float) -> bool:
    """‖c + Bz‖ ≤ r decided on the ideal z, at doubling precision (``resolve``)."""
    square = Fraction(radius) ** 2
    p = centre.size

    def enclose(precision: int) -> Interval | None:
        total = exact(0)
        for j in range(p):
            part = noise(j, precision)
            if part is None:
                return None
            coordinate = add(exact(float(centre[j])), part)
            low = max(coordinate.lo, -coordinate.hi, Decimal(0))
            high = max(abs(coordinate.lo), abs(coordinate.hi))
            total = add(total, multiply(Interval(low, high), Interval(low, high)))
        return total

    def decide(lo: Fraction, hi: Fraction) -> bool | None:
        if hi <= square:
            return True
        return False if lo > square else None

    return resolve(enclose, decide)


def sample_on_lattice(
    problem: RidgeProblem, sampler: BallSampler, rng: np.random.Generator, size: int = 1, budget: int | None = None
) -> NDArray[np.float64]:
    """``size`` releases (a (size, p) array), each the lattice point of an exact draw of the posterior at
    ``sampler.beta`` on the ball ‖θ‖ ≤ ``sampler.radius``, or 0 after ``sampler.cap`` misses.

    Proposals come in passes; each release takes the first proposal inside the ball after the previous
    release's, so the releases are independent and each looks at most ``cap`` proposals. With a ``budget``
    (an illustration, evaluation only) at most that many proposals are drawn in all and only the draws inside
    the ball come back: fewer than ``size`` rows when the ball holds little of the posterior.
    """
    cholesky = np.linalg.cholesky(problem.hessian)
    factor = solve_triangular(cholesky.T, np.eye(problem.p), lower=False) / math.sqrt(sampler.beta * problem.n)
    magnitude = np.abs(factor)
    centre = np.asarray(np.linalg.solve(problem.hessian, problem.b / problem.n), dtype=np.float64)
    # Further bits of the uniforms come from a stream of their own: an exact decision leaves later draws as they were.
    bits = UniformBits(own_generator(rng))
    released = np.zeros((size, problem.p))
    inside = np.zeros(size, dtype=bool)
    draw, used, passes, spent = 0, 0, 0, 0
    while draw < size and (budget is None or spent < budget):
        # An illustration spends its budget in the fewest passes; a release draws about twice what it still needs.
        count = min(MAX_PASS, budget - spent) if budget else min(max(PROPOSAL_BATCH, 2 * (size - draw)), MAX_PASS)
        batch = _Proposals(factor, magnitude, count, rng, passes)
        passes, spent = passes + 1, spent + count
        verdicts = _inside_fast(centre, batch.mid, batch.rad, sampler.radius)
        row = 0
        # Only the proposals the float test does not rule out are looked at one by one; ``count`` ends the pass.
        for k in [*np.flatnonzero(verdicts != 0).tolist(), count]:
            while draw < size and used + (k - row) >= sampler.cap:  # the cap falls among the misses before k
                row, draw, used = row + sampler.cap - used, draw + 1, 0  # that release stays the lattice point 0
            if draw == size or k == count:
                used += k - row if draw < size else 0
                break
            used, row = used + k - row + 1, k + 1
            noise = partial(batch.exact_noise, bits, k)
            if verdicts[k] == 1 or _inside_exact(centre, noise, sampler.radius):
                released[draw] = release_nearest(centre, batch.mid[k], batch.rad[k], sampler.spacing, noise)
                inside[draw], draw, used = True, draw + 1, 0
            elif used == sampler.cap:
                draw, used = draw + 1, 0
    return released if budget is None else released[inside]
