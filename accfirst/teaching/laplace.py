"""The Laplace mechanism on counts, as the slides teach it (docs/mathematics.md#teaching-mechanisms; float noise as
docs/mathematics.md#noise-reduction).

A count with ℓ1-sensitivity Δ₁ released as count + Lap(Δ₁/ε) is ε-DP: at every output
the densities of a count and of its neighbour differ by a factor of at most e^ε. For k
counts at once, the largest error exceeds ln(k/d)·Δ₁/ε with probability at most d (the
slides' example: k = 10⁴, ε = 1, d = 0.05 gives 12.2). Noise rounded to integers keeps the
guarantee for integer counts only if it is rounded to the nearest integer; cast to an
integer (truncated towards zero, as the noise-reduction authors' code did) it doubles the
mass at zero error and the ratio reaches 2e^ε; added to a non-integer statistic it puts
neighbours on different lattices, so they can be told apart for sure.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.errors import AccFirstError
from accfirst.validation import validate_count, validate_positive, validate_probability

ROUNDINGS = ("round", "truncate")


def laplace_density(z: ArrayLike, center: float, scale: float) -> NDArray[np.float64]:
    """The Lap(scale) density centred at ``center``: exp(−|z − center|/scale)/(2·scale)."""
    scale = validate_positive("scale", scale)
    return np.exp(-np.abs(np.asarray(z, dtype=np.float64) - center) / scale) / (2 * scale)


def laplace_privacy_loss(z: ArrayLike, count: float, neighbour: float, scale: float) -> NDArray[np.float64]:
    """The privacy loss ln f(z | count) − ln f(z | neighbour) = (|z − neighbour| − |z − count|)/scale.

    Its absolute value is at most |count − neighbour|/scale: ε for neighbours at the sensitivity.
    """
    scale = validate_positive("scale", scale)
    z = np.asarray(z, dtype=np.float64)
    return (np.abs(z - neighbour) - np.abs(z - count)) / scale


def laplace_variance(epsilon: float, sensitivity: float = 1.0) -> float:
    """Var Lap(Δ₁/ε) = 2(Δ₁/ε)²."""
    return 2 * (validate_positive("sensitivity", sensitivity) / validate_positive("epsilon", epsilon)) ** 2


def max_error_threshold(k: int, d: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """ln(k/d)·Δ₁/ε: the largest of k Laplace errors exceeds it with probability at most d (union bound)."""
    k = validate_count("k (counts)", k, 1)
    d = validate_probability("d (failure probability)", d, one=True)
    return math.log(k / d) * validate_positive("sensitivity", sensitivity) / validate_positive("epsilon", epsilon)


def max_error_probability(
    k: int, threshold: ArrayLike, epsilon: float, sensitivity: float = 1.0
) -> NDArray[np.float64]:
    """P(max of k independent |Lap(Δ₁/ε)| ≥ t) = 1 − (1 − e^{−tε/Δ₁})^k, exactly."""
    k = validate_count("k (counts)", k, 1)
    scale = validate_positive("sensitivity", sensitivity) / validate_positive("epsilon", epsilon)
    tail = np.exp(-np.maximum(np.asarray(threshold, dtype=np.float64), 0.0) / scale)
    with np.errstate(divide="ignore"):  # t = 0: log1p(−1) = −∞, probability 1
        probability: NDArray[np.float64] = -np.expm1(k * np.log1p(-np.minimum(tail, 1.0)))
    return probability


def integer_noise_pmf(values: ArrayLike, scale: float, rounding: str = "round") -> NDArray[np.float64]:
    """P(int(Z) = j) for Z ∼ Lap(scale) and each integer j in ``values``.

    ``rounding="round"``: to the nearest integer; ``"truncate"``: towards zero (what casting
    a float to an integer type does).
    """
    scale = validate_positive("scale", scale)
    if rounding not in ROUNDINGS:
        raise AccFirstError(f"rounding must be one of {ROUNDINGS}; got {rounding!r}")
    j = np.abs(np.asarray(values, dtype=np.float64))
    if np.any(j != np.round(j)):
        raise AccFirstError("values must be integers")
    # P(a ≤ |Z| < b) = e^{−a/s} − e^{−b/s}; half of it on each side for j ≠ 0.
    low, high = (j - 0.5, j + 0.5) if rounding == "round" else (j, j + 1)
    low = np.maximum(low, 0.0)
    mass = np.exp(-low / scale) - np.exp(-high / scale)
    return np.where(j == 0, mass, mass / 2)


def integer_noise_loss(epsilon: float, rounding: str, shift: float = 1.0, sensitivity: float = 1.0) -> float:
    """The largest |ln P(c + int(Z) = o) − ln P(c + shift + int(Z) = o)| over outputs o, Z ∼ Lap(Δ₁/ε).

    For an integer ``shift`` (neighbouring counts) this is ε when rounding to nearest and
    ε + ln 2 when truncating; for a non-integer shift (a real-valued statistic) the two
    output lattices are disjoint and the loss is ∞.
    """
    scale = validate_positive("sensitivity", sensitivity) / validate_positive("epsilon", epsilon)
    if shift != round(shift):
        return math.inf
    step = round(shift)
    # Beyond a few units the pmf ratio is exactly e^{−|shift|/scale}; 4 + |shift| covers every other case.
    support = np.arange(-4 - abs(step), 5 + abs(step))
    here = integer_noise_pmf(support, scale, rounding)
    there = integer_noise_pmf(support - step, scale, rounding)
    return float(np.max(np.abs(np.log(here) - np.log(there))))
