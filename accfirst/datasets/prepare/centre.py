"""The centre of a numeric column (or of a ridge target) (docs/mathematics.md#preparing-the-data-privately).

A column whose range is private is centred at its released median, the middle of the range
(``MiddleCentre``: post-processing, free). A column whose range is declared is centred at the middle
of that range (``MiddleCentre`` too: public, free), so that a declared range costs its column nothing; it
then lies in [−1, 1] like a column with a private range, off centre by as much as the declaration
is. The ridge target is centred at a private mean (``PrivateCentre``): the models have no intercept,
so the targets must average about 0.

The mean's statistic is the mean over the n training rows of the value clipped to the column's range
``[a, b]``, a gap counting as the range's centre. One replaced row moves it by at most ``(b − a)/n``; Laplace noise of scale
``(b − a)/(n·ε)`` makes it ε-DP. The noisy mean is clipped back into ``[a, b]`` (post-processing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord


@dataclass(eq=False)
class MiddleCentre(Step):
    """Centre a column at the middle of its range: the released median of a private range, the middle of a declared
    one (no data read)."""

    name = "centre"
    needs = "a range: the released median, or the declared range"
    mechanism = "none: post-processing of the range"
    writes = "the centre subtracted from every value"

    declared: bool

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        if self.declared:
            low, high = plan.bounds
            plan.centre = (low + high) / 2
            return self.record(f"{quoted(plan.name)}: the middle of its declared range, {plan.centre:.4g}, subtracted")
        assert plan.median is not None  # PrivateMedian runs first
        plan.centre = plan.median
        return self.record(f"{quoted(plan.name)}: its private median {plan.centre:.4g} subtracted")


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
        low, high = plan.bounds
        return np.where(np.isfinite(values), np.clip(values, low, high), (low + high) / 2)

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
