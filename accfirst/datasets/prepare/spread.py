"""Standardising a numeric column: by its half-range (free) or a private standard deviation
(docs/mathematics.md#preparing-the-data-privately).

``HalfRange`` divides by ``(b − a)/2``: post-processing of the range. ``PrivateSpread`` releases
the mean of ``(x − μ̂)²`` over the clipped, filled column (sensitivity ``max(|a − μ̂|, |b − μ̂|)²/n``,
Laplace), floors it at a public minimum (1% of the half-range, squared), caps it at the largest
square the range allows, and divides by its square root.
"""

from __future__ import annotations

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord

MIN_SPREAD_SHARE = 0.01


class HalfRange(Step):
    """Divide a numeric column by half its range (no data read)."""

    name = "half-range"
    needs = "a range [a, b]"
    mechanism = "none: post-processing of the range"
    writes = "the spread (b − a)/2 every value is divided by"

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        low, high = plan.bounds
        plan.spread = (high - low) / 2
        return self.record(f"{quoted(plan.name)}: divided by half its range, {plan.spread:.4g}")


class PrivateSpread(Step):
    """Release a standard deviation of a centred numeric column; the column is divided by it."""

    name = "private spread"
    kind = PRIVATE
    weight = 0.5
    needs = "a range [a, b] and the centre μ̂"
    reads = "the mean of (x − μ̂)² over the training rows, x clipped and gaps filled"
    mechanism = "Laplace, sensitivity max(|a − μ̂|, |b − μ̂|)²/n"
    writes = "the spread every value is divided by"

    def _largest_square(self) -> float:
        plan = self.plan
        low, high = plan.bounds
        return max(abs(low - plan.centre), abs(high - plan.centre)) ** 2

    def statistic(self, context: Context) -> np.ndarray:
        plan = self.plan
        return np.array([np.mean((plan.clipped(context.numbers(plan.name)) - plan.centre) ** 2)])

    def sensitivity(self, context: Context) -> float:
        return self._largest_square() / context.n

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        noisy = self.laplace_number(context, epsilon)
        low, high = plan.bounds
        floor = (MIN_SPREAD_SHARE * (high - low) / 2) ** 2
        plan.spread = float(np.sqrt(np.clip(noisy, floor, max(floor, self._largest_square()))))
        return self.record(
            f"{quoted(plan.name)}: divided by its private standard deviation {plan.spread:.4g} (ε = {epsilon:.3g})",
            epsilon,
        )
