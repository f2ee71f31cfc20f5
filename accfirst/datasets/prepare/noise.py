"""Where the preparation draws its randomness: Laplace noise and the exponential mechanism.

Every private step of the preparation draws through these two functions and nothing else.
Laplace releases go through the floating-point-safe sampler of ``accfirst.mechanisms`` (the
ideal noisy value rounded exactly to a lattice: docs/mathematics.md, "Noise that float64
cannot betray"); the exponential mechanism samples in float64 and declares the δ that costs
(``float_delta``). ``preparation_rng`` turns the caller's choice into a generator: operating-system
entropy for a release (the default), or a seed for a repeatable run, which is then not a
private release (an attacker who knows the seed knows the noise), or a ``SecretSeed``: entropy
drawn once from the operating system and kept in one program's memory, so that its processes
prepare the same arrays while nobody else can know the noise (a private release).
"""

from __future__ import annotations

import math
import numbers
import secrets
from dataclasses import dataclass, field

import numpy as np

from accfirst.errors import DataError
from accfirst.mechanisms.noise_reduction import LAPLACE

SECRET_BITS = 128
# The float sampler's weights are off by less than 2¹¹ units of 2⁻⁵³ (a logit's rounding, at most 2·745·2⁻⁵³
# relative where a weight does not underflow, and exp's few ulps); twice that is the slack of ``float_delta``.
FLOAT_SLACK = 2**12


@dataclass(frozen=True)
class SecretSeed:
    """Operating-system entropy drawn once and never shown: the same noise wherever it is passed, known to no one.

    A server draws one (``SecretSeed.draw()``) and hands it to its worker processes, so that they
    all prepare a table with the same noise; as long as it stays in the server's memory the
    release is as private as one with fresh entropy (an attacker who has read the code still
    cannot replay it). Its ``repr`` hides the value, and a report never names it.

    Parameters
    ----------
    entropy : the secret, a whole number (``SECRET_BITS`` random bits from ``draw``).
    """

    entropy: int = field(repr=False)

    @classmethod
    def draw(cls) -> SecretSeed:
        """A fresh secret from the operating system's entropy (``secrets.randbits``)."""
        return cls(secrets.randbits(SECRET_BITS))


NoiseSeed = int | SecretSeed | None


def validate_noise_seed(noise_seed: object) -> NoiseSeed:
    """``None`` (noise from the operating system), a ``SecretSeed``, or a whole number ≥ 0 (a repeatable run)."""
    if noise_seed is None or isinstance(noise_seed, SecretSeed):
        return noise_seed
    if isinstance(noise_seed, bool) or not isinstance(noise_seed, numbers.Integral) or noise_seed < 0:
        raise DataError(
            f"noise_seed must be None (noise from the operating system), a SecretSeed or a whole number ≥ 0; "
            f"got {noise_seed!r}"
        )
    return int(noise_seed)


def repeatable_seed(noise_seed: NoiseSeed) -> int | None:
    """The seed a report must name (a repeatable run, not a private release), or ``None`` for a private one."""
    return noise_seed if isinstance(noise_seed, int) else None


def preparation_rng(noise_seed: NoiseSeed) -> np.random.Generator:
    """A generator from OS entropy (``None``), a secret (both: a private release) or a seed (a repeatable run)."""
    return np.random.default_rng(noise_seed.entropy if isinstance(noise_seed, SecretSeed) else noise_seed)


def laplace_release(
    values: np.ndarray | float, sensitivity: float, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """``values`` plus Laplace noise of scale sensitivity/ε per coordinate, released on a lattice (float-safe)."""
    return LAPLACE.perturb(np.atleast_1d(np.asarray(values, dtype=np.float64)), sensitivity, epsilon, rng)


def float_delta(candidates: int, epsilon: float) -> float:
    """The δ one float64 draw of ``exponential_mechanism`` over K candidates adds to its ε: ``(1 + e^ε)·τ`` with
    ``τ = (3K + 2¹²)·2⁻⁵³`` a bound on the total variation between the float sampler's law and the ideal one
    (docs/mathematics.md, "Preparing the data privately": a candidate whose probability is below ~2⁻⁵³ of the
    total can never be drawn in float64).
    """
    return (1.0 + math.exp(epsilon)) * (3 * candidates + FLOAT_SLACK) * 2.0**-53


def exponential_mechanism(utility: np.ndarray, epsilon: float, sensitivity: float, rng: np.random.Generator) -> int:
    """An index drawn with probability ∝ exp(ε·u/(2Δ)): ε-DP when each utility moves by ≤ Δ, and in float64
    (ε, ``float_delta``)-DP when the utilities and their differences are exact float64 numbers, as the quantiles'
    quarter-integers are (docs/mathematics.md, "Preparing the data privately").
    """
    utility = np.asarray(utility, dtype=np.float64)
    logits = (epsilon / (2.0 * sensitivity)) * (utility - utility.max())  # the difference is exact
    weights = np.exp(logits)
    cumulative = np.cumsum(weights)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, len(cumulative) - 1)  # u·total can round up to the total itself
