"""A differentially private quantile: the exponential mechanism over a public grid of candidates.

The candidates never come from the data (not its minimum, not its maximum): they are a fixed
grid covering every scale a table column is likely to use, 0, the whole numbers up to 100 and
16 values per decade from 10⁻⁶ to 10¹², with both signs. Candidate ``c_i`` stands for the gap
between its neighbours and scores ``u(c_i) = −max(#{x ≤ c_{i−1}} − t, t − #{x < c_{i+1}}, 0)``
with ``t = q·m``, m the column's non-missing values: 0 when a q-quantile lies strictly between
the neighbours, minus the number of values it is off by otherwise (so a grid coarser than the
data costs no utility). Replacing one row moves each count by at most 1 and ``t`` by at most q,
in directions that never add up past 1, so the sensitivity is 1 also when a gap becomes a value
or a value a gap (docs/mathematics.md, "Preparing the data privately").
"""

from __future__ import annotations

import numpy as np

from accfirst.datasets.prepare.noise import exponential_mechanism

_DECADES = (-6, 12)
_PER_DECADE = 16
_MAGNITUDES = np.unique(
    np.concatenate(
        [
            np.arange(1.0, 101.0),
            10.0 ** (np.arange(_DECADES[0] * _PER_DECADE, _DECADES[1] * _PER_DECADE + 1) / _PER_DECADE),
        ]
    )
)
CANDIDATES = np.concatenate([-_MAGNITUDES[::-1], [0.0], _MAGNITUDES])
CANDIDATES.flags.writeable = False
_PREVIOUS = np.concatenate([[-np.inf], CANDIDATES[:-1]])
_NEXT = np.concatenate([CANDIDATES[1:], [np.inf]])
QUANTILE_SENSITIVITY = 1.0


def quantile_utility(sorted_values: np.ndarray, q: float) -> np.ndarray:
    """Each candidate's utility for the q-quantile of ``sorted_values`` (finite, ascending)."""
    target = q * len(sorted_values)
    below = np.searchsorted(sorted_values, _PREVIOUS, side="right")  # #{x ≤ c_{i−1}}
    before_next = np.searchsorted(sorted_values, _NEXT, side="left")  # #{x < c_{i+1}}
    utility: np.ndarray = -np.maximum(np.maximum(below - target, target - before_next), 0.0)
    return utility


def private_quantile(sorted_values: np.ndarray, q: float, epsilon: float, rng: np.random.Generator) -> float:
    """An ε-DP q-quantile of ``sorted_values`` (finite, ascending): a candidate of the public grid."""
    utility = quantile_utility(sorted_values, q)
    return float(CANDIDATES[exponential_mechanism(utility, epsilon, QUANTILE_SENSITIVITY, rng)])
