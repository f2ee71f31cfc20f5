"""Declared metadata: the numbers the user stated, written into the plan for free
(docs/mathematics.md#preparing-the-data-privately)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.datasets.columns import listing, quoted
from accfirst.datasets.prepare.base import Context, DeclaredStep, StepRecord
from accfirst.datasets.prepare.schema import ColumnSpec


def log1p_public(value: float) -> float:
    """``log(1 + max(x, 0))``: the transform of a ``log1p`` column, negative values taken as 0."""
    return float(np.log1p(max(value, 0.0)))


@dataclass(eq=False)
class DeclaredMetadata(DeclaredStep):
    """A column's declared range or levels (and ``log(1 + x)``), from the schema."""

    name = "declared metadata"
    needs = "the schema's entry for the column"
    writes = "the column's range (numbers) or levels (text)"

    spec: ColumnSpec

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        spec, plan, parts = self.spec, self.plan, []
        if spec.range is not None:
            low, high = spec.range
            if plan.log1p:
                low, high = log1p_public(low), log1p_public(high)
            plan.low, plan.high = low, high
            parts.append(f"range [{spec.range[0]:g}, {spec.range[1]:g}]")
        if spec.levels is not None:
            plan.levels = spec.levels
            parts.append(f"{len(spec.levels)} level(s) ({listing(spec.levels, 8)}); any other value gives no column")
        if plan.log1p:
            parts.append("enters as log(1 + x), negative values as 0")
        return self.record(f"declared for {quoted(plan.name)}: " + "; ".join(parts) + " (public: costs no privacy)")
