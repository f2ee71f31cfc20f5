"""How privacy adds up: composition, group privacy, post-processing, neighbours
(docs/mathematics.md#teaching-mechanisms, docs/mathematics.md#the-zcdp-filter).

- Sequential (basic) composition of k (ε, δ)-DP rounds: (kε, kδ).
- Advanced composition: (√(2k ln(1/δ′))·ε + kε(e^ε − 1), kδ + δ′).
- zCDP: an ε-DP round is ε²/2-zCDP, ρ's add, and ρ-zCDP gives (ρ + 2√(ρ ln(1/δ)), δ)-DP.
- Group privacy for k people: (kε, k·e^{(k−1)ε}δ).
- Post-processing keeps (ε, δ): any decision made from the output alone.
- Neighbours: the slides' add/remove-one; this project uses replace-one, which is two
  add/remove steps, so an add/remove guarantee gives the group-of-2 guarantee here.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.errors import AccFirstError
from accfirst.validation import validate_count, validate_positive, validate_probability


def _epsilon_delta(epsilon: float, delta: float) -> tuple[float, float]:
    return validate_positive("epsilon", epsilon), validate_probability("delta", delta, zero=True)


def basic_composition(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """(kε, kδ): k rounds of an (ε, δ)-DP mechanism, one after another."""
    epsilon, delta = _epsilon_delta(epsilon, delta)
    k = validate_count("k (rounds)", k, 1)
    return k * epsilon, k * delta


def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """(√(2k ln(1/δ′))·ε + kε(e^ε − 1), kδ + δ′) for k adaptive rounds (slides,
    docs/mathematics.md#teaching-mechanisms)."""
    epsilon, delta = _epsilon_delta(epsilon, delta)
    k = validate_count("k (rounds)", k, 1)
    delta_prime = validate_probability("delta_prime", delta_prime)
    total = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon + k * epsilon * math.expm1(epsilon)
    return total, k * delta + delta_prime


def zcdp_to_dp(rho: float, delta: float) -> float:
    """ε = ρ + 2√(ρ ln(1/δ)): a ρ-zCDP mechanism is (ε, δ)-DP (docs/mathematics.md#the-zcdp-filter,
    docs/mathematics.md#the-gibbs-posterior)."""
    rho = validate_positive("rho", rho)
    delta = validate_probability("delta", delta)
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def dp_to_zcdp(epsilon: float, delta: float) -> float:
    """ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))², the inverse of ``zcdp_to_dp`` (ρ_B of
    docs/mathematics.md#the-zcdp-filter)."""
    epsilon = validate_positive("epsilon", epsilon)
    log_term = math.log(1 / validate_probability("delta", delta))
    # √(ε + L) − √L = ε/(√(ε + L) + √L) without cancellation.
    return (epsilon / (math.sqrt(epsilon + log_term) + math.sqrt(log_term))) ** 2


def zcdp_composition(epsilon: float, k: int, delta: float) -> float:
    """The ε at δ of k ε-DP rounds accounted in zCDP: ρ = kε²/2, then ``zcdp_to_dp``."""
    epsilon = validate_positive("epsilon", epsilon)
    k = validate_count("k (rounds)", k, 1)
    return zcdp_to_dp(k * epsilon**2 / 2, delta)


def group_privacy(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """(kε, k·e^{(k−1)ε}δ): the guarantee for datasets that differ in k people (slides)."""
    epsilon, delta = _epsilon_delta(epsilon, delta)
    k = validate_count("k (people)", k, 1)
    if (k - 1) * epsilon > 700:
        return k * epsilon, math.inf if delta > 0 else 0.0
    return k * epsilon, k * math.exp((k - 1) * epsilon) * delta


def replace_one_from_add_remove(epsilon: float, delta: float) -> tuple[float, float]:
    """An add/remove (ε, δ) guarantee read for replace-one neighbours: two steps, group privacy with k = 2."""
    return group_privacy(epsilon, delta, 2)


def threshold_release(
    epsilon: float, count: float, neighbour: float, thresholds: ArrayLike, sensitivity: float = 1.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """P(count + Lap(Δ₁/ε) ≥ t) for a count and its neighbour, at each threshold t.

    Post-processing: a yes/no decision read off the noisy count is as private as the count,
    so the two probabilities (and their complements) differ by a factor of at most e^ε.
    """
    scale = validate_positive("sensitivity", sensitivity) / validate_positive("epsilon", epsilon)
    if abs(count - neighbour) > sensitivity:
        raise AccFirstError(f"a neighbour's count differs by at most the sensitivity {sensitivity:g}")
    t = np.asarray(thresholds, dtype=np.float64)

    def above(center: float) -> NDArray[np.float64]:
        gap = (t - center) / scale
        return np.where(gap >= 0, 0.5 * np.exp(-np.abs(gap)), 1 - 0.5 * np.exp(-np.abs(gap)))

    return above(count), above(neighbour)
