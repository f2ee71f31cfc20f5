"""Filling gaps in a numeric column (docs/mathematics.md#preparing-the-data-privately): with a released number, never a
fresh look at the data.

``FillGaps`` is post-processing: a gap takes the private mean (``missing="impute"``, the default,
so that it becomes 0 once centred; the range's centre without centring), the range's centre
(``"centre"``), or the private median of ``PrivateMedian`` (``"median"``, one more
exponential-mechanism quantile). A column with no range (public bounds, no centring, no
standardising) fills its gaps with 0. A row with a gap stays a row: n never depends on the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord
from accfirst.datasets.prepare.quantile import QUANTILE_SENSITIVITY, private_quantile, quantile_utility
from accfirst.datasets.prepare.ranges import finite_sorted


class PrivateMedian(Step):
    """Release the median of a numeric column, the value its gaps take."""

    name = "private median"
    kind = PRIVATE
    weight = 1.0
    needs = "a range [a, b]; gaps to be filled with the median"
    reads = "the median of the column's training values (gaps left out)"
    mechanism = "exponential mechanism over a public grid, sensitivity 1"
    writes = "the value a gap takes"

    def statistic(self, context: Context) -> np.ndarray:
        return quantile_utility(finite_sorted(context.numbers(self.plan.name)), 0.5)

    def sensitivity(self, context: Context) -> float:
        return QUANTILE_SENSITIVITY

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        median = private_quantile(finite_sorted(context.numbers(plan.name)), 0.5, epsilon, context.rng)
        plan.fill = float(np.clip(median, plan.low, plan.high))
        return self.record(f"{quoted(plan.name)}: private median {plan.fill:.4g} (ε = {epsilon:.3g})", epsilon)


@dataclass(eq=False)
class FillGaps(Step):
    """Say what a gap becomes: a released number (post-processing)."""

    name = "gaps"
    needs = "the released mean, median or range"
    mechanism = "none: post-processing of released numbers"
    writes = "the value a missing or infinite entry takes"

    missing: str
    centred: bool

    @property
    def rule(self) -> str:
        """The fill: ``missing``, except that "impute" without centring (no mean is released) takes the range's centre."""
        return self.missing if (self.missing != "impute" or self.centred) else "centre"

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        if not plan.has_range:
            plan.fill = 0.0
            source = "0 (the column has no range: public bounds only)"
        elif self.rule == "median":
            source = f"the private median {plan.fill:.4g}"
        elif self.rule == "impute":
            plan.fill = plan.centre
            source = f"the private mean {plan.fill:.4g} (0 once centred)"
        else:
            low, high = plan.bounds
            plan.fill = (low + high) / 2
            source = f"the centre of its range, {plan.fill:.4g}"
        return self.record(f"{quoted(plan.name)}: a missing or infinite value takes {source}")
