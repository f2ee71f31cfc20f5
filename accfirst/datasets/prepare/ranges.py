"""The private range of a numeric column: its median and a robust spread around it
(docs/mathematics.md#preparing-the-data-privately).

``PrivateMedian`` releases the median M, and ``PrivateRange`` the median distance from it,
D = median |x − M| (the median absolute deviation), each by the exponential mechanism over a public
grid of ``quantile`` (gaps left out). The range is ``[M − k·D, M + k·D]`` (post-processing): a
normal column has D = 0.674σ, so k = 3 is ±2.02σ and clips 4.3% of its values, the share the range
from widened quartiles clipped; a heavier tail is clipped more (for a linear model usually a gain).
A median sits half the rows from either end, so a far candidate (beyond a column's extremes) scores
−m/2 instead of a quartile's −m/4: the mechanism finds the pair reliably at about half the ε two
quartiles need. The ridge target's range takes k = 1.5 (±1.01σ for a normal target, 31% clipped):
a certified R² pays for the targets' interval squared over their variance, which this makes 0.58 times
as large, and the clipped ones keep their sign and most of their signal (a normal target's best linear
model keeps 0.905 of the share it explains; docs/mathematics.md#a-target-in-the-units-people-read). When D = 0 (half the values or more equal M: a 0/1 flag, a mostly-zero
count), or k·D is below ``NARROWEST`` × |M| (a width float64 would lose beside M: a median drawn far out at a small
budget), the range is ``[M − w, M + w]`` with ``w = max(1, |M|)``: a public rule on the released values. Values outside the range are clipped to it: the range bounds every later statistic's
sensitivity, and a column whose range is private is centred at M, the middle of its range, for free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord
from accfirst.datasets.prepare.quantile import DEVIATIONS, QUANTILE_SENSITIVITY, private_quantile, quantile_utility

# k: the range is the median ± k median distances from it (see the module docstring).
FEATURE_SPREADS = 3.0
TARGET_SPREADS = 1.5
# A half-width below this share of |M| is treated as D = 0: M ± k·D could round to one number, a range of width 0.
NARROWEST = 1e-9


def robust_range(median: float, deviation: float, spreads: float) -> tuple[float, float]:
    """``[M − k·D, M + k·D]``, or ``[M − w, M + w]`` with ``w = max(1, |M|)`` when D = 0 or too narrow to keep beside M
    (see the module docstring)."""
    width = spreads * deviation
    if not width > NARROWEST * abs(median):
        width = max(1.0, abs(median))
    return median - width, median + width


def finite_sorted(values: np.ndarray) -> np.ndarray:
    """The column's non-missing values, ascending."""
    return np.sort(values[np.isfinite(values)])


class PrivateMedian(Step):
    """Release the median of a numeric column: the middle of its private range, or the value its gaps take."""

    name = "private median"
    kind = PRIVATE
    weight = 1.0
    needs = "a numeric column with no declared range, or gaps to be filled with the median"
    reads = "the median of the column's training values (gaps left out)"
    mechanism = "exponential mechanism over a public grid, sensitivity 1"
    writes = "the median M"

    def statistic(self, context: Context) -> np.ndarray:
        return quantile_utility(finite_sorted(context.numbers(self.plan.name)), 0.5)

    def sensitivity(self, context: Context) -> float:
        return QUANTILE_SENSITIVITY

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        plan.median = private_quantile(finite_sorted(context.numbers(plan.name)), 0.5, epsilon, context.rng)
        return self.record(f"{quoted(plan.name)}: private median {plan.median:.4g} (ε = {epsilon:.3g})", epsilon)


@dataclass(eq=False)
class PrivateRange(Step):
    """Release the median distance from the released median; the column's range is the median ± ``spreads`` of them."""

    name = "private range"
    kind = PRIVATE
    weight = 1.0
    needs = "the column's released median M and no declared range"
    reads = "the median of |x − M| (training rows, gaps left out)"
    mechanism = "exponential mechanism over a public grid, sensitivity 1"
    writes = "the range [M − k·D, M + k·D] the column is clipped to"

    spreads: float

    def _deviations(self, context: Context) -> np.ndarray:
        assert self.plan.median is not None  # PrivateMedian runs first
        return np.sort(np.abs(finite_sorted(context.numbers(self.plan.name)) - self.plan.median))

    def statistic(self, context: Context) -> np.ndarray:
        return quantile_utility(self._deviations(context), 0.5, DEVIATIONS)

    def sensitivity(self, context: Context) -> float:
        return QUANTILE_SENSITIVITY

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        assert plan.median is not None
        deviation = private_quantile(self._deviations(context), 0.5, epsilon, context.rng, DEVIATIONS)
        plan.low, plan.high = robust_range(plan.median, deviation, self.spreads)
        width = (
            f"{self.spreads:g} × its private median distance from the median, {deviation:.4g}"
            if self.spreads * deviation > NARROWEST * abs(plan.median)
            else f"max(1, |median|), as the private median distance from the median is {deviation:.4g}"
        )
        return self.record(
            f"{quoted(plan.name)}: the range [{plan.low:.4g}, {plan.high:.4g}], the median ± {width}; values outside "
            f"are clipped to it (ε = {epsilon:.3g})",
            epsilon,
        )
