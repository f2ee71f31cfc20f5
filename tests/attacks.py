"""What an attacker who has read the code computes (shared by the tests and benchmarks/bench_float_attack.py).

- ``numpy_laplace_can_produce``: Mironov's check (CCS 2012) against numpy's Laplace sampler, the
  noise accfirst added to released values before it released them on a lattice: which float64
  outputs can ``Generator.laplace(centre, scale)`` return?
- ``on_lattice``: the same question for a release on the lattice gℤ (docs/mathematics.md, "Noise
  that float64 cannot betray"): every lattice point has positive probability under every
  centre, so the answer is "yes" for every lattice point and does not depend on the centre.
- ``epsilon_lower_bound``: a lower confidence bound on the privacy loss from a histogram of
  releases under two neighbouring inputs.
- ``norm_from_two_radii``: ‖θ*‖ from two released private radii, if they shared their noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from accfirst.erm.radius import radius_margin
from accfirst.methods.radius import RadiusPlan

NUMPY_UNIFORM_BITS = 53


def numpy_laplace_value(k: int, centre: float, scale: float) -> float:
    """``Generator.laplace(centre, scale)`` when its uniform is U = k·2⁻⁵³, 1 ≤ k < 2⁵³.

    numpy's C code: centre − scale·log(2.0 − U − U) for U ≥ ½ (evaluated left to right), else
    centre + scale·log(U + U); Python floats make the same IEEE operations and call the same log.
    """
    u = k * 2.0**-NUMPY_UNIFORM_BITS
    if u >= 0.5:
        return centre - scale * math.log(2.0 - u - u)
    return centre + scale * math.log(u + u)


def numpy_laplace_can_produce(y: float, centre: float, scale: float) -> bool:
    """Whether ``Generator.laplace(centre, scale)`` can return exactly ``y``.

    Every operation of the sampler is monotone, so its value is non-decreasing in k: a binary
    search finds the first k whose value is ≥ y, and y is an output iff that value is y.
    """
    low, high = 1, 2**NUMPY_UNIFORM_BITS - 1
    if numpy_laplace_value(high, centre, scale) < y:
        return False
    while low < high:
        middle = (low + high) // 2
        if numpy_laplace_value(middle, centre, scale) < y:
            low = middle + 1
        else:
            high = middle
    return numpy_laplace_value(low, centre, scale) == y


def neighbour(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dataset with its last row replaced by an extreme one (‖x‖₁ = 1, the label flipped)."""
    X2, y2 = X.copy(), y.copy()
    X2[-1] = 0.0
    X2[-1, 0] = 1.0
    y2[-1] = -y[-1]
    return X2, y2


def on_lattice(values: np.ndarray, spacing: float) -> np.ndarray:
    """Whether each value is a point of spacing·ℤ (``spacing`` a power of two: the division is exact)."""
    scaled = np.asarray(values, dtype=np.float64) / spacing
    return scaled == np.rint(scaled)


def epsilon_lower_bound(here: np.ndarray, there: np.ndarray, failure: float = 1e-3) -> float:
    """A lower confidence bound on max_B |log P(B | D)/P(B | D′)| over the histogram cells B.

    ``here`` and ``there`` are the cell counts of releases under D and D′. Per cell and direction,
    a Clopper–Pearson lower bound of one probability over an upper bound of the other, each at
    ``failure``/(4·cells): with probability ≥ 1 − ``failure`` the result is below the true loss,
    so a mechanism that is ε-DP gives a value above ε with probability ≤ ``failure``.
    """
    here, there = np.asarray(here), np.asarray(there)
    level = failure / (4 * here.size)
    best = 0.0
    for a, b in ((here, there), (there, here)):
        na, nb = a.sum(), b.sum()
        lower = stats.beta.ppf(level, np.maximum(a, 1), na - a + 1)
        lower[a == 0] = 0.0
        upper = stats.beta.isf(level, b + 1, np.maximum(nb - b, 1))
        upper[b == nb] = 1.0
        with np.errstate(divide="ignore"):
            ratio = np.log(lower / upper)
        best = max(best, float(np.max(ratio)))
    return best


def norm_from_two_radii(plans: Sequence[RadiusPlan], radii: Sequence[float]) -> float:
    """N = ‖θ*‖ from two released radii R_i = N + b_i·L + m_i, on the hypothesis that they share their unit noise L.

    b_i = Δ_N/ε_R and the margin m_i come from each run's public plan (docs/mathematics.md#a-private-radius); two
    equations in N and L: L = ((R₁ − m₁) − (R₂ − m₂))/(b₁ − b₂), N = R₁ − m₁ − b₁·L.
    """
    (first, second), (r1, r2) = plans, radii
    m1, m2 = (radius_margin(p.sensitivity, p.level, p.beta, p.noise) for p in plans)
    b1, b2 = first.sensitivity / first.epsilon, second.sensitivity / second.epsilon
    unit = ((r1 - m1) - (r2 - m2)) / (b1 - b2)
    return r1 - m1 - b1 * unit
