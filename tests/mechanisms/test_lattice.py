"""Releases on a lattice (docs/mathematics.md, "Noise that float64 cannot betray").

The released value is the lattice point nearest to the ideal v + N. Checked here: the spacing
rule; that fast and exact decisions agree; that the rounded values have exactly the law of the
nearest lattice point of v + Lap(b) (chi-square on a coarse lattice, where that law is visible,
p > 1e-3: a correct sampler fails a given seed with probability ≤ 1e-3); that the Laplace and
Gaussian mechanisms release lattice points only.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import stats

from accfirst import AccFirstError
from accfirst.mechanisms.brownian import GAUSSIAN
from accfirst.mechanisms.ideal_noise import (
    Interval,
    UniformBits,
    draw_laplace,
    exact,
    laplace_exact,
    laplace_fast,
    multiply,
)
from accfirst.mechanisms.lattice import LATTICE_BITS, lattice_spacing, nearest_exact, release_nearest
from accfirst.mechanisms.noise_reduction import LAPLACE


def test_spacing_is_a_power_of_two_fixed_across_bands_of_sixteen() -> None:
    for scale in np.geomspace(1e-12, 1e12, 500):
        g = lattice_spacing(float(scale))
        mantissa, _ = math.frexp(g)
        assert mantissa == 0.5  # a power of two
        assert 2.0 ** -(LATTICE_BITS + 4) * scale < g <= 2.0**-LATTICE_BITS * scale
    assert lattice_spacing(1.0) == lattice_spacing(15.99) == 2.0**-LATTICE_BITS
    assert lattice_spacing(16.0) == 2.0 ** (4 - LATTICE_BITS)
    for bad in (0.0, -1.0, math.inf, math.nan, 1e-305):
        with pytest.raises(AccFirstError, match="noise scale"):
            lattice_spacing(bad)


def laplace_release(v: np.ndarray, scale: float, spacing: float, seed: int, force_exact: bool = False) -> np.ndarray:
    """The nearest lattice points of v + Lap(scale), through ``release_nearest``; ``force_exact``
    makes the fast enclosure useless so that every coordinate is decided exactly."""
    rng = np.random.default_rng(seed)
    packed = draw_laplace(rng, v.size)
    mid, rad = laplace_fast(packed, scale)
    bits = UniformBits(rng)

    def noise(j: int, precision: int):
        unit = laplace_exact(bits, j, int(packed[j]), precision)
        return None if unit is None else multiply(exact(scale), unit)

    return release_nearest(v, mid, np.full(v.size, 1e300) if force_exact else rad, spacing, noise)


def test_exact_decisions_agree_with_fast_ones() -> None:
    v = np.random.default_rng(0).normal(size=400) * 1e3
    fast = laplace_release(v, 0.7, lattice_spacing(0.7), seed=1)
    forced = laplace_release(v, 0.7, lattice_spacing(0.7), seed=1, force_exact=True)
    np.testing.assert_array_equal(fast, forced)


def rounded_laplace_pmf(v: float, scale: float, spacing: float, points: np.ndarray) -> np.ndarray:
    """P(nearest lattice point of v + Lap(scale) is k·g) for the lattice points k·g given."""
    cdf = stats.laplace(loc=v, scale=scale).cdf
    return cdf(points + spacing / 2) - cdf(points - spacing / 2)


@pytest.mark.parametrize("force_exact", [False, True])
def test_rounded_values_have_the_law_of_the_nearest_lattice_point(force_exact: bool) -> None:
    """On a coarse lattice (g = b/2) the rounding's law is visible: chi-square over 13 cells."""
    v, scale, spacing = 0.3, 1.0, 0.5
    size = 3000 if force_exact else 60_000
    released = laplace_release(np.full(size, v), scale, spacing, seed=2, force_exact=force_exact)
    k = np.rint(released / spacing)
    np.testing.assert_array_equal(k * spacing, released)  # lattice points, exactly
    cells = np.arange(-6, 7)
    expected = rounded_laplace_pmf(v, scale, spacing, cells * spacing)
    observed = np.array([np.count_nonzero(k == c) for c in cells], dtype=float)
    # Pool the two tails into the end cells.
    observed[0] += np.count_nonzero(k < cells[0])
    observed[-1] += np.count_nonzero(k > cells[-1])
    expected[0] = stats.laplace(loc=v, scale=scale).cdf(cells[0] * spacing + spacing / 2)
    expected[-1] = stats.laplace(loc=v, scale=scale).sf(cells[-1] * spacing - spacing / 2)
    assert stats.chisquare(observed, expected * size).pvalue > 1e-3
    # The law of rounding down instead (a plausible bug) is rejected by the same counts.
    cdf = stats.laplace(loc=v, scale=scale).cdf
    floor_law = cdf((cells[1:-1] + 1) * spacing) - cdf(cells[1:-1] * spacing)
    inner = observed[1:-1]
    assert stats.chisquare(inner, floor_law * inner.sum() / floor_law.sum()).pvalue < 1e-6


def test_a_value_on_a_cell_boundary_is_decided_by_the_ideal_noise() -> None:
    """v exactly halfway between two lattice points: the sign of the (tiny) ideal noise decides."""
    spacing = 2.0**-LATTICE_BITS
    centre = 1.0 - spacing / 2
    for sign, expected in ((1, 1.0), (-1, 1.0 - spacing)):

        def noise(precision: int, sign: int = sign) -> Interval:
            step = Decimal(10) ** -(precision // 2)  # shrinks with the precision but keeps its sign
            return Interval(step, 2 * step) if sign > 0 else Interval(-2 * step, -step)

        assert nearest_exact(centre, spacing, noise) == expected


@pytest.mark.parametrize("family", [LAPLACE, GAUSSIAN])
def test_mechanisms_release_lattice_points_around_any_centre(family) -> None:
    rng = np.random.default_rng(3)
    v = np.concatenate([rng.normal(size=300), [0.0, 1e9, -1e9, 3.5e-300]])
    sensitivity, level = 2.0, 0.5
    released = family.perturb(v, sensitivity, level, rng)
    scale = sensitivity / level if family is LAPLACE else sensitivity / math.sqrt(2 * level)
    spacing = lattice_spacing(scale)
    np.testing.assert_array_equal(np.rint(released / spacing) * spacing, released)
    assert np.all(np.abs(released - v) < 60 * scale)


def test_perturb_keeps_the_shape_and_is_repeatable() -> None:
    v = np.arange(12.0).reshape(3, 4)
    a = LAPLACE.perturb(v, 1.0, 1.0, np.random.default_rng(5))
    b = LAPLACE.perturb(v, 1.0, 1.0, np.random.default_rng(5))
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, b)


def test_forced_exact_path_is_deterministic_given_the_seed() -> None:
    v = np.linspace(-1, 1, 50)
    once = functools.partial(laplace_release, v, 0.2, lattice_spacing(0.2), 7, True)
    np.testing.assert_array_equal(once(), once())


def test_chains_exact_enclosures_agree_with_their_fast_ones() -> None:
    """The exact path of each chain finds each coordinate's draws again (the Laplace chain from its
    stored draws, the Brownian one by re-reading its stream) and encloses a value inside the fast
    enclosure, at every level read."""
    v = np.linspace(-3.0, 3.0, 40)
    chain = LAPLACE.chain(v, 1.0, np.geomspace(0.1, 10.0, 30), np.random.default_rng(8))
    for level in (0, 11, 29):
        chain.release(level)
        for j in range(v.size):
            k = int(chain._count[j])
            with localcontext() as context:
                context.prec = 40
                interval = chain._exact_noise(j, k, 40)
            mid, rad = chain._state[k, j].real, chain._state[k, j].imag
            assert mid - rad <= float(interval.lo) and float(interval.hi) <= mid + rad
    brownian = GAUSSIAN.chain(v, 1.0, np.geomspace(0.1, 10.0, 30), np.random.default_rng(9))
    for level in (0, 1, 17, 29):
        released = brownian.release(level)
        variance = 1.0 / (2 * brownian.levels[level])
        for j in range(v.size):
            with localcontext() as context:
                context.prec = 40
                interval = brownian._exact_noise(j, 40)
            mid, rad = variance * brownian._z_mid[j], variance * brownian._z_rad[j] * (1 + 1e-12)
            assert mid - rad <= float(interval.lo) and float(interval.hi) <= mid + rad
            # and the released value is the lattice point nearest to v + the enclosed noise
            assert abs(released[j] - (v[j] + float(interval.lo))) <= lattice_spacing(math.sqrt(variance)) / 2 + 1e-12
