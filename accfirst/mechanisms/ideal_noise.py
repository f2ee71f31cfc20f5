"""Ideal Laplace and Gaussian noise, known to an interval that can always be narrowed.

[derived; the technique is Haney et al.'s interval refining, 2022] docs/mathematics.md,
"Noise that float64 cannot betray".

A float64 sample of Laplace or Gaussian noise is not the real-valued noise the privacy proofs
are about: its values lie on an irregular grid, and which grid points v + noise can reach
depends on v (Mironov 2012). Here the noise is the ideal real-valued one. Every noise value is
a fixed function of independent ideal uniforms U ∈ (0, 1) — a unit Laplace value is
s·(−ln U) with a random sign s, a pair of standard Gaussian ones √(−2 ln U₁)·(cos, sin)(2πU₂)
(Box–Muller) — and a uniform is known by its first 53 bits, which put it in a cell of width
2⁻⁵³; its further bits are drawn only when a decision needs them (``UniformBits``).

Two evaluations enclose a noise value:

- *fast*, vectorised in float64: a midpoint and a radius bounding every rounding, the width of
  the uniform's cell, and the error of numpy's log, cos and sin, assumed at most ``LIBM_ERROR``
  (2⁻⁴⁸: 32 units in the last place; a test measures the real error, about one unit);
- *exact*, one value at a time in decimal arithmetic at any precision: each operation is
  correctly rounded by Python's decimal module and then widened outwards by one unit in the
  last place; π, cos and sin come from alternating series summed with guard digits and
  bounded by their first omitted term; each uniform brings as many bits as the precision needs.

A decision about the ideal value (which lattice cell holds v + N, whether N clears a threshold)
is taken from the fast enclosure when it settles it, else from exact enclosures at doubling
precision, which shrink to the ideal value (``resolve``). The decision is then a deterministic
function of the ideal noise, and its law is exactly the law the proofs assume.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from decimal import Decimal, getcontext, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from accfirst.mechanisms import draws
from accfirst.mechanisms.draws import UNIFORM_BITS, WORD_BITS

# Assumed bound on numpy's float64 log (relative) and cos, sin (absolute, on [0, 2π]); measured ≈ 2⁻⁵³.
LIBM_ERROR = 2.0**-48
ROUNDOFF = 2.0**-53
# A radius computed in float64 is multiplied by this: it covers the few dozen roundings (each
# ≤ 2⁻⁵³ relative) made while computing it.
GROW = 1.0 + 2.0**-40
CELL = 2.0**-UNIFORM_BITS
# cos or sin of 2πU on U's cell, computed at (J + ½)·fl(2π)·2⁻⁵³: the cell and the rounding of
# J + ½ (2π·2⁻⁵³), the float 2π (2⁻⁵¹), the product's rounding (2π·2⁻⁵³) and numpy's cos or sin
# (LIBM_ERROR) add up to less than 2⁻⁴⁷.
_COS_RADIUS = 2.0**-47
# J = 0 (probability 2⁻⁵³) has an unbounded cell for −ln U: a finite stand-in keeps NaN out.
_SMALLEST_TOP = 2.0**-60
# Exact enclosures start at this many decimal digits and double until they decide.
START_PRECISION = 30
# Far beyond what any decision needs (each doubling halves the digits left to a boundary).
MAX_PRECISION = 2**16


def draw_laplace(rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.int64]:
    """Unit Laplace draws, packed: bit 0 is the sign, the 53 bits above it the uniform's cell."""
    return draws.signed_cells(rng, size)


def draw_gaussian(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
    """Standard Gaussian draws in Box–Muller pairs: row 0 the cells of U₁ (radius), row 1 those of U₂ (angle).

    ⌈size/2⌉ pairs; value j is the cosine (j even) or sine (j odd) value of pair j // 2.
    """
    return draws.uniform_cells(rng, (2, (size + 1) // 2))


# For s·E with E = −ln U on U's cell, Ẽ the computed −ln of the cell's top end and w = 1/J ≥ the
# cell's width in E, and a scale s̃ within 2·2⁻⁵³ of s:
# |s·E − s̃·(Ẽ + w/2)| ≤ s̃·(_WIDTH·w + _LOG·Ẽ), roundings included (docs/mathematics.md).
_WIDTH = GROW * (0.5 + 5.0 * ROUNDOFF)
_LOG = GROW * (LIBM_ERROR * (1.0 + 2.0 * LIBM_ERROR) + 5.0 * ROUNDOFF)


def laplace_fast(
    packed: NDArray[np.int64], scale: float | NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Midpoints and radii enclosing the Laplace values of scale s of ``draw_laplace`` draws."""
    top = packed >> 1
    low = -np.log((top + 1) * CELL)  # (J + 1)·2⁻⁵³ is exact
    width = 1.0 / np.maximum(top, _SMALLEST_TOP)
    signed = scale * (1 - 2 * (packed & 1))
    return signed * (low + 0.5 * width), scale * (_WIDTH * width + _LOG * low)


# Box–Muller's radius r = √(2E), E = −ln U₁ within e_rad = _WIDTH·w + _LOG·Ẽ of its computed
# midpoint e (as in laplace_fast at scale 1): |r − √(2e)| = 2|E − e|/(r + √(2e)) ≤ 2·e_rad/√(2e).
# A value r·c with c = cos or sin, |c| ≤ 1 and c within _COS_RADIUS of the computed one, is then
# within (r's radius)(1 + _COS_RADIUS) + √(2e)(_COS_RADIUS + 2·2⁻⁵³) of √(2e)·c̃, roundings included:
_PAIR_WIDTH = GROW**2 * 2.0 * (1.0 + _COS_RADIUS) * _WIDTH
_PAIR_LOG = GROW**2 * 2.0 * (1.0 + _COS_RADIUS) * _LOG
_PAIR_RADIUS = GROW**2 * (ROUNDOFF * (1.0 + _COS_RADIUS) + _COS_RADIUS + 2.0 * ROUNDOFF)
# Times a scale s̃ within 2·2⁻⁵³ of s (and its rounding): 3·2⁻⁵³ of |value| ≤ √(2e) more.
_SCALED_PAIR_RADIUS = _PAIR_RADIUS + 3.0 * GROW**2 * ROUNDOFF


def gaussian_fast(
    tops: NDArray[np.integer], size: int, scale: float = 1.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Midpoints and radii enclosing ``size`` Gaussian values s·√(−2 ln U₁)·(cos, sin)(2πU₂) of ``draw_gaussian`` cells.

    ``scale`` is the standard deviation s, held to 2·2⁻⁵³ relative.
    """
    log_top = np.log((tops[0] + 1) * CELL)  # −Ẽ; (J + 1)·2⁻⁵³ is exact
    width = 1.0 / np.maximum(tops[0], _SMALLEST_TOP)
    radius = np.sqrt(2.0 * (0.5 * width - log_top))
    pair_rad = (_PAIR_WIDTH * width - _PAIR_LOG * log_top) / radius + _SCALED_PAIR_RADIUS * radius
    pair_rad *= scale
    radius *= scale
    angle = (tops[1] + 0.5) * (2.0 * math.pi * CELL)
    mid = np.empty((angle.size, 2))
    np.cos(angle, out=mid[:, 0])
    np.sin(angle, out=mid[:, 1])
    mid *= radius[:, None]
    return mid.reshape(-1)[:size], np.repeat(pair_rad, 2)[:size]


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] of decimals holding an ideal value."""

    lo: Decimal
    hi: Decimal


# The interval operations below run inside a decimal context set by ``resolve``; every result
# is the correctly rounded one widened by one unit in the last place, so it holds the exact one.


def _out(lo: Decimal, hi: Decimal) -> Interval:
    return Interval(lo.next_minus(), hi.next_plus())


def exact(value: int | float | Fraction) -> Interval:
    """An enclosure of a rational number (a float64 is one; an integer is held exactly)."""
    if isinstance(value, int):
        whole = Decimal(value)
        return Interval(whole, whole)
    q = Fraction(value)
    nearest = Decimal(q.numerator) / Decimal(q.denominator)
    return _out(nearest, nearest)


def add(*terms: Interval) -> Interval:
    """An enclosure of the sum."""
    lo, hi = terms[0].lo, terms[0].hi
    for term in terms[1:]:
        lo, hi = (lo + term.lo).next_minus(), (hi + term.hi).next_plus()
    return Interval(lo, hi)


def negate(a: Interval) -> Interval:
    return Interval(-a.hi, -a.lo)


def multiply(a: Interval, b: Interval) -> Interval:
    """An enclosure of the product."""
    products = (a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)
    return _out(min(products), max(products))


def square_root(a: Interval) -> Interval:
    """An enclosure of √a for a ≥ 0 (a lower end below 0 from widening counts as 0)."""
    return _out(max(a.lo, Decimal(0)).sqrt(), a.hi.sqrt())


_GUARD_DIGITS = 20


def _alternating(first: Callable[[], Decimal], ratio: Callable[[int], Decimal]) -> Interval:
    """Σ_k (−1)^k t_k with t_0 = ``first()`` ≤ 2 and t_k = t_{k−1}·ratio(k), the t_k falling from k = 1 on.

    Evaluated with 20 guard digits (``first`` and ``ratio`` too) until a term is below
    10^−(P+5), P the context's precision. ``first`` and each ratio take at most two roundings
    and each step one more, so t_k carries a relative error ≤ 3(k + 1)·5·10^−(P+20); over
    n ≤ 10⁵ terms of size ≤ 2 the sum is within 10^−(P+5) of the truncated series, and the
    alternating tail is at most the first term left out (twice it covers its own rounding).
    """
    precision = getcontext().prec
    with localcontext() as context:
        context.prec = precision + _GUARD_DIGITS
        floor = Decimal(10) ** -(precision + 5)
        total = term = first()
        k = 0
        while True:
            k += 1
            term = term * ratio(k)
            if term < floor:
                break
            total = total - term if k % 2 else total + term
        allowance = floor + 2 * term
        return Interval(total - allowance, total + allowance)


def _arctan_inverse(x: int) -> Interval:
    """atan(1/x) = Σ (−1)^k / ((2k + 1)·x^{2k+1}) for an integer x ≥ 2."""
    return _alternating(lambda: Decimal(1) / Decimal(x), lambda k: Decimal(2 * k - 1) / Decimal((2 * k + 1) * x * x))


@lru_cache(maxsize=16)
def _pi(precision: int) -> Interval:
    """π = 16·atan(1/5) − 4·atan(1/239) (Machin's formula)."""
    with localcontext() as context:
        context.prec = precision
        return add(multiply(exact(16), _arctan_inverse(5)), negate(multiply(exact(4), _arctan_inverse(239))))


def _cosine_at(y: Decimal) -> Interval:
    """cos y = Σ (−1)^k y^{2k}/(2k)! for 0 ≤ y ≤ 2 (the terms fall from k = 1 on)."""
    return _alternating(lambda: Decimal(1), lambda k: y * y / Decimal((2 * k - 1) * (2 * k)))


def _sine_at(y: Decimal) -> Interval:
    """sin y = Σ (−1)^k y^{2k+1}/(2k+1)! for 0 ≤ y ≤ 2."""
    return _alternating(lambda: y, lambda k: y * y / Decimal((2 * k) * (2 * k + 1)))


class UniformBits:
    """The bits of ideal uniforms beyond their first 53, drawn from ``rng`` the first time a decision needs them.

    A uniform is named by a hashable key; its bits, once drawn, stay the same for every later
    decision about it.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._extra: dict[Hashable, tuple[int, int]] = {}

    def cell(self, key: Hashable, top: int, precision: int) -> Interval:
        """An enclosure of the uniform ``key`` with first bits ``top``, from enough bits for ``precision`` digits."""
        value, count = self._extra.get(key, (0, 0))
        needed = math.ceil(precision * math.log2(10)) + 8
        while count < needed:
            value = (value << WORD_BITS) | draws.word(self._rng)
            count += WORD_BITS
        self._extra[key] = (value, count)
        low = (int(top) << count) | value
        scale = Decimal(2 ** (UNIFORM_BITS + count))
        return _out(Decimal(low) / scale, Decimal(low + 1) / scale)


def _exponential_exact(u: Interval) -> Interval | None:
    """−ln U over an enclosure of U; ``None`` while the enclosure reaches 0 (unbounded).

    One logarithm: ln(hi) − ln(lo) ≤ (hi − lo)/lo.
    """
    if u.lo <= 0:
        return None
    low = -(u.hi.ln())
    return _out(low, low + ((u.hi - u.lo) / u.lo).next_plus())


def laplace_exact(bits: UniformBits, key: Hashable, packed: int, precision: int) -> Interval | None:
    """An enclosure of the unit Laplace value of one ``draw_laplace`` draw, or ``None`` if still unbounded."""
    magnitude = _exponential_exact(bits.cell(key, int(packed) >> 1, precision))
    if magnitude is None:
        return None
    return negate(magnitude) if int(packed) & 1 else magnitude


def scaled_laplace_exact(
    bits: UniformBits, key: Hashable, packed: int, scale: Fraction, precision: int
) -> Interval | None:
    """An enclosure of s·L, L the unit Laplace value of one ``draw_laplace`` draw and s = ``scale`` exactly."""
    unit = laplace_exact(bits, key, packed, precision)
    return None if unit is None else multiply(exact(scale), unit)


def gaussian_exact(
    bits: UniformBits, key: Hashable, tops: tuple[int, int], sine: bool, precision: int
) -> Interval | None:
    """An enclosure of √(−2 ln U₁)·cos(2πU₂) (or ·sin, ``sine``) for one ``draw_gaussian`` pair, or ``None`` if still unbounded.

    The angle is reduced by the quadrant q = ⌊4U₂⌋ (U₂'s top two bits): cos(qπ/2 + y) is cos y,
    −sin y, −cos y or sin y with y = 2π(U₂ − q/4) ∈ [0, π/2]; sin(2πU₂) = cos((q − 1)π/2 + y).
    """
    energy = _exponential_exact(bits.cell((key, 0), tops[0], precision))
    if energy is None:
        return None
    radius = square_root(multiply(exact(2), energy))
    quadrant = int(tops[1]) >> (UNIFORM_BITS - 2)
    angle = bits.cell((key, 1), tops[1], precision)
    offset = add(angle, exact(Fraction(-quadrant, 4)))
    y = multiply(multiply(exact(2), _pi(getcontext().prec)), Interval(max(offset.lo, Decimal(0)), offset.hi))
    # cos and sin are 1-Lipschitz: their value at y's midpoint, widened by y's half-width.
    middle = (y.lo + y.hi) / 2
    spread = max(y.hi - middle, middle - y.lo).next_plus()
    turn = (quadrant - 1) % 4 if sine else quadrant
    value = _cosine_at(middle) if turn % 2 == 0 else _sine_at(middle)
    value = _out(value.lo - spread, value.hi + spread)
    if turn in (1, 2):
        value = negate(value)
    return multiply(radius, value)


Decision = TypeVar("Decision")


def resolve(
    enclose: Callable[[int], Interval | None], decide: Callable[[Fraction, Fraction], Decision | None]
) -> Decision:
    """The decision ``decide`` takes about an ideal value, from its enclosures at doubling precision.

    ``enclose(precision)`` returns an interval holding the ideal value (or ``None`` while it is
    unbounded); ``decide(lo, hi)`` returns the decision if it is the same for every value in
    [lo, hi], else ``None``. The enclosures shrink to the ideal value, so this ends with
    probability 1 (an ideal value on a decision boundary has probability 0).
    """
    precision = START_PRECISION
    while precision <= MAX_PRECISION:
        with localcontext() as context:
            context.prec = precision
            enclosure = enclose(precision)
        if enclosure is not None:
            decision = decide(Fraction(enclosure.lo), Fraction(enclosure.hi))
            if decision is not None:
                return decision
        precision *= 2
    raise RuntimeError("an exact noise enclosure did not shrink: this is a bug in accfirst")
