"""A differentially private quantile: the exponential mechanism over a public grid of candidates.

The candidates never come from the data (not its minimum, not its maximum): they are a fixed
grid covering every scale a table column is likely to use, 0, the whole numbers up to 100 and
64 values per decade from 10⁻⁶ to 10¹², with both signs (neighbours 3.7% apart). Candidate ``c_i``
stands for its cell ``[b_i, b_{i+1})``, the cells' boundaries halfway between neighbouring
candidates, and scores ``u(c_i) = −max(#{x < b_i} − t, t − #{x < b_{i+1}}, 0)`` with ``t = q·m``,
m the column's non-missing values: 0 for the one cell that holds the q-quantile, minus the number
of values it is off by otherwise. (A candidate that stood for the open gap between its two
neighbours, as before, scored 0 on both sides of the quantile, so the draw was a whole grid step
off half the time.) The cells tile the line, so a value that many rows share lies in one cell and
draws its candidate. Replacing one row moves each count by at most 1 and ``t`` by at most q, in
directions that never add up past 1, so the sensitivity is 1 also when a gap becomes a value or a
value a gap (docs/mathematics.md#preparing-the-data-privately).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.datasets.prepare.noise import exponential_mechanism

_DECADES = (-6, 12)
_PER_DECADE = 64
_MAGNITUDES = np.unique(
    np.concatenate(
        [
            np.arange(1.0, 101.0),
            10.0 ** (np.arange(_DECADES[0] * _PER_DECADE, _DECADES[1] * _PER_DECADE + 1) / _PER_DECADE),
        ]
    )
)
QUANTILE_SENSITIVITY = 1.0


@dataclass(frozen=True)
class Grid:
    """Public candidates, ascending, and the boundaries b_0 = −∞ < b_1 < … < b_K = ∞ of their cells."""

    candidates: np.ndarray
    bounds: np.ndarray

    @classmethod
    def of(cls, candidates: np.ndarray) -> Grid:
        bounds = np.concatenate([[-np.inf], (candidates[:-1] + candidates[1:]) / 2, [np.inf]])
        for array in (candidates, bounds):
            array.flags.writeable = False
        return cls(candidates, bounds)


# Values of a column: both signs. A deviation from a centre is never negative: 0 and the positive magnitudes.
VALUES = Grid.of(np.concatenate([-_MAGNITUDES[::-1], [0.0], _MAGNITUDES]))
DEVIATIONS = Grid.of(np.concatenate([[0.0], _MAGNITUDES]))


def quantile_utility(sorted_values: np.ndarray, q: float, grid: Grid = VALUES) -> np.ndarray:
    """Each of ``grid``'s candidates' utility for the q-quantile of ``sorted_values`` (finite, ascending)."""
    target = q * len(sorted_values)
    below = np.searchsorted(sorted_values, grid.bounds, side="left")  # #{x < b_i}, i = 0 … K
    utility: np.ndarray = -np.maximum(np.maximum(below[:-1] - target, target - below[1:]), 0.0)
    return utility


def private_quantile(
    sorted_values: np.ndarray, q: float, epsilon: float, rng: np.random.Generator, grid: Grid = VALUES
) -> float:
    """An ε-DP q-quantile of ``sorted_values`` (finite, ascending): one of ``grid``'s candidates."""
    utility = quantile_utility(sorted_values, q, grid)
    return float(grid.candidates[exponential_mechanism(utility, epsilon, QUANTILE_SENSITIVITY, rng)])
