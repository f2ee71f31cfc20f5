"""Ideal noise known to an interval (docs/mathematics.md, "Noise that float64 cannot betray").

Deterministic checks: the float64 enclosures hold the exact ones (which hold the ideal value),
numpy's log and cos are as accurate as the enclosures assume, the exact enclosures shrink and
nest, and ``resolve`` reaches the decision the ideal value dictates. Statistical checks (fixed
seeds, KS at p > 1e-3, so a correct sampler fails a given seed with probability ≤ 1e-3): the
midpoints follow the Laplace and Gaussian laws.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
from scipy import stats

from accfirst.mechanisms import ideal_noise
from accfirst.mechanisms.ideal_noise import (
    LIBM_ERROR,
    UNIFORM_BITS,
    UniformBits,
    draw_gaussian,
    draw_laplace,
    gaussian_exact,
    gaussian_fast,
    laplace_exact,
    laplace_fast,
    resolve,
)

PRECISION = 40


def cells(rng: np.random.Generator, size: int) -> np.ndarray:
    """53-bit cells spread over every scale: uniform, near 0 (large −ln U) and near 1 (−ln U near 0)."""
    return np.concatenate(
        [
            rng.integers(0, 2**UNIFORM_BITS, size),
            rng.integers(0, 2**20, size // 4),
            2**UNIFORM_BITS - 1 - rng.integers(0, 2**20, size // 4),
            [0, 1, 2, 2**UNIFORM_BITS - 2, 2**UNIFORM_BITS - 1],
        ]
    ).astype(np.int64)


def middle(interval) -> Decimal:
    return (interval.lo + interval.hi) / 2


def test_numpy_log_cos_and_sin_are_within_an_eighth_of_the_assumed_error() -> None:
    """The fast enclosures assume |np.log(x) − ln x| ≤ 2⁻⁴⁸|ln x| and |np.cos(y) − cos y|,
    |np.sin(y) − sin y| ≤ 2⁻⁴⁸ on [0, 2π]; this measures all three against 40-digit decimals on
    the arguments the samplers use."""
    tops = cells(np.random.default_rng(0), 4000)
    x = (tops + 1) * 2.0**-UNIFORM_BITS
    worst_log = 0.0
    with localcontext() as context:
        context.prec = PRECISION
        for value, computed in zip(x, np.log(x)):
            exact = Decimal(float(value)).ln()
            if exact != 0:
                worst_log = max(worst_log, abs(float((Decimal(float(computed)) - exact) / exact)))
    assert worst_log <= LIBM_ERROR / 8, worst_log
    angles = (tops[:3000] + 0.5) * (2.0 * math.pi * 2.0**-UNIFORM_BITS)
    worst = 0.0
    with localcontext() as context:
        context.prec = PRECISION
        for angle, cosine, sine in zip(angles, np.cos(angles), np.sin(angles)):
            # cos y = 8c⁴ − 8c² + 1 and sin y = 4sc(2c² − 1) with c = cos(y/4), s = sin(y/4)
            quarter = Decimal(float(angle)) / 4
            c, s = middle(ideal_noise._cosine_at(quarter)), middle(ideal_noise._sine_at(quarter))
            worst = max(worst, abs(float(Decimal(float(cosine)) - (8 * c**4 - 8 * c**2 + 1))))
            worst = max(worst, abs(float(Decimal(float(sine)) - 4 * s * c * (2 * c**2 - 1))))
    assert worst <= LIBM_ERROR / 8, worst


def exact_laplace(bits: UniformBits, key: object, packed: int, precision: int = PRECISION):
    with localcontext() as context:
        context.prec = precision
        return laplace_exact(bits, key, packed, precision)


def exact_gaussian(
    bits: UniformBits, key: object, tops: tuple[int, int], sine: bool = False, precision: int = PRECISION
):
    with localcontext() as context:
        context.prec = precision
        return gaussian_exact(bits, key, tops, sine, precision)


def test_fast_laplace_enclosure_holds_the_exact_one() -> None:
    rng = np.random.default_rng(1)
    tops = cells(rng, 3000)
    packed = 2 * tops + rng.integers(0, 2, tops.size)
    scale = 0.37
    mid, rad = laplace_fast(packed, scale)
    bits = UniformBits(np.random.default_rng(2))
    for j in range(tops.size):
        interval = exact_laplace(bits, j, int(packed[j]))
        if interval is None:  # J = 0: −ln U is unbounded on its cell
            assert tops[j] == 0
            continue
        lo, hi = scale * float(interval.lo), scale * float(interval.hi)
        assert mid[j] - rad[j] <= lo * (1 - 1e-15) - 1e-300 and hi * (1 - 1e-15) <= mid[j] + rad[j], j


def test_fast_gaussian_enclosure_holds_the_exact_one_in_every_quadrant() -> None:
    """Both values of each Box–Muller pair (cosine and sine), uniforms near 0 and 1 and angles at
    the quadrant boundaries included."""
    rng = np.random.default_rng(3)
    first = cells(rng, 2000)
    second = rng.integers(0, 2**UNIFORM_BITS, first.size)
    second[:8] = [0, 2**51, 2**52, 3 * 2**51, 2**51 - 1, 2**52 - 1, 3 * 2**51 - 1, 2**UNIFORM_BITS - 1]
    tops = np.stack([first, second])
    mid, rad = gaussian_fast(tops, 2 * first.size)
    bits = UniformBits(np.random.default_rng(4))
    checked = 0
    for j in range(2 * first.size):
        pair = (int(tops[0, j // 2]), int(tops[1, j // 2]))
        interval = exact_gaussian(bits, j // 2, pair, sine=j % 2 == 1)
        if interval is None:
            assert pair[0] == 0
            continue
        checked += 1
        assert mid[j] - rad[j] <= float(interval.lo) + 1e-300 and float(interval.hi) <= mid[j] + rad[j] + 1e-300, j
    assert checked > 4000
    # An odd size drops the last sine.
    assert gaussian_fast(tops[:, :3], 5)[0].size == 5


def test_exact_enclosures_nest_and_shrink_with_precision() -> None:
    bits = UniformBits(np.random.default_rng(5))
    packed = int(draw_laplace(np.random.default_rng(6), 1)[0])
    tops = tuple(int(t) for t in draw_gaussian(np.random.default_rng(7), 1)[:, 0])
    for enclose in (
        lambda p: exact_laplace(bits, "laplace", packed, p),
        lambda p: exact_gaussian(bits, "gaussian", tops, precision=p),
    ):
        coarse, fine = enclose(30), enclose(120)
        assert coarse.lo <= fine.lo <= fine.hi <= coarse.hi
        assert float(fine.hi - fine.lo) < 1e-100 < float(coarse.hi - coarse.lo)


def test_uniform_bits_stay_the_same_once_drawn() -> None:
    bits = UniformBits(np.random.default_rng(8))
    with localcontext() as context:
        context.prec = 100
        fine = bits.cell("u", 12345, 100)
        context.prec = 20
        coarse = bits.cell("u", 12345, 20)  # bits already drawn: the same, finer cell
        other = bits.cell("v", 12345, 20)
    assert coarse.lo <= fine.lo <= fine.hi <= coarse.hi or fine == coarse
    assert float(fine.hi - fine.lo) < 2.0**-300
    assert Decimal(12345) / Decimal(2**53) <= other.lo.next_plus()


def test_pi_and_the_series_are_enclosed() -> None:
    with localcontext() as context:
        context.prec = 50
        pi = ideal_noise._pi(50)
        assert pi.lo < Decimal("3.14159265358979323846264338327950288419716939937510") < pi.hi
        assert float(pi.hi - pi.lo) < 1e-45
        for y in ("0", "0.3", "1.2", "1.5707963267948966"):
            cosine, sine = ideal_noise._cosine_at(Decimal(y)), ideal_noise._sine_at(Decimal(y))
            assert float(cosine.lo) <= math.cos(float(y)) + 1e-15 and math.cos(float(y)) - 1e-15 <= float(cosine.hi)
            assert float(sine.lo) <= math.sin(float(y)) + 1e-15 and math.sin(float(y)) - 1e-15 <= float(sine.hi)
            assert float(cosine.hi - cosine.lo) < 1e-45


def test_resolve_reaches_the_decision_of_the_ideal_value() -> None:
    """A Laplace value compared with thresholds a hair away from it: the fast enclosure cannot tell,
    ``resolve`` draws more bits until it can, and its answer agrees with an enclosure 100 digits fine."""
    bits = UniformBits(np.random.default_rng(9))
    packed = int(draw_laplace(np.random.default_rng(10), 1)[0])
    reference = exact_laplace(bits, "x", packed, 100)
    value = Fraction(reference.lo)
    for offset in (Fraction(1, 10**60), Fraction(-1, 10**60), Fraction(1, 10**25)):
        threshold = value + offset

        def above(lo: Fraction, hi: Fraction, threshold: Fraction = threshold) -> bool | None:
            return True if lo > threshold else False if hi <= threshold else None

        assert resolve(lambda p: exact_laplace(bits, "x", packed, p), above) is (offset < 0)


def test_midpoints_follow_the_laplace_and_gaussian_laws() -> None:
    rng = np.random.default_rng(11)
    mid, _ = laplace_fast(draw_laplace(rng, 50_000), 2.5)
    assert stats.kstest(mid, stats.laplace(scale=2.5).cdf).pvalue > 1e-3
    mid, _ = gaussian_fast(draw_gaussian(rng, 50_000), 50_000)
    assert stats.kstest(mid, stats.norm.cdf).pvalue > 1e-3
    # The same test sees a standard deviation 5% off: it has the power to catch a wrong law.
    assert stats.kstest(1.05 * mid, stats.norm.cdf).pvalue < 1e-3


def test_the_cell_at_zero_goes_to_the_exact_path() -> None:
    """U's first cell [0, 2⁻⁵³] leaves −ln U unbounded: the fast radius is huge, so every decision
    about it is taken exactly, where U's further bits bound it."""
    _, rad = laplace_fast(np.array([0, 1], dtype=np.int64), 1.0)
    assert np.all(rad > 1e15)
    _, rad = gaussian_fast(np.array([[0], [5]], dtype=np.int64), 2)
    assert np.all(rad > 1e6)
    bits = UniformBits(np.random.default_rng(12))
    interval = exact_laplace(bits, "zero", 0)
    assert interval is not None and float(interval.hi - interval.lo) < 1e-30 and float(interval.lo) > 36
