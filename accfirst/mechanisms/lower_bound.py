"""A private lower bound of one number: the Laplace or Gaussian mechanism, shifted down by its margin.

docs/mathematics.md#a-relative-accuracy-target [derived]. A statistic S with sensitivity Δ is released as
``Ŝ = S + Z − margin``, Z the noise of the family at its privacy level, the margin its
(1 − β) quantile: Laplace ``b·ln(1/(2β))`` with b = Δ/ε, Gaussian ``σ·Φ⁻¹(1 − β)`` with
σ = Δ/√(2ρ). Then P(Ŝ > S) = P(Z > margin) = β exactly, and Ŝ is post-processing of the
Laplace (ε-DP) or Gaussian (ρ-zCDP) mechanism. The noise comes from the family's
``perturb`` (``accfirst.mechanisms.noise_reduction.LAPLACE``, ``accfirst.mechanisms.brownian.GAUSSIAN``),
like every released value of the package.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import norm

from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import GAUSSIAN
from accfirst.mechanisms.noise_reduction import LAPLACE, NoiseFamily, validate_sensitivity
from accfirst.validation import checked, lookup, probability

FAMILIES: dict[str, NoiseFamily] = {LAPLACE.name: LAPLACE, GAUSSIAN.name: GAUSSIAN}


def noise_family(noise: str) -> NoiseFamily:
    """The noise family named ``noise`` ("laplace" or "gaussian")."""
    return lookup("noise", noise, FAMILIES)


@overload
def lower_bound_margin(noise: str, sensitivity: float, level: float, beta: float) -> float: ...
@overload
def lower_bound_margin(
    noise: str, sensitivity: float, level: NDArray[np.float64], beta: float
) -> NDArray[np.float64]: ...
@overload
def lower_bound_margin(
    noise: str, sensitivity: float, level: ArrayLike, beta: float
) -> float | NDArray[np.float64]: ...
@checked(sensitivity=validate_sensitivity, beta=probability("beta"))
def lower_bound_margin(noise: str, sensitivity: float, level: ArrayLike, beta: float) -> float | NDArray[np.float64]:
    """The (1 − β) quantile of the noise at each privacy level (docs/mathematics.md#a-private-radius,
    docs/mathematics.md#a-relative-accuracy-target).

    Laplace b·ln(1/(2β)) with b = Δ/ε; Gaussian σ·Φ⁻¹(1 − β) with σ = Δ/√(2ρ). Needs β ∈ (0, ½)
    so that the margin is positive; ``level`` is one level or an array of them.
    """
    if beta >= 0.5:
        raise AccFirstError(f"beta must be below 0.5 for a lower bound; got {beta}")
    levels = np.asarray(level, dtype=np.float64)
    if not np.all(np.isfinite(levels)) or np.any(levels <= 0):
        raise AccFirstError("every privacy level must be a finite number > 0")
    if noise_family(noise).norm == 1:
        margin = sensitivity / levels * math.log(1.0 / (2.0 * beta))
    else:
        margin = sensitivity / np.sqrt(2.0 * levels) * float(norm.isf(beta))
    return float(margin) if margin.ndim == 0 else margin


def private_lower_bound(
    value: float, sensitivity: float, level: float, beta: float, noise: str, rng: np.random.Generator
) -> float:
    """Ŝ = S + Z − margin with P(Ŝ > S) = β: ε-DP (Laplace, level ε) or ρ-zCDP (Gaussian, level ρ)
    (docs/mathematics.md#a-relative-accuracy-target).

    Parameters
    ----------
    value : the private statistic S (finite).
    sensitivity : its sensitivity Δ > 0 (one number: ℓ1 and ℓ2 agree).
    level : ε (Laplace) or ρ (Gaussian), > 0.
    beta : the probability that the bound exceeds S, in (0, ½).
    noise : "laplace" or "gaussian".
    rng : the source of the noise.
    """
    if not math.isfinite(value):
        raise AccFirstError(f"the private statistic must be finite; got {value}")
    margin = lower_bound_margin(noise, sensitivity, level, beta)
    noisy = noise_family(noise).perturb(np.array([float(value)]), sensitivity, level, rng)
    return float(noisy[0]) - margin
