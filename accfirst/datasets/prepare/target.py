"""The target (docs/mathematics.md#preparing-the-data-privately): logistic labels from a declared positive class; a
ridge target scaled and clipped.

A ridge target goes through the same range and centre steps as a numeric feature, then
``TargetScale`` divides it by its half-range (or a public bound) and clips it to [−1, 1]: a
private centre can sit anywhere in the range, so without the clip |y| could reach 2, which the
algorithms forbid. A logistic label is +1 where the target equals the declared positive class
and −1 elsewhere; no class is read from the data. A row whose target is missing becomes a zero
row (x = 0, and y = 0 for ridge; a logistic label is irrelevant when x = 0), so n stays public.
"""

from __future__ import annotations

from dataclasses import dataclass

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import Context, DeclaredStep, Step, StepRecord


@dataclass(eq=False)
class TargetScale(Step):
    """Divide a centred ridge target by its half-range or a public bound, then clip it to [−1, 1]."""

    name = "target scale"
    needs = "the target's range (declared or private), or a public bound on |y|"
    mechanism = "none: post-processing of the range"
    writes = "the target's scale; targets are clipped to [−1, 1]"

    bound: float | None

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        if self.bound is not None:
            plan.spread, source = self.bound, f"the stated bound {self.bound:g}"
        else:
            low, high = plan.bounds
            plan.spread = (high - low) / 2
            source = f"half its range, {plan.spread:.4g}"
        return self.record(
            f"target {quoted(plan.name)}: divided by {source}, then clipped to [−1, 1]; a row with a missing target "
            "becomes a zero row (x = 0, y = 0), so no row is dropped"
        )


@dataclass(eq=False)
class TargetLabels(DeclaredStep):
    """Map a logistic target to ±1 with the declared positive class."""

    name = "labels"
    needs = "a declared positive class"
    writes = "labels +1 (the positive class) and −1 (every other value)"

    positive: object

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        return self.record(
            f"target {quoted(self.plan.name)} (logistic regression): the declared class {quoted(self.positive)} → +1, every "
            "other value → −1; a row with a missing target becomes a zero row (x = 0), so no row is dropped"
        )
