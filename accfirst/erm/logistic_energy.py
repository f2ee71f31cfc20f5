"""The energy of logistic regression's Gibbs posterior, in float64 with a proven error bound, or exactly.

docs/mathematics.md#exact-coins-for-the-logistic-posterior [derived]. In the sampler's coordinates u, θ(u) = θ_c + u/s
(θ_c and s float64 numbers that only place the coordinates), the energy is

    f(u) = β·Σ_i log(1 + e^{−m_i}) + (βnλ/2)‖θ(u)‖²,   m_i = y_i x_iᵀθ(u),

of the rows as stored (float64 numbers, exactly). A sampler's accept/reject coin compares an ideal exponential
variable with an energy difference; it is decided from ``Energy.evaluate`` — the float64 value and a bound on its
distance from f(u) — when that settles it, else from ``Energy.exact`` (decimal arithmetic at any precision).

The float64 bound rests on IEEE arithmetic (each operation rounded to within 2⁻⁵³, a sum of k terms in any order
within γ_k = k·2⁻⁵³/(1 − k·2⁻⁵³) of Σ|terms|) and on numpy's exp and log1p being accurate to 2⁻⁴⁸ (``LIBM_ERROR``, the
assumption ``accfirst.mechanisms.ideal_noise`` makes of log, cos and sin), with rows ‖x_i‖₁ ≤ 1 + 10⁻⁹:

- θ's coordinates: |θ̃_j − θ_j| ≤ 1.01·2⁻⁵³(|θ̃_j| + |u_j|/s);
- a margin: |m̃_i − m_i| ≤ e_m = X₁(γ_p‖θ̃‖_∞ + max_j(θ's error)) (a dot product of p terms, |x_i|₁ ≤ X₁);
- a loss term ℓ(m) = max(−m, 0) + log1p(e^{−|m|}): within 3.2·``LIBM_ERROR``·ℓ̃ of ℓ(m̃), and ℓ is 1-Lipschitz;
- the loss sum: within (γ_n + 3.2·``LIBM_ERROR``)(1 + 2γ_n)·S̃ + n·e_m of Σℓ(m_i);
- the gradient's sum Σσ(−m_i)y_ix_i: within n·X₁(γ_n + 1.1·``LIBM_ERROR`` + e_m/4) in norm (σ is ¼-Lipschitz).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import partial
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import ROW_NORM_TOLERANCE
from accfirst.mechanisms.ideal_noise import GROW, LIBM_ERROR, ROUNDOFF, Interval

# The largest ℓ1 norm of a row that validation lets through.
ROW_BOUND = 1.0 + ROW_NORM_TOLERANCE
# The most θ's one pass evaluates at once (an n × k matrix of margins: about 32 MB).
MARGIN_ELEMENTS = 2**22
# Decimal digits beyond the requested precision that the exact energy is computed with.
GUARD_DIGITS = 12


def _gamma(k: int) -> float:
    """γ_k = k·2⁻⁵³/(1 − k·2⁻⁵³): the relative error of a float64 sum or dot product of k terms."""
    return k * ROUNDOFF / (1 - k * ROUNDOFF)


def _loss_gradient_sums(
    yX: NDArray[np.float64], thetas: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Over a block: Σ ℓ(m_i) (k,) and Σ σ(−m_i)·y_i x_i (k, p), with ℓ(m) = max(−m, 0) + log1p(e^{−|m|})."""
    margins = yX @ thetas.T
    small = np.exp(-np.abs(margins))
    losses = (np.maximum(-margins, 0.0) + np.log1p(small)).sum(axis=0)
    weights = np.where(margins >= 0, small, 1.0) / (1.0 + small)
    return losses, weights.T @ yX


def _exact_losses(yX: NDArray[np.float64], theta: tuple[Decimal, ...], digits: int) -> tuple[Fraction]:
    """Over a block, in decimal arithmetic at ``digits`` digits: Σ ln(1 + e^{−m_i}), m_i = y_i x_iᵀθ.

    Returned as a fraction, so that blocks add exactly whatever decimal context combines them.
    """
    with localcontext() as context:
        context.prec = digits
        total = Decimal(0)
        for row in yX.tolist():
            margin = sum((Decimal(v) * t for v, t in zip(row, theta)), Decimal(0))
            total += (1 + (-margin).exp()).ln()
        return (Fraction(total),)


class Evaluation(NamedTuple):
    """f at a batch of points: ``value`` within ``error`` of f; ``gradient`` (u-coordinates) within ``gradient_error`` in norm."""

    value: NDArray[np.float64]
    error: NDArray[np.float64]
    gradient: NDArray[np.float64]
    gradient_error: NDArray[np.float64]


class Energy:
    """f(u) = β·Σℓ(m_i) + (βnλ/2)‖θ_c + u/s‖² for one logistic problem, its curvature bounds and evaluations.

    ``convexity`` and ``curvature`` bound ∇²f from below and above for every u: ∇²f = (βn/s²)∇²L with
    λI ⪯ ∇²L ⪯ (X₁²/4 + λ)I, and s² within 3·2⁻⁵³ of βnλ.
    """

    def __init__(self, problem: LogisticProblem, beta: float, centre: NDArray[np.float64]) -> None:
        self.problem = problem
        self.beta = beta
        self.n, self.p, self.lam = problem.n, problem.p, problem.lam
        self.scale = math.sqrt(beta * self.n * self.lam)
        self.centre = np.asarray(centre, dtype=np.float64)
        self.penalty = beta * self.n * self.lam / 2  # within 2·2⁻⁵³ of βnλ/2
        self.convexity = 1.0 - 8 * ROUNDOFF
        self.curvature = (1.0 + 8 * ROUNDOFF) * (ROW_BOUND**2 / 4 + self.lam) / self.lam
        self.chunk = max(1, MARGIN_ELEMENTS // self.n)

    def theta(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.centre + u / self.scale

    def evaluate(self, u: NDArray[np.float64]) -> Evaluation:
        """f and ∇f at each row of ``u`` (a (k, p) batch of float64 points), with their error bounds, in passes."""
        thetas = self.theta(u)
        parts = [
            self.problem.reduce_rows(partial(_loss_gradient_sums, thetas=thetas[i : i + self.chunk]))
            for i in range(0, len(u), self.chunk)
        ]
        sums = np.concatenate([part[0] for part in parts])
        weighted = np.concatenate([part[1] for part in parts])
        n, p = self.n, self.p
        theta_error = 1.01 * ROUNDOFF * (np.abs(thetas) + np.abs(u) / self.scale)
        widest = np.max(np.abs(thetas), axis=1)
        margin_error = ROW_BOUND * (_gamma(p) * widest + np.max(theta_error, axis=1))
        squares = np.einsum("kp,kp->k", thetas, thetas)
        sum_error = (_gamma(n) + 3.2 * LIBM_ERROR) * (1 + 2 * _gamma(n)) * sums + n * margin_error
        square_error = _gamma(p) * squares + np.einsum("kp,kp->k", 2 * np.abs(thetas) + theta_error, theta_error)
        value = self.beta * sums + self.penalty * squares
        error = (
            self.beta * sum_error
            + self.penalty * (square_error + 2.01 * ROUNDOFF * squares)
            + 3 * ROUNDOFF * (self.beta * sums + self.penalty * squares)
        ) * GROW
        shrink = self.beta * n * self.lam
        gradient_theta = shrink * thetas - self.beta * weighted
        data_error = self.beta * n * ROW_BOUND * (_gamma(n) + 1.1 * LIBM_ERROR + margin_error / 4)
        penalty_error = shrink * (
            np.sqrt(np.einsum("kp,kp->k", theta_error, theta_error)) + 4 * ROUNDOFF * np.sqrt(squares)
        )
        norms = np.sqrt(np.einsum("kp,kp->k", gradient_theta, gradient_theta))
        gradient_error = (data_error + penalty_error + 3 * ROUNDOFF * norms) * (1 + 4 * ROUNDOFF) / self.scale * GROW
        return Evaluation(value, error, gradient_theta / self.scale, gradient_error)

    def exact(self, point: list[Decimal], radius: Decimal, precision: int) -> Interval:
        """An enclosure of f over the ball of ℓ2 ``radius`` around ``point`` (decimal u-coordinates), at ``precision`` digits.

        f at the point in decimal arithmetic at ``precision`` + ``GUARD_DIGITS`` digits, each operation rounded to
        within η = 10^{1−q}/2: a margin's p products and sums err by ≤ 2pη·X₁T (T = ‖θ‖_∞ + 1), a term
        ln(1 + e^{−m}) by that plus η(3 + ℓ), the sum of n terms by nη·Σℓ more; the penalty by ≤ 2(p + 2)η(‖θ‖² + 1).
        The bound below is 8(n + p + 8)(p + 8)η times the sizes involved, which covers these. Over the ball f moves
        by at most ‖∇f‖·r + ½·curvature·r², ‖∇f‖ ≤ (βnX₁ + βnλ‖θ‖)/s.
        """
        with localcontext() as context:
            context.prec = precision + GUARD_DIGITS
            scale = Decimal(self.scale)
            theta = tuple(Decimal(float(c)) + x / scale for c, x in zip(self.centre, point))
            (total,) = self.problem.reduce_rows(partial(_exact_losses, theta=theta, digits=context.prec))
            losses = Decimal(total.numerator) / Decimal(total.denominator)
            squares = sum((t * t for t in theta), Decimal(0))
            beta, lam = Decimal(self.beta), Decimal(self.lam)
            value = beta * losses + beta * self.n * lam * squares / 2
            widest = max(abs(t) for t in theta) + 1
            sizes = beta * (losses + self.n * (Decimal(ROW_BOUND) * widest + 3)) + beta * self.n * lam * (squares + 1)
            rounding = 8 * (self.n + self.p + 8) * (self.p + 8) * Decimal(10) ** (1 - context.prec) / 2 * sizes
            slope = (beta * self.n * Decimal(ROW_BOUND) + beta * self.n * lam * squares.sqrt()) / scale
            reach = slope * radius + Decimal(self.curvature) * radius * radius / 2
            spread = (rounding + reach) * Decimal(GROW)
            return Interval(value - spread, value + spread)
