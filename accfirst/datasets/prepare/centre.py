"""The private centre of a numeric column (or of a ridge target): a Laplace mean
(docs/mathematics.md#preparing-the-data-privately).

The statistic is the mean over the n training rows of the value clipped to the column's range
``[a, b]``, a gap counting as the gap value already released (a private median) or else the
range's centre. One replaced row moves it by at most ``(b − a)/n``; Laplace noise of scale
``(b − a)/(n·ε)`` makes it ε-DP. The noisy mean is clipped back into ``[a, b]`` (post-processing).
"""

from __future__ import annotations

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import PRIVATE, ColumnPlan, Context, Step, StepRecord


def gap_value(plan: ColumnPlan) -> float:
    """What a gap counts as while its fill is not yet known: a released median, else the range's centre."""
    if plan.fill is not None:
        return plan.fill
    low, high = plan.bounds
    return (low + high) / 2


class PrivateCentre(Step):
    """Release the mean of a column clipped to its range; the column is centred by it."""

    name = "private centre"
    kind = PRIVATE
    weight = 0.5
    needs = "a range [a, b] (declared or private)"
    reads = "the mean of the clipped values over the training rows (a gap counts as the range's centre)"
    mechanism = "Laplace, sensitivity (b − a)/n"
    writes = "the centre μ̂ subtracted from every value"

    def _filled(self, context: Context) -> np.ndarray:
        plan = self.plan
        values = context.numbers(plan.name)
        return np.where(np.isfinite(values), np.clip(values, plan.low, plan.high), gap_value(plan))

    def statistic(self, context: Context) -> np.ndarray:
        return np.array([self._filled(context).mean()])

    def sensitivity(self, context: Context) -> float:
        low, high = self.plan.bounds
        return (high - low) / context.n

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        noisy = self.laplace_number(context, epsilon)
        plan.centre = float(np.clip(noisy, plan.low, plan.high))
        return self.record(
            f"{quoted(plan.name)}: private mean {plan.centre:.4g} subtracted (ε = {epsilon:.3g})", epsilon
        )
