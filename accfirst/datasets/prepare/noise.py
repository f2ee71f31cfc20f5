"""Where the preparation draws its randomness: Laplace noise and the exponential mechanism.

Every private step of the preparation draws through these two functions and nothing else.
Laplace releases go through the floating-point-safe sampler of ``accfirst.mechanisms`` (the
ideal noisy value rounded exactly to a lattice: docs/mathematics.md, "Noise that float64
cannot betray"); the exponential mechanism samples in float64, made exactly ε-DP by a floor and
a small slack in ε (``float_slack``). ``preparation_rng`` turns the caller's choice into a generator: operating-system
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
from accfirst.mechanisms import draws
from accfirst.mechanisms.noise_reduction import LAPLACE

SECRET_BITS = 128
# The float64 sampler's law q is within ρ = (2¹² + K)·2⁻⁵² relatively plus 5·2⁻⁵³ absolutely of the ideal one at
# each candidate; mixing in a uniform candidate with probability 2⁻²⁰ (drawn exactly) keeps every candidate possible
# and bounds the ratio of two neighbours' laws by e^ε′ times ``float_slack`` (docs/mathematics.md).
MIX_BITS = 20


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


def float_slack(candidates: int) -> float:
    """What float64 sampling over K candidates adds to the exponential mechanism's ε (docs/mathematics.md,
    "Preparing the data privately"): log((1 + κ)/(1 − κ)) + log((1 + ρ)/(1 − ρ)), κ = 5K·2⁻⁵³/2⁻²⁰, ρ = (2¹² + K)·2⁻⁵².
    """
    kappa = 5 * candidates * 2.0 ** (MIX_BITS - 53)
    rho = (2**12 + candidates) * 2.0**-52
    return math.log1p(2 * kappa / (1 - kappa)) + math.log1p(2 * rho / (1 - rho))


def exponential_mechanism(utility: np.ndarray, epsilon: float, sensitivity: float, rng: np.random.Generator) -> int:
    """An index drawn with probability ∝ exp(ε′·u/(2Δ)), ε′ = ε − ``float_slack(K)``, or with probability 2⁻²⁰ a
    uniform one: ε-DP in float64 when each utility moves by ≤ Δ and the utilities and their differences are exact
    float64 numbers, as the quantiles' quarter-integers are (docs/mathematics.md, "Preparing the data privately").
    """
    utility = np.asarray(utility, dtype=np.float64)
    sampling = epsilon - float_slack(len(utility))
    if not sampling > 0:
        raise DataError(
            f"a private quantile needs ε above {float_slack(len(utility)):.2g} (it got {epsilon:.3g}): "
            "give the preparation a larger budget, or declare the ranges"
        )
    if draws.index(rng, 1 << MIX_BITS) == 0:  # probability exactly 2⁻²⁰: no candidate is ever impossible
        return draws.index(rng, len(utility))
    logits = (sampling / (2.0 * sensitivity)) * (utility - utility.max())  # the difference is exact
    weights = np.exp(logits)
    cumulative = np.cumsum(weights)
    index = int(np.searchsorted(cumulative, draws.float_uniform(rng) * cumulative[-1], side="right"))
    return min(index, len(cumulative) - 1)  # u·total can round up to the total itself
