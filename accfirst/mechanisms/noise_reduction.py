"""Noise reduction: a chain of ever less noisy releases of one private vector.

SPEC §5, Algorithm 1 (Koufogiannis et al.). With ε_1 < … < ε_T, the release at the
top level is v̂_T = v + Lap(Δ/ε_T); going down, each coordinate keeps its value with
probability (ε_t/ε_{t+1})², else adds fresh Lap(Δ/ε_t) noise. The prefix
(v̂_1 … v̂_t) is ε_t-DP and v̂_t − v is exactly Lap(Δ/ε_t) per coordinate.

Sampling: the keep/re-draw coins are independent, and the chance that a coordinate
keeps its value at every level from u − 1 down to s telescopes to (ε_s/ε_u)². So
the next re-draw below level u is at the largest s with ε_s < ε_u·√U, U uniform —
one draw per re-draw instead of one coin per level. Values are accumulated from the
top down exactly as Algorithm 1 does, in float64 throughout.

The noise family is pluggable: a ``NoiseFamily`` perturbs a vector once (the plain
mechanism at one privacy level) and builds a noise-reduction chain; Laplace is the
family of the paper, Gaussian (``accfirst.mechanisms.brownian``, SPEC §14) the other.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.errors import AccFirstError


def validate_levels(levels: ArrayLike, name: str = "epsilons", symbol: str = "ε") -> NDArray[np.float64]:
    """Return privacy levels ``symbol``_1 < … as float64, or raise ``AccFirstError`` saying what is wrong."""
    values = np.asarray(levels, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise AccFirstError(f"{name} must be a non-empty 1-D list of privacy levels; got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise AccFirstError(f"every privacy level {symbol} must be a finite number > 0")
    if np.any(np.diff(values) <= 0):
        raise AccFirstError(f"privacy levels must be strictly increasing ({symbol}_1 < {symbol}_2 < …)")
    return values


def validate_epsilons(epsilons: ArrayLike) -> NDArray[np.float64]:
    """Return ε_1 < … < ε_T as float64, or raise ``AccFirstError`` saying what is wrong."""
    return validate_levels(epsilons)


def validate_sensitivity(sensitivity: float) -> float:
    """Return Δ as a float if finite and > 0."""
    value = float(sensitivity)
    if not math.isfinite(value) or value <= 0:
        raise AccFirstError(f"sensitivity must be a finite number > 0; got {sensitivity!r}")
    return value


class ReleaseChain(ABC):
    """Lazy noise-reduction releases v̂_1, v̂_2, …, read in increasing level order.

    ``levels`` are the privacy levels of the chain, increasing: ε_t for Laplace, ρ_k for
    Gaussian noise.
    """

    levels: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.levels.size)

    @abstractmethod
    def release(self, level: int) -> NDArray[np.float64]:
        """v̂ at 0-based ``level``; levels must be read in non-decreasing order."""

    def _check_order(self, level: int, current: int) -> None:
        """Raise unless ``level`` is at or after the ``current`` one and on the grid."""
        if level < current:
            raise AccFirstError("noise-reduction releases are read in increasing level order")
        if level >= self.levels.size:
            raise AccFirstError(f"level {level} is past the last level {self.levels.size - 1}")


class NoiseFamily(ABC):
    """A noise distribution usable both once (plain mechanism) and as a reduction chain.

    ``norm`` is the ℓ_norm in which the sensitivity is measured (1 for Laplace, 2 for
    Gaussian); a privacy ``level`` is ε for a pure-DP family and ρ for a zCDP one.
    """

    name: str
    norm: int

    @abstractmethod
    def perturb(
        self, v: NDArray[np.float64], sensitivity: float, level: float, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """v plus noise calibrated to the privacy ``level`` for the given sensitivity."""

    @abstractmethod
    def chain(
        self, v: NDArray[np.float64], sensitivity: float, levels: NDArray[np.float64], rng: np.random.Generator
    ) -> ReleaseChain:
        """A noise-reduction chain whose prefix up to level t is as private as level t alone."""


class LaplaceReleaseChain(ReleaseChain):
    """Algorithm 1 with Laplace noise, sampled by re-draw events (see module doc).

    ``values[k, j]`` is coordinate j after its k-th re-draw counted from the top
    (``values[0]`` is v̂_T); ``event_levels[k, j]`` is the level of re-draw k + 1,
    or −1 once coordinate j has no more re-draws. The release at level t takes, for
    each coordinate, the value after its last re-draw at a level ≥ t.
    """

    def __init__(
        self, v: NDArray[np.float64], sensitivity: float, epsilons: NDArray[np.float64], rng: np.random.Generator
    ) -> None:
        self.levels = epsilons
        d = v.size
        top = v + rng.laplace(0.0, sensitivity / epsilons[-1], size=d)
        values = [top]
        event_levels = []
        level = np.full(d, epsilons.size - 1, dtype=np.int64)
        active = np.arange(d)
        current = top
        while active.size:
            # Largest s with ε_s < ε_level·√U is the next re-draw; −1 means none.
            cut = epsilons[level[active]] * np.sqrt(rng.random(active.size))
            nxt = np.searchsorted(epsilons, cut, side="left") - 1
            moving = nxt >= 0
            active, nxt = active[moving], nxt[moving]
            step_levels = np.full(d, -1, dtype=np.int64)
            step_levels[active] = nxt
            current = current.copy()
            current[active] += rng.laplace(0.0, 1.0, size=active.size) * (sensitivity / epsilons[nxt])
            level[active] = nxt
            event_levels.append(step_levels)
            values.append(current)
        self._values = np.stack(values)
        levels = np.stack(event_levels) if event_levels else np.empty((0, d), dtype=np.int64)
        flat = levels.ravel()
        has_event = flat >= 0
        coordinates = np.tile(np.arange(d), levels.shape[0])[has_event]
        flat = flat[has_event]
        # Levels fit in 16 bits for any practical T, where numpy's stable sort is a radix sort.
        order = np.argsort(flat.astype(np.int16) if epsilons.size < 2**15 else flat, kind="stable")
        self._event_coordinates = coordinates[order]
        self._event_starts = np.searchsorted(flat[order], np.arange(epsilons.size + 1), side="left")
        # count[j] = re-draws of coordinate j at levels ≥ the current level.
        self._count = (levels >= 0).sum(axis=0)
        self._level = 0
        self._current = self._values[self._count, np.arange(d)]

    def release(self, level: int) -> NDArray[np.float64]:
        self._check_order(level, self._level)
        # Passing level s removes the re-draws made at s from every count.
        passed = self._event_coordinates[self._event_starts[self._level] : self._event_starts[level]]
        np.subtract.at(self._count, passed, 1)
        self._current[passed] = self._values[self._count[passed], passed]
        self._level = level
        return self._current.copy()


class LaplaceNoise(NoiseFamily):
    """Laplace noise with ℓ1 sensitivity: pure ε-DP (SPEC §3, §5)."""

    name = "laplace"
    norm = 1

    def perturb(
        self, v: NDArray[np.float64], sensitivity: float, level: float, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        return v + rng.laplace(0.0, sensitivity / level, size=v.shape)

    def chain(
        self, v: NDArray[np.float64], sensitivity: float, levels: NDArray[np.float64], rng: np.random.Generator
    ) -> LaplaceReleaseChain:
        return LaplaceReleaseChain(np.asarray(v, dtype=np.float64).ravel(), sensitivity, levels, rng)


LAPLACE = LaplaceNoise()


def laplace_noise_reduction(
    v: ArrayLike, sensitivity: float, epsilons: ArrayLike, rng: np.random.Generator
) -> NDArray[np.float64]:
    """All T releases of Algorithm 1 as a (T, d) float64 array, row t − 1 being v̂_t (SPEC §5).

    Parameters
    ----------
    v : the private vector (any shape; flattened to d entries).
    sensitivity : its ℓ1-sensitivity Δ.
    epsilons : strictly increasing ε_1 < … < ε_T.
    rng : the source of randomness.
    """
    eps = validate_epsilons(epsilons)
    delta = validate_sensitivity(sensitivity)
    vector = np.asarray(v, dtype=np.float64).ravel()
    if not np.all(np.isfinite(vector)):
        raise AccFirstError("the private vector must be finite")
    chain = LAPLACE.chain(vector, delta, eps, rng)
    return np.stack([chain.release(t) for t in range(eps.size)])
