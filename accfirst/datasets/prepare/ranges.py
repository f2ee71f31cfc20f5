"""The private range of a numeric column: a pair of private quartiles, widened
(docs/mathematics.md#preparing-the-data-privately).

The quartiles Q₁ and Q₃ are released by the exponential mechanism over the public grid of
``quantile``, ε/2 each, and widened by their distance on each side: ``[Q₁ − (Q₃ − Q₁), Q₃ + (Q₃ − Q₁)]``
(post-processing; ±2 standard deviations for a normal column, which clips 2.3% of its values at
each end: measured, a wider range, such as Tukey's fences at 1.5 times the distance, shrinks
the typical value against the bound every row is divided by and costs more fit than it saves). Quartiles sit a quarter of the
rows away from either end, so the mechanism finds them at a small ε where extreme quantiles
(the 1% or 99%) would need ten times more. When the two quartiles are equal (a column whose
middle half is one value v, such as a 0/1 flag or a mostly-zero count), the range is
``[v − w, v + w]`` with ``w = max(1, |v|)``: a public rule on the released value. Values outside
the range are clipped to it: the range bounds every later statistic's sensitivity.
"""

from __future__ import annotations

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord
from accfirst.datasets.prepare.quantile import QUANTILE_SENSITIVITY, private_quantile, quantile_utility

RANGE_QUANTILES = (0.25, 0.75)
RANGE_WIDENING = 1.0


def fences(low: float, high: float) -> tuple[float, float]:
    """The range from two released quartiles (see the module docstring)."""
    width = RANGE_WIDENING * (high - low) if high > low else max(1.0, abs(low))
    return low - width, high + width


def finite_sorted(values: np.ndarray) -> np.ndarray:
    """The column's non-missing values, ascending."""
    return np.sort(values[np.isfinite(values)])


class PrivateRange(Step):
    """Release a range ``[a, b]`` for a numeric column that has no declared one."""

    name = "private range"
    kind = PRIVATE
    weight = 2.0
    needs = "the column holds numbers and has no declared range"
    reads = "its quartiles (training rows, gaps left out)"
    mechanism = "exponential mechanism over a public grid, ε/2 per quantile, sensitivity 1"
    writes = "the range [a, b] the column is clipped to"

    def statistic(self, context: Context) -> np.ndarray:
        values = finite_sorted(context.numbers(self.plan.name))
        return np.concatenate([quantile_utility(values, q) for q in RANGE_QUANTILES])

    def sensitivity(self, context: Context) -> float:
        return QUANTILE_SENSITIVITY

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        values = finite_sorted(context.numbers(self.plan.name))
        low, high = sorted(private_quantile(values, q, epsilon / 2, context.rng) for q in RANGE_QUANTILES)
        plan = self.plan
        plan.low, plan.high = fences(low, high)
        return self.record(
            f"{quoted(plan.name)}: private quartiles {low:.4g} and {high:.4g}, widened to the range "
            f"[{plan.low:.4g}, {plan.high:.4g}]; values outside are clipped to it (ε = {epsilon:.3g})",
            epsilon,
        )
