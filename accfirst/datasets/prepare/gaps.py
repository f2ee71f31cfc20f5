"""Filling gaps in a numeric column (docs/mathematics.md#preparing-the-data-privately): with a released number, never a
fresh look at the data.

``FillGaps`` is post-processing: a gap takes the column's centre (``missing="impute"``, the default,
so that it becomes 0 once centred: the private median for a column whose range is private, the
middle of a declared range; the range's centre without centring), the range's
centre (``"centre"``), or the private median (``"median"``: released for the range already when the
range is private, by one more ``PrivateMedian`` when it is declared). For a column whose range is
private the three are the same number: the median is the middle of the range. A column with no
range (public bounds, no centring, no standardising) fills its gaps with 0. A row with a gap stays
a row: n never depends on the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.datasets.columns import quoted
from accfirst.datasets.prepare.base import Context, Step, StepRecord


@dataclass(eq=False)
class FillGaps(Step):
    """Say what a gap becomes: a released number (post-processing)."""

    name = "gaps"
    needs = "the released centre, median or range"
    mechanism = "none: post-processing of released numbers"
    writes = "the value a missing or infinite entry takes"

    missing: str
    centred: bool

    @property
    def rule(self) -> str:
        """The fill: ``missing``, except that "impute" without centring (no centre is released) takes the range's
        centre."""
        return self.missing if (self.missing != "impute" or self.centred) else "centre"

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        if not plan.has_range:
            plan.fill = 0.0
            source = "0 (the column has no range: public bounds only)"
        elif self.rule == "median":
            assert plan.median is not None  # PrivateMedian runs first
            plan.fill = float(np.clip(plan.median, plan.low, plan.high))
            source = f"the private median {plan.fill:.4g}"
        elif self.rule == "impute":
            plan.fill = plan.centre
            source = f"the centre {plan.fill:.4g} (0 once centred)"
        else:
            low, high = plan.bounds
            plan.fill = (low + high) / 2
            source = f"the centre of its range, {plan.fill:.4g}"
        return self.record(f"{quoted(plan.name)}: a missing or infinite value takes {source}")
