"""Released values on a lattice: the ideal noisy value, rounded exactly to the nearest lattice point.

[derived] docs/mathematics.md, "Noise that float64 cannot betray". A mechanism whose ideal
output is v + N (N real Laplace or Gaussian noise of scale s) releases instead

    g·⌊(v + N)/g + ½⌋,   g = 2^(4·⌊⌊log₂ s⌋/4⌋ − 16),

the lattice point of gℤ nearest to the ideal output. That is a post-processing of the ideal
mechanism, so its privacy guarantee holds unchanged: no ε is added. Every lattice point has
positive probability under every input, so no released value can rule a dataset out, and the
released float64 is the lattice point itself (exactly, while |v + N| < 2⁵³·g). g depends only on
the noise scale (public); the rounding moves a value by at most g/2 ≤ 2⁻¹⁷·s.

The rounding is decided exactly (``accfirst.mechanisms.ideal_noise``): from the fast float64
enclosure of N for nearly every coordinate (all but about one in 10⁷), from exact enclosures
for the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import overload

import numpy as np
from numpy.typing import NDArray

from accfirst.errors import AccFirstError
from accfirst.mechanisms.ideal_noise import GROW, ROUNDOFF, Interval, resolve

# The lattice spacing is a power of two between 2⁻²⁰ and 2⁻¹⁶ of the noise scale, the same for
# scales within a factor 16 (one rounding pass serves a noise-reduction chain across such a
# band). The rounding adds a variance of at most g²/12 < 2⁻³⁵·s²; the fast enclosure (radius
# ~2⁻⁴⁷·s per noise term) settles the cell of all but a few in 10⁸ coordinates.
LATTICE_BITS = 16
BAND_BITS = 4
# Below this noise scale the lattice spacing would underflow float64.
SMALLEST_SCALE = 2.0**-1000


@overload
def lattice_spacing(scale: float) -> float: ...
@overload
def lattice_spacing(scale: NDArray[np.float64]) -> NDArray[np.float64]: ...
def lattice_spacing(scale: float | NDArray[np.float64]) -> float | NDArray[np.float64]:
    """g = 2^(4·⌊⌊log₂ s⌋/4⌋ − 16) for a noise scale s > 0 (a Laplace scale or a Gaussian standard deviation).

    ``scale`` may be an array of scales (a chain's levels); then so is the result.
    """
    scales = np.asarray(scale, dtype=np.float64)
    if not np.all((scales >= SMALLEST_SCALE) & (scales < math.inf)):
        raise AccFirstError(f"a noise scale must be a finite number ≥ 2^-1000; got {scale!r}")
    _, exponent = np.frexp(scales)  # s = m·2^exponent with m ∈ [½, 1): ⌊log₂ s⌋ = exponent − 1
    spacing = np.ldexp(1.0, (exponent - 1) // BAND_BITS * BAND_BITS - LATTICE_BITS)
    return float(spacing) if spacing.ndim == 0 else spacing


def nearest_fast(
    centre: NDArray[np.float64],
    mid: NDArray[np.float64],
    rad: NDArray[np.float64],
    spacing: float,
    scale: float = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """g·⌊(v + sN)/g + ½⌋ for every N in [mid − rad, mid + rad], and where that is not one lattice point.

    ``scale`` s ≥ 0 is held to 2·2⁻⁵³ relative. v/g splits exactly into a whole part and a
    fraction (g is a power of two), so the rounding errors are those of z = fraction + sN/g + ½,
    a number of the size of sN/g. z's cell is certain when its distance to the nearest integer
    exceeds s·``rad``/g plus those roundings and the scale's error (at most 6·2⁻⁵³·(|z| + 2),
    bounded here by the largest |z|).
    """
    inverse = 1.0 / spacing  # exact: g is a power of two
    factor = scale * inverse
    scaled = centre * inverse
    whole = np.floor(scaled)
    z = scaled - whole
    z += mid * factor
    z += 0.5
    low = np.floor(z)
    fraction = z - low
    reach = rad * (GROW * factor)
    reach += 6.0 * ROUNDOFF * (float(np.max(np.abs(z), initial=0.0)) + 2.0)
    unsettled = ~(reach < fraction)
    unsettled |= ~(fraction < 1.0 - reach)
    whole += low
    whole *= spacing
    return whole, unsettled


def nearest_exact(centre: float, spacing: float, noise: Callable[[int], Interval | None]) -> float:
    """g·⌊(v + N)/g + ½⌋ for the ideal noise N that ``noise(precision)`` encloses (see ``resolve``)."""
    v, g = Fraction(centre), Fraction(spacing)

    def cell(lo: Fraction, hi: Fraction) -> int | None:
        first = math.floor((v + lo) / g + Fraction(1, 2))
        return first if first == math.floor((v + hi) / g + Fraction(1, 2)) else None

    return float(resolve(noise, cell) * g)


def release_nearest(
    centre: NDArray[np.float64],
    mid: NDArray[np.float64],
    rad: NDArray[np.float64],
    spacing: float,
    noise: Callable[[int, int], Interval | None],
    scale: float = 1.0,
) -> NDArray[np.float64]:
    """The lattice points nearest to v + sN, coordinate by coordinate, decided exactly.

    ``mid`` ± ``rad`` is the fast enclosure of N and ``scale`` s as in ``nearest_fast``;
    ``noise(j, precision)`` an exact enclosure of coordinate j's sN, asked for only where the
    fast one does not settle the cell.
    """
    values, unsettled = nearest_fast(centre, mid, rad, spacing, scale)
    for j in np.flatnonzero(unsettled).tolist():
        values[j] = nearest_exact(float(centre[j]), spacing, partial(noise, j))
    return values
