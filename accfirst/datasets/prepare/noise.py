"""Where the preparation draws its randomness: Laplace noise and the exponential mechanism.

Every private step of the preparation draws through these two functions and nothing else,
so that the floating-point-safe samplers of ``accfirst.mechanisms`` can replace them in one
place. ``preparation_rng`` turns the caller's choice into a generator: operating-system
entropy for a release (the default), or a seed for a repeatable run, which is then not a
private release (an attacker who knows the seed knows the noise).
"""

from __future__ import annotations

import numbers

import numpy as np

from accfirst.errors import DataError


def validate_noise_seed(noise_seed: object) -> int | None:
    """``None`` (noise from the operating system) or a whole number ≥ 0 (a repeatable run)."""
    if noise_seed is None:
        return None
    if isinstance(noise_seed, bool) or not isinstance(noise_seed, numbers.Integral) or noise_seed < 0:
        raise DataError(
            f"noise_seed must be None (noise from the operating system) or a whole number ≥ 0; got {noise_seed!r}"
        )
    return int(noise_seed)


def preparation_rng(noise_seed: int | None) -> np.random.Generator:
    """A generator from OS entropy (``None``: a private release) or from a seed (a repeatable run)."""
    return np.random.default_rng(noise_seed)


def laplace(scale: float, rng: np.random.Generator, size: int | None = None) -> float | np.ndarray:
    """Laplace noise of the given scale (one draw, or ``size`` independent draws)."""
    return rng.laplace(0.0, scale, size)


def exponential_mechanism(utility: np.ndarray, epsilon: float, sensitivity: float, rng: np.random.Generator) -> int:
    """An index drawn with probability ∝ exp(ε·u/(2Δ)): ε-DP when each utility moves by ≤ Δ (docs/mathematics.md,
    "Preparing the data privately").
    """
    logits = (epsilon / (2.0 * sensitivity)) * np.asarray(utility, dtype=np.float64)
    weights = np.exp(logits - logits.max())
    cumulative = np.cumsum(weights)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, len(cumulative) - 1)  # u·total can round up to the total itself
