"""Noise reduction: a chain of ever less noisy releases of one private vector.

docs/mathematics.md#noise-reduction, Algorithm 1 (Koufogiannis et al.). With ε_1 < … < ε_T, the release at the
top level is v̂_T = v + Lap(Δ/ε_T); going down, each coordinate keeps its value with
probability (ε_t/ε_{t+1})², else adds fresh Lap(Δ/ε_t) noise. The prefix
(v̂_1 … v̂_t) is ε_t-DP and v̂_t − v is exactly Lap(Δ/ε_t) per coordinate.

Sampling: the keep/re-draw coins are independent, and the chance that a coordinate
keeps its value at every level from u − 1 down to s telescopes to (ε_s/ε_u)². So
the next re-draw below level u is at the largest s with ε_s < ε_u·√U, U uniform —
one draw per re-draw instead of one coin per level. The noise is the ideal, real-valued
one (``accfirst.mechanisms.ideal_noise``), the re-draw levels are decided exactly, and each
release is the ideal v̂_t rounded exactly to a lattice 2¹⁶–2²⁰ times finer than its noise
scale (``accfirst.mechanisms.lattice``): a post-processing, so the guarantees above hold
unchanged, and no released float64 can rule an input out (docs/mathematics.md, "Noise that
float64 cannot betray").

The noise family is pluggable: a ``NoiseFamily`` perturbs a vector once (the plain
mechanism at one privacy level) and builds a noise-reduction chain; Laplace is the
family of the paper, Gaussian (``accfirst.mechanisms.brownian``, docs/mathematics.md#brownian-noise-reduction) the
other.
"""

from __future__ import annotations

import functools
import itertools
import math
from abc import ABC, abstractmethod
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.errors import AccFirstError
from accfirst.mechanisms import draws
from accfirst.mechanisms.ideal_noise import (
    CELL,
    GROW,
    ROUNDOFF,
    Interval,
    UniformBits,
    add,
    draw_laplace,
    exact,
    laplace_exact,
    laplace_fast,
    multiply,
    resolve,
    scaled_laplace_exact,
)
from accfirst.mechanisms.lattice import lattice_spacing, nearest_exact, nearest_fast, release_nearest


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
    Gaussian); a privacy ``level`` is ε for a pure-DP family and ρ for a zCDP one, named
    ``levels_name`` and written ``level_symbol`` in messages. A family supplies its unit draws
    (``_draw``), their fast enclosure (``_enclose``) and exact one (``_exact_unit``), and the
    scale a privacy level gives them (``_scale``, ``_exact_scale``); ``perturb`` releases them.
    """

    name: str
    norm: int
    levels_name: str
    level_symbol: str

    def perturb(
        self, v: NDArray[np.float64], sensitivity: float, level: float, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """v plus noise calibrated to the privacy ``level`` for the given sensitivity, rounded exactly to a lattice.

        The noise is ideal (docs/mathematics.md, "Noise that float64 cannot betray"): the unit draws come
        first from ``rng``, then, only for a coordinate whose lattice point the fast enclosure leaves in
        doubt, more bits of its uniforms.
        """
        vector = np.asarray(v, dtype=np.float64)
        scale = self._scale(sensitivity, level)
        draws = self._draw(rng, vector.size)
        mid, rad = self._enclose(draws, vector.size, scale)
        bits = UniformBits(rng)

        def noise(j: int, precision: int) -> Interval | None:
            unit = self._exact_unit(bits, draws, j, precision)
            return None if unit is None else multiply(self._exact_scale(sensitivity, level), unit)

        return release_nearest(vector.ravel(), mid, rad, lattice_spacing(scale), noise).reshape(vector.shape)

    def reduce(
        self, v: ArrayLike, sensitivity: float, levels: ArrayLike, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """Every release of a noise-reduction chain on ``v``, validated, one row per level
        (docs/mathematics.md#noise-reduction, docs/mathematics.md#brownian-noise-reduction)."""
        grid = validate_levels(levels, self.levels_name, self.level_symbol)
        checked_sensitivity = validate_sensitivity(sensitivity)
        vector = np.asarray(v, dtype=np.float64)
        if not np.all(np.isfinite(vector)):
            raise AccFirstError("the private statistic must be finite")
        chain = self.chain(vector, checked_sensitivity, grid, rng)
        return np.stack([chain.release(k) for k in range(grid.size)])

    @abstractmethod
    def chain(
        self, v: NDArray[np.float64], sensitivity: float, levels: NDArray[np.float64], rng: np.random.Generator
    ) -> ReleaseChain:
        """A noise-reduction chain whose prefix up to level t is as private as level t alone."""

    @abstractmethod
    def _scale(self, sensitivity: float, level: float) -> float:
        """The float64 scale of the unit noise at privacy ``level`` (to 2·2⁻⁵³ relative)."""

    @abstractmethod
    def _exact_scale(self, sensitivity: float, level: float) -> Interval:
        """An exact enclosure of that scale, at the current decimal precision."""

    @abstractmethod
    def _draw(self, rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        """The packed unit draws of ``size`` values."""

    @abstractmethod
    def _enclose(
        self, draws: NDArray[np.int64], size: int, scale: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Midpoints and radii enclosing the ``size`` values of ``draws`` times ``scale``."""

    @abstractmethod
    def _exact_unit(self, bits: UniformBits, draws: NDArray[np.int64], j: int, precision: int) -> Interval | None:
        """An exact enclosure of unit value j of ``draws``, or ``None`` while it is still unbounded."""


# Levels rounded in one pass: enough to share numpy's call overhead, few enough not to round
# many states of levels that a search stops before.
ROUND_AHEAD = 16


class _SortedSearch:
    """``np.searchsorted(keys, values) − 1`` (the largest i with keys[i] < value) for many unsorted values, fast.

    numpy's search pays a mispredicted branch per halving for unsorted values; here a table
    over 4T equal buckets of log(key) gives each value a start at or below its answer, and a
    few vectorised steps (one per key in its bucket) finish it exactly.
    """

    def __init__(self, keys: NDArray[np.float64]) -> None:
        self.padded = np.append(keys, np.inf)  # the keys, then +∞
        logs = np.log(keys)
        self._low = logs[0]
        self._buckets = 4 * keys.size
        span = logs[-1] - logs[0]
        self._scale = self._buckets / span if span > 0 else 0.0
        edges = np.exp(self._low + np.arange(self._buckets + 1) / self._scale) if span > 0 else keys[:1]
        # One below the answer at each bucket's edge: rounding may put a value just under its edge.
        self._table = np.maximum(np.searchsorted(keys, edges, side="left") - 2, -1)

    def below(self, values: NDArray[np.float64]) -> NDArray[np.int64]:
        if self._scale == 0:
            answer = np.full(values.size, -1, dtype=np.int64)
        else:
            with np.errstate(divide="ignore"):
                position = np.log(values)
            position -= self._low
            position *= self._scale
            np.clip(position, 0, self._buckets, out=position)
            answer = self._table[position.astype(np.int64)]
        while True:
            step = self.padded[answer + 1] < values
            if not step.any():
                return answer
            answer += step


class LaplaceReleaseChain(ReleaseChain):
    """Algorithm 1 with ideal Laplace noise, sampled by re-draw events (see module doc), released on a lattice.

    ``_state[k, j]`` encloses coordinate j's noise after its k-th re-draw counted from the top
    (k = 0: the noise of v̂_T) as midpoint + i·radius, ``_event_levels[k, j]`` is the level of
    re-draw k + 1, or −1 once coordinate j has no more re-draws; ``_draws[k]`` holds the unit
    Laplace draws of re-draw k for the coordinates ``_drawn[k]`` (increasing). The noise at
    level t is the one after the last re-draw at a level ≥ t; level t releases v + noise
    rounded to the lattice of its scale Δ/ε_t (``accfirst.mechanisms.lattice``), looked up in
    ``_table``, which ``_round_ahead`` fills a few levels at a time.
    """

    def __init__(
        self, v: NDArray[np.float64], sensitivity: float, epsilons: NDArray[np.float64], rng: np.random.Generator
    ) -> None:
        self.levels = epsilons
        self._v = v
        self._sensitivity = sensitivity
        scales = sensitivity / epsilons  # the ideal scales Δ/ε_t, correctly rounded
        self._spacings = lattice_spacing(scales)
        self._bits = UniformBits(rng)
        self._redraw_keys = itertools.count()
        self._squares = epsilons**2  # within 2⁻⁵³ of ε_t², for the re-draw search
        self._search = _SortedSearch(self._squares)
        d = v.size
        # Row k of ``state`` encloses the noise after re-draw k (row 0: the top level): its real
        # part is the midpoint, its imaginary part the radius (one array: one in-place add per
        # re-draw). Rows grow by doubling.
        rows = 32
        state = np.empty((rows, d), dtype=np.complex128)
        event_levels = np.full((rows, d), -1, dtype=np.int64)
        active = np.arange(d)
        self._draws, self._drawn = [draw_laplace(rng, d)], [active]
        state[0] = self._enclosed_term(self._draws[0], scales[-1], epsilons.size - 1)
        level = np.full(d, epsilons.size - 1, dtype=np.int64)
        k = 0
        while True:
            nxt = self._next_redraws(level[active], rng)
            moving = nxt >= 0
            active, nxt = active[moving], nxt[moving]
            if not active.size:
                break
            k += 1
            if k == rows:
                state = np.concatenate([state, np.empty_like(state)])
                event_levels = np.concatenate([event_levels, np.full_like(event_levels, -1)])
                rows *= 2
            packed = draw_laplace(rng, active.size)
            state[k] = state[k - 1]
            state[k, active] += self._enclosed_term(packed, scales[nxt], nxt)
            event_levels[k - 1, active] = nxt
            level[active] = nxt
            self._draws.append(packed)
            self._drawn.append(active)
        self._state = state[: k + 1]
        levels = self._event_levels = event_levels[:k]
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
        # Level t releases _table[count, j]: the states rounded ahead (``_round_ahead``).
        self._everyone = np.arange(d)
        self._table = np.empty(self._state.shape)
        self._ahead_end, self._spacing = 0, math.nan
        self._released = np.empty(d)

    @staticmethod
    def _enclosed_term(
        packed: NDArray[np.int64], scale: float | NDArray[np.float64], level: int | NDArray[np.int64]
    ) -> NDArray[np.complex128]:
        """A re-draw's noise as midpoint + i·radius, the radius also covering the roundings of the sums it enters.

        A noise term drawn at level s is added to at most s + 1 partial sums (later re-draws are
        at lower levels), each rounded to within 2⁻⁵³ of a sum of terms' magnitudes; GROW covers
        the rounding of the radii's own sum.
        """
        mid, rad = laplace_fast(packed, scale)
        rad += ROUNDOFF * (level + 1) * np.abs(mid)
        rad *= GROW
        return mid + 1j * rad

    def _next_redraws(self, levels: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.int64]:
        """The next re-draw below each level u: the largest s with ε_s² < U·ε_u² (−1 if none).

        U is an ideal uniform known to the cell [J, J + 1]·2⁻⁵³; the float search settles the
        level unless a threshold ε_s²/ε_u² falls within rounding of that cell, when exact
        rationals and more of U's bits do.
        """
        tops = draws.uniform_cells(rng, levels.size)
        top_square = self._squares[levels]
        low = tops * CELL * top_square * (1.0 - 4.0 * ROUNDOFF)
        high = (tops + 1) * CELL * top_square * (1.0 + 4.0 * ROUNDOFF)
        # Levels ≤ sure surely qualify; the level above sure surely does not unless it is within
        # rounding of U's cell (or it is u itself, whose ratio is 1).
        sure = np.minimum(self._search.below(low), levels - 1)
        above = sure + 1
        unsettled = (above < levels) & (self._search.padded[above] < high)
        for i in np.flatnonzero(unsettled):
            likely = int(np.searchsorted(self._squares, high[i], side="left")) - 1
            sure[i] = self._exact_next_redraw(
                int(levels[i]), int(tops[i]), int(sure[i]), min(likely, int(levels[i]) - 1)
            )
        return sure

    def _exact_next_redraw(self, level: int, top: int, sure: int, likely: int) -> int:
        key = ("re-draw", next(self._redraw_keys))
        u = Fraction(float(self.levels[level])) ** 2
        for s in range(likely, sure, -1):
            threshold = Fraction(float(self.levels[s])) ** 2 / u

            def below(lo: Fraction, hi: Fraction, threshold: Fraction = threshold) -> bool | None:
                return True if threshold < lo else False if threshold >= hi else None

            if resolve(lambda precision: self._bits.cell(key, top, precision), below):
                return s
        return sure

    def _exact_noise(self, j: int, k: int, precision: int) -> Interval | None:
        """An exact enclosure of coordinate j's noise after its re-draw k: the top draw and re-draws 1 … k."""
        terms = []
        for r in range(k + 1):
            level = self.levels.size - 1 if r == 0 else int(self._event_levels[r - 1, j])
            packed = self._draws[r][np.searchsorted(self._drawn[r], j)]
            scale = Fraction(self._sensitivity) / Fraction(float(self.levels[level]))
            term = scaled_laplace_exact(self._bits, (j, r), int(packed), scale, precision)
            if term is None:
                return None
            terms.append(term)
        return add(*terms)

    def _round_ahead(self, level: int) -> bool:
        """Round the noise states that the levels ``level`` … ``level`` + ROUND_AHEAD − 1 (on one lattice) release.

        One vectorised rounding serves those releases: for each re-draw made at those levels,
        the state that follows it, and — on a new lattice or after levels were skipped — every
        coordinate's current state. Returns whether the current states were rounded.
        """
        spacing = self._spacings[level]
        fresh = level != self._ahead_end or spacing != self._spacing
        end = min(int(np.searchsorted(-self._spacings, -spacing, side="right")), level + ROUND_AHEAD)
        # A re-draw made at one of these levels leaves its coordinate in the state it had one
        # re-draw earlier; a level holds at most one re-draw per coordinate.
        counts = self._count.copy()
        coordinates, states = [], []
        for s in range(level, end):
            at = self._event_coordinates[self._event_starts[s] : self._event_starts[s + 1]]
            counts[at] -= 1
            coordinates.append(at)
            states.append(counts[at])
        if fresh:
            coordinates.append(self._everyone)
            states.append(self._count)
        coordinate, state = np.concatenate(coordinates), np.concatenate(states)
        # Flat indices: numpy gathers and scatters them several times faster than index pairs.
        flat = state * self._v.size + coordinate
        enclosure = self._state.reshape(-1)[flat]
        values, unsettled = nearest_fast(self._v[coordinate], enclosure.real, enclosure.imag, spacing)
        for i in np.flatnonzero(unsettled):
            j, k = int(coordinate[i]), int(state[i])
            noise = functools.partial(self._exact_noise, j, k)
            values[i] = nearest_exact(float(self._v[j]), spacing, noise)
        self._table.reshape(-1)[flat] = values
        self._ahead_end, self._spacing = end, spacing
        return fresh

    def release(self, level: int) -> NDArray[np.float64]:
        self._check_order(level, self._level)
        # Passing level s removes the re-draws made at s from every count.
        passed = self._event_coordinates[self._event_starts[self._level] : self._event_starts[level]]
        np.subtract.at(self._count, passed, 1)
        self._level = level
        table, d = self._table.reshape(-1), self._v.size
        if level >= self._ahead_end and self._round_ahead(level):
            self._released = table[self._count * d + self._everyone]
        else:
            self._released[passed] = table[self._count[passed] * d + passed]
        return self._released.copy()


class LaplaceNoise(NoiseFamily):
    """Laplace noise with ℓ1 sensitivity: pure ε-DP (docs/mathematics.md#private-hypothesis-generators,
    docs/mathematics.md#noise-reduction), released on a lattice (exact, no ε added)."""

    name = "laplace"
    norm = 1
    levels_name = "epsilons"
    level_symbol = "ε"

    def _scale(self, sensitivity: float, level: float) -> float:
        return sensitivity / level

    def _exact_scale(self, sensitivity: float, level: float) -> Interval:
        return exact(Fraction(sensitivity) / Fraction(level))

    def _draw(self, rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return draw_laplace(rng, size)

    def _enclose(
        self, draws: NDArray[np.int64], size: int, scale: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return laplace_fast(draws, scale)

    def _exact_unit(self, bits: UniformBits, draws: NDArray[np.int64], j: int, precision: int) -> Interval | None:
        return laplace_exact(bits, j, int(draws[j]), precision)

    def chain(
        self, v: NDArray[np.float64], sensitivity: float, levels: NDArray[np.float64], rng: np.random.Generator
    ) -> LaplaceReleaseChain:
        return LaplaceReleaseChain(np.asarray(v, dtype=np.float64).ravel(), sensitivity, levels, rng)


LAPLACE = LaplaceNoise()


def laplace_noise_reduction(
    v: ArrayLike, sensitivity: float, epsilons: ArrayLike, rng: np.random.Generator
) -> NDArray[np.float64]:
    """All T releases of Algorithm 1 as a (T, d) float64 array, row t − 1 being v̂_t
    (docs/mathematics.md#noise-reduction).

    Parameters
    ----------
    v : the private vector (any shape; flattened to d entries).
    sensitivity : its ℓ1-sensitivity Δ.
    epsilons : strictly increasing ε_1 < … < ε_T.
    rng : the source of randomness.
    """
    return LAPLACE.reduce(v, sensitivity, epsilons, rng)
