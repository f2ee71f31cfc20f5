"""Brownian noise reduction: Gaussian releases along one Brownian path (docs/mathematics.md#brownian-noise-reduction).

[derived; consistent with Whitehouse et al. 2022 and Rogers et al. 2023]

A statistic v of ℓ2-sensitivity Δ₂ is released as v̂_k = v + B(T_k) for decreasing
variances T_1 > … > T_K, i.e. increasing zCDP levels ρ_k = Δ₂²/(2T_k), noisiest first,
B a standard Brownian motion per coordinate. Each release alone is the Gaussian
mechanism at ρ_k; the prefix (v̂_1 … v̂_k) carries the same privacy loss as v̂_k alone.

Sampling in release order by time inversion (docs/mathematics.md#brownian-noise-reduction): Z_k = B(T_k)/T_k has
independent increments, Z_1 ∼ N(0, 1/T_1) and Z_{k+1} − Z_k ∼ N(0, 1/T_{k+1} − 1/T_k), so
each release costs one Gaussian draw per coordinate, levels that are never read cost
nothing, and the grid can be extended to the right at any time. The path is the ideal,
real-valued one, and each release its exact rounding to a lattice (docs/mathematics.md,
"Noise that float64 cannot betray"): no released float64 can rule an input out.

The ex-post guarantee (docs/mathematics.md#brownian-noise-reduction) holds under any stopping rule that reads only the
releases: stopping at level k is (ℰ_BM(ρ_k), δ)-ex-post private, with ℰ_BM from a
boundary that the Brownian privacy loss crosses with probability ≤ δ. Unlike pure
ex-post privacy this is not closed under post-processing; every such number is an
"(ε, δ)-ex-post" figure and is shown with its δ.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.errors import AccFirstError
from accfirst.mechanisms import draws
from accfirst.mechanisms.ideal_noise import (
    GROW,
    ROUNDOFF,
    Interval,
    UniformBits,
    add,
    draw_gaussian,
    exact,
    gaussian_exact,
    gaussian_fast,
    multiply,
    square_root,
)
from accfirst.mechanisms.lattice import lattice_spacing, release_nearest
from accfirst.mechanisms.noise_reduction import NoiseFamily, ReleaseChain, validate_levels, validate_sensitivity
from accfirst.validation import checked, optional, positive, validate_delta

BOUNDARIES = ("mixture", "linear")
DEFAULT_DELTA = 1e-6


def validate_rhos(rhos: ArrayLike) -> NDArray[np.float64]:
    """Return ρ_1 < … < ρ_K as float64, or raise ``AccFirstError`` saying what is wrong."""
    return validate_levels(rhos, "rhos", "ρ")


class BrownianReleaseChain(ReleaseChain):
    """Releases v + B(T_k) read in increasing level order, sampled by time inversion
    (docs/mathematics.md#brownian-noise-reduction), on a lattice.

    Jumping from level j to a later level k draws the increment Z_k − Z_j in one ideal
    Gaussian (variance 1/T_k − 1/T_j): the levels read have exactly their joint law; skipped
    levels are never sampled. ``extend`` appends larger ρ at any time. Each release is the
    ideal v + B(T_k) rounded to the lattice of its standard deviation √T_k
    (``accfirst.mechanisms.lattice``): a post-processing, so every guarantee below holds as
    for the ideal releases. The draws of each step are not kept: an exact enclosure (rare)
    reads a coordinate's again from the stream they came from.
    """

    def __init__(
        self, v: NDArray[np.float64], sensitivity: float, rhos: NDArray[np.float64], rng: np.random.Generator
    ) -> None:
        self.levels = rhos
        self._v = v
        self._flat = v.ravel()
        self._sensitivity = Fraction(sensitivity)
        self._bits = UniformBits(rng)
        # The steps' draws come from a stream of their own whose n-th word can be found again
        # (PCG64.advance): an exact enclosure of one coordinate re-reads only that coordinate's.
        self._stream = draws.Stream(rng)
        self._square = sensitivity * sensitivity  # Δ₂² to 2⁻⁵³
        self._level = -1
        self._rho = 0.0  # ρ at the current level (0 before the first release: B(∞)/∞ = 0)
        self._steps: list[tuple[int, float]] = []  # (first word of the step's draws, its ρ)
        self._gains: list[Fraction] = []  # filled by _exact_noise only
        self._reached = Fraction(0)  # the precision 2ρ/Δ₂² after the gains so far
        self._z_mid = np.zeros(self._flat.size)
        self._z_rad = np.zeros(self._flat.size)
        self._released = np.empty(0)  # set by the first release (every level is above −1)

    def extend(self, rhos: ArrayLike) -> None:
        """Append levels above the current top (docs/mathematics.md#brownian-noise-reduction: the grid extends to the
        right)."""
        more = validate_rhos(rhos)
        if more[0] <= self.levels[-1]:
            raise AccFirstError(f"new levels must exceed the current top ρ = {self.levels[-1]:g}; got ρ = {more[0]:g}")
        self.levels = np.concatenate([self.levels, more])

    def _draws_of(self, j: int) -> list[tuple[int, int]]:
        """The uniforms' cells of coordinate j's Box–Muller pair j // 2 at every step so far, read again from the stream.

        A step draws ⌈d/2⌉ words for the U₁'s, then ⌈d/2⌉ for the U₂'s.
        """
        pairs = (self._flat.size + 1) // 2
        positions = [word for first, _ in self._steps for word in (first + j // 2, first + pairs + j // 2)]
        cells = self._stream.cells_at(positions)
        return list(zip(cells[::2], cells[1::2], strict=True))

    def _exact_noise(self, j: int, precision: int) -> Interval | None:
        """An exact enclosure of coordinate j's B(T_k) = T_k·Σ √(precision gained)·G over the steps so far.

        The precision at a level is 1/T = 2ρ/Δ₂², exactly, from the float64 ρ and Δ₂.
        """
        while len(self._gains) < len(self._steps):  # the precision each step gained, exactly
            reached = 2 * Fraction(self._steps[len(self._gains)][1]) / self._sensitivity**2
            self._gains.append(reached - self._reached)
            self._reached = reached
        terms = []
        for step, (gained, pair) in enumerate(zip(self._gains, self._draws_of(j))):
            unit = gaussian_exact(self._bits, (step, j // 2), pair, j % 2 == 1, precision)
            if unit is None:
                return None
            terms.append(multiply(square_root(exact(gained)), unit))
        return multiply(exact(1 / self._reached), add(*terms))

    def release(self, level: int) -> NDArray[np.float64]:
        self._check_order(level, self._level)
        if level > self._level:
            # 1/T_k = 2ρ_k/Δ₂²; the increment of Z has the variance of the precision gained,
            # 2(ρ_k − ρ_j)/Δ₂², which float64 gives to 3·2⁻⁵³ (one subtraction, a product, a
            # quotient) and its square root to 2·2⁻⁵³. The exact rationals are for _exact_noise.
            rho = float(self.levels[level])
            gained = 2.0 * (rho - self._rho) / self._square
            self._steps.append((self._stream.drawn, rho))
            cells = self._stream.cells(2 * ((self._flat.size + 1) // 2)).reshape(2, -1)
            step, step_rad = gaussian_fast(cells, self._flat.size, math.sqrt(gained))
            self._z_mid += step
            self._z_rad += step_rad
            self._z_rad += ROUNDOFF * np.abs(self._z_mid)  # the sum's rounding
            self._z_rad *= GROW
            self._rho, self._level = rho, level
            variance = self._square / (2.0 * rho)  # T_k to 2·2⁻⁵³
            spacing = lattice_spacing(math.sqrt(variance))
            self._released = release_nearest(self._flat, self._z_mid, self._z_rad, spacing, self._exact_noise, variance)
        return self._released.reshape(self._v.shape).copy()


class GaussianNoise(NoiseFamily):
    """Gaussian noise with ℓ2 sensitivity, at zCDP level ρ: variance Δ₂²/(2ρ)
    (docs/mathematics.md#brownian-noise-reduction), released on a lattice."""

    name = "gaussian"
    norm = 2
    levels_name = "rhos"
    level_symbol = "ρ"

    @staticmethod
    def _variance(sensitivity: float, level: float) -> Fraction:
        return Fraction(sensitivity) ** 2 / (2 * Fraction(level))

    def _scale(self, sensitivity: float, level: float) -> float:
        return math.sqrt(float(self._variance(sensitivity, level)))

    def _exact_scale(self, sensitivity: float, level: float) -> Interval:
        return square_root(exact(self._variance(sensitivity, level)))

    def _draw(self, rng: np.random.Generator, size: int) -> NDArray[np.int64]:
        return draw_gaussian(rng, size)

    def _enclose(
        self, draws: NDArray[np.int64], size: int, scale: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return gaussian_fast(draws, size, scale)

    def _exact_unit(self, bits: UniformBits, draws: NDArray[np.int64], j: int, precision: int) -> Interval | None:
        pair = (int(draws[0, j // 2]), int(draws[1, j // 2]))
        return gaussian_exact(bits, j // 2, pair, j % 2 == 1, precision)

    def chain(
        self, v: NDArray[np.float64], sensitivity: float, levels: NDArray[np.float64], rng: np.random.Generator
    ) -> BrownianReleaseChain:
        return BrownianReleaseChain(np.asarray(v, dtype=np.float64), sensitivity, levels, rng)


GAUSSIAN = GaussianNoise()


def brownian_noise_reduction(
    v: ArrayLike, sensitivity: float, rhos: ArrayLike, rng: np.random.Generator
) -> NDArray[np.float64]:
    """All K releases of Brownian noise reduction, shape (K, *v.shape), row k − 1 being v̂_k
    (docs/mathematics.md#brownian-noise-reduction).

    The level-k noise v̂_k − v is N(0, Δ₂²/(2ρ_k)) per coordinate, and
    Cov(v̂_j − v, v̂_k − v) = min(T_j, T_k) with T = Δ₂²/(2ρ). Float64 throughout.

    Parameters
    ----------
    v : the private statistic (any shape).
    sensitivity : its ℓ2-sensitivity Δ₂ > 0.
    rhos : strictly increasing zCDP levels ρ_1 < … < ρ_K.
    rng : the source of randomness.
    """
    return GAUSSIAN.reduce(v, sensitivity, rhos, rng)


@overload
def brownian_expost_epsilon(
    rho: float, delta: float, boundary: str = "mixture", rho_ref: float | None = None
) -> float: ...
@overload
def brownian_expost_epsilon(
    rho: NDArray[np.float64], delta: float, boundary: str = "mixture", rho_ref: float | None = None
) -> NDArray[np.float64]: ...
@overload
def brownian_expost_epsilon(
    rho: ArrayLike, delta: float, boundary: str = "mixture", rho_ref: float | None = None
) -> float | NDArray[np.float64]: ...
@checked(delta=validate_delta, rho_ref=optional(positive("rho_ref")))
def brownian_expost_epsilon(
    rho: ArrayLike, delta: float, boundary: str = "mixture", rho_ref: float | None = None
) -> float | NDArray[np.float64]:
    """ℰ_BM(ρ) = ρ + ψ(ρ): stopping at level ρ is (ℰ_BM(ρ), δ)-ex-post private
    (docs/mathematics.md#brownian-noise-reduction).

    [derived; consistent with Rogers et al. 2023] ψ is a boundary that √2·W(r) crosses
    with probability ≤ δ over all r ≥ 0 (W a standard Brownian motion), so the bound
    holds under any stopping rule that reads only the releases.

    - ``"mixture"`` (normal mixture, no anchor to guess):
      ℰ(ρ) = ρ + 2√((ρ + ρ̃)(ln(1/δ) + ½·ln(1 + ρ/ρ̃))), any ρ̃ > 0.
    - ``"linear"`` anchored at ρ*: ℰ(ρ) = ρ + √(ρ*·ln(1/δ))·(1 + ρ/ρ*); at ρ = ρ* it equals
      the fixed-level conversion ρ + 2√(ρ ln(1/δ)).

    The boundary must be fixed before the run: evaluate every level of one run with the
    same ``rho_ref``.

    Parameters
    ----------
    rho : one level ρ > 0 or an array of levels (e.g. a run's whole grid).
    delta : δ in (0, 1).
    boundary : "mixture" (default) or "linear".
    rho_ref : ρ̃ of the mixture (default: the smallest entry of ``rho``, i.e. ρ_1 when the
        whole grid is passed) or the anchor ρ* of the linear boundary (required).
    """
    levels = np.asarray(rho, dtype=np.float64)
    if levels.size == 0 or not np.all(np.isfinite(levels)) or np.any(levels <= 0):
        raise AccFirstError("every level ρ must be a finite number > 0")
    log_term = math.log(1.0 / delta)
    if boundary not in BOUNDARIES:
        raise AccFirstError(f"boundary must be one of {BOUNDARIES}; got {boundary!r}")
    if rho_ref is None:
        if boundary == "linear":
            raise AccFirstError("the linear boundary needs an anchor: pass rho_ref = ρ*, fixed before the run")
        ref = float(levels.min())
    else:
        ref = rho_ref
    if boundary == "linear":
        values = levels + math.sqrt(ref * log_term) * (1.0 + levels / ref)
    else:
        values = levels + 2.0 * np.sqrt((levels + ref) * (log_term + 0.5 * np.log1p(levels / ref)))
    return float(values) if values.ndim == 0 else values


def variance_matched_rhos(epsilons: ArrayLike, l1_sensitivity: float, l2_sensitivity: float) -> NDArray[np.float64]:
    """ρ_k whose Gaussian noise has the variance of Lap(Δ₁/ε_k): T_k = 2(Δ₁/ε_k)², ρ_k = Δ₂²/(2T_k)
    (docs/mathematics.md#brownian-noise-reduction).

    Parameters
    ----------
    epsilons : the Laplace grid ε_1 < … < ε_K.
    l1_sensitivity, l2_sensitivity : Δ₁ of the Laplace mechanism and Δ₂ of the Gaussian one.
    """
    eps = validate_levels(epsilons)
    ratio = validate_sensitivity(l2_sensitivity) / (2.0 * validate_sensitivity(l1_sensitivity))
    return (ratio * eps) ** 2
