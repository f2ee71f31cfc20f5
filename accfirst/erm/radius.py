"""A private radius: a released upper bound on ‖θ*‖ that shrinks the feasible set
(docs/mathematics.md#a-private-radius). [derived]

The free radius R₀ of docs/mathematics.md#the-free-radius bounds ‖θ*‖ on every dataset (``Problem.free_radius``); the
data's own norm is often far below it. This module releases a tighter bound with a small,
charged part of the budget:

- sensitivity (docs/mathematics.md#a-private-radius): N(D) = ‖θ*_D‖ over a ball of radius C (the ceiling: R₀, or a
  smaller public radius). The objective is λ-strongly convex and one replaced row moves its gradient by at most S(C)/n,
  the gradient gap of docs/mathematics.md#the-gradient-gap, so ‖θ*_D − θ*_D′‖ ≤ S(C)/(nλ) and, the norm being
  1-Lipschitz, Δ_N = S(C)/(nλ);
- release (docs/mathematics.md#a-private-radius): R̂ = N(D) + Z + m with Z ∼ Lap(b), b = Δ_N/ε_R, and the margin
  m = b·ln(1/(2β)), so that P(R̂ < N) = P(Z < −m) = β; the Gaussian variant draws
  Z ∼ N(0, σ²), σ = Δ_N/√(2ρ_R), with m = σ·Φ⁻¹(1 − β). Then R = min(C, max(R̂, r_min)):
  post-processing, and R ≥ N whenever R̂ ≥ N because N ≤ C.

The noise comes through the project's ``NoiseFamily.perturb`` (``LAPLACE``, ``GAUSSIAN``), the
samplers every released value uses. docs/mathematics.md, "A private radius".
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from accfirst.erm.problem import Problem
from accfirst.erm.shape import MIN_RADIUS_SHARE, ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import GAUSSIAN
from accfirst.mechanisms.noise_reduction import LAPLACE, NoiseFamily
from accfirst.validation import checked, positive, validate_positive

RADIUS_NOISES: dict[str, NoiseFamily] = {LAPLACE.name: LAPLACE, GAUSSIAN.name: GAUSSIAN}


@checked(ceiling=positive("ceiling"))
def norm_sensitivity(problem: Problem | ProblemShape, ceiling: float) -> float:
    """Δ_N = S(C)/(nλ): how far one replaced row moves ‖θ*‖ over the ball ‖θ‖ ≤ ``ceiling`` C
    (docs/mathematics.md#a-private-radius): the norm is 1-Lipschitz, and the minimiser moves at most
    ``ProblemShape.minimiser_sensitivity_on`` (with the row bound ρ, docs/mathematics.md#rows-of-small-euclidean-norm).
    Public constants only.
    """
    shape = problem if isinstance(problem, ProblemShape) else problem.shape
    return shape.minimiser_sensitivity_on(ceiling, shape.n, shape.lam)


def smallest_radius(problem: Problem | ProblemShape) -> float:
    """r_min: the smallest radius a problem accepts (docs/mathematics.md#a-public-norm-bound), the floor of a released
    radius."""
    return MIN_RADIUS_SHARE * problem.max_norm


def radius_margin(sensitivity: float, level: float, beta: float, noise: str) -> float:
    """m: the shift that makes P(N + Z + m < N) = β (docs/mathematics.md#a-private-radius).

    Laplace at ε_R = ``level``: b·ln(1/(2β)), b = Δ_N/ε_R. Gaussian at ρ_R = ``level``:
    σ·Φ⁻¹(1 − β), σ = Δ_N/√(2ρ_R).
    """
    if not 0 < beta < 0.5:
        raise AccFirstError(f"the radius's failure probability β must be in (0, 0.5); got {beta!r}")
    if noise == LAPLACE.name:
        return sensitivity / level * math.log(1.0 / (2.0 * beta))
    if noise == GAUSSIAN.name:
        return sensitivity / math.sqrt(2.0 * level) * float(ndtri(1.0 - beta))
    raise AccFirstError(f"unknown noise {noise!r}; choose one of {sorted(RADIUS_NOISES)}")


def release_radius(
    norm: float,
    sensitivity: float,
    level: float,
    beta: float,
    ceiling: float,
    floor: float,
    noise: str,
    rng: np.random.Generator,
) -> float:
    """R = min(C, max(N + Z + m, r_min)): an upper bound on ‖θ*‖ with probability ≥ 1 − β
    (docs/mathematics.md#a-private-radius).

    Parameters
    ----------
    norm : N(D) = ‖θ*‖ over the ceiling's ball (private).
    sensitivity : Δ_N (``norm_sensitivity``).
    level : ε_R (Laplace, pure ε_R-DP) or ρ_R (Gaussian, ρ_R-zCDP).
    beta : the probability that R < N, in (0, 0.5).
    ceiling, floor : C and r_min, public.
    noise : "laplace" or "gaussian".
    rng : the release's own generator.
    """
    level = validate_positive("the radius's privacy level", level)
    margin = radius_margin(sensitivity, level, beta, noise)
    noisy = float(RADIUS_NOISES[noise].perturb(np.array([norm]), sensitivity, level, rng)[0])
    return min(ceiling, max(noisy + margin, floor))
