"""Every random number a release draws: the one place that reads a ``numpy.random.Generator`` for release noise.

docs/mathematics.md#one-place-draws-every-release. A release's noise is a fixed function of ideal uniforms
(``accfirst.mechanisms.ideal_noise``): each is drawn here as its first 53 bits (its cell of width 2⁻⁵³), with
more bits drawn here only when a decision needs them, and the rest of the mechanism — the enclosures, the
exact rounding to a lattice (``accfirst.mechanisms.lattice``), the noise-reduction chains — computes from
those numbers alone. Every function reads the generator's *state*: each call draws numbers no earlier call
drew, so two releases made from one generator never share their noise, whatever question each answers. No
function here derives a generator again from a seed.

A test scans the package for any other read of a generator (``tests/mechanisms/test_draws.py``): a release
path that drew its noise somewhere else, raw float64 noise included, fails it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

# A uniform is known first by this many bits: its cell [J, J + 1]·2⁻⁵³.
UNIFORM_BITS = 53
# Further bits of a uniform come in words of this many bits.
WORD_BITS = 62


def uniform_cells(rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.int64]:
    """The cells J of ideal uniforms U ∈ [J, J + 1]·2⁻⁵³, J uniform on 0 … 2⁵³ − 1."""
    return rng.integers(0, 2**UNIFORM_BITS, size=size, dtype=np.int64)


def signed_cells(rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.int64]:
    """A random sign in bit 0 and a uniform's cell in the 53 bits above it (a unit Laplace draw, packed)."""
    return rng.integers(0, 2 ** (UNIFORM_BITS + 1), size=size, dtype=np.int64)


def word(rng: np.random.Generator) -> int:
    """``WORD_BITS`` more random bits of a uniform whose cell left a decision open."""
    return int(rng.integers(0, 2**WORD_BITS))


class Stream:
    """Uniforms' cells from a stream of their own, seeded with 252 bits from a generator, each readable again.

    A chain that keeps no copy of its draws (Brownian noise reduction) reads a coordinate's cells again when an
    exact enclosure needs them: the same numbers, the same release.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self._bits = np.random.PCG64(rng.integers(0, 2**63, size=4).tolist())
        self._start = self._bits.state
        self.drawn = 0

    def cells(self, count: int) -> NDArray[np.uint64]:
        """The next ``count`` cells (53 bits each) of the stream."""
        words = self._bits.random_raw(count)
        self.drawn += count
        return words >> np.uint64(64 - UNIFORM_BITS)

    def cells_at(self, positions: Sequence[int]) -> list[int]:
        """The cells drawn at ``positions`` (increasing, each below ``drawn``), read again from the stream's start."""
        replay = np.random.PCG64(0)
        replay.state = self._start
        here, cells = 0, []
        for position in positions:
            replay.advance(position - here)
            cells.append(int(replay.random_raw()) >> (64 - UNIFORM_BITS))
            here = position + 1
        return cells


def own_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator of its own, seeded with 252 bits from ``rng``'s state: the further bits of uniforms that a
    sampler draws only when a decision needs them (``ideal_noise.UniformBits``) come from it, so deciding exactly
    leaves every later draw from ``rng`` as it was (the Gibbs posterior's samplers; their tests compare runs with
    and without exact decisions)."""
    return np.random.Generator(np.random.PCG64(rng.integers(0, 2**63, size=4).tolist()))


def index(rng: np.random.Generator, size: int) -> int:
    """A uniform whole number in 0 … ``size`` − 1, exactly."""
    return int(rng.integers(size))


def float_uniform(rng: np.random.Generator) -> float:
    """A float64 uniform on the grid 2⁻⁵³·{0, …, 2⁵³ − 1}: only for a sampler whose stated guarantee covers float
    sampling (the preparation's exponential mechanism, docs/mathematics.md#preparing-the-data-privately)."""
    return float(rng.random())
