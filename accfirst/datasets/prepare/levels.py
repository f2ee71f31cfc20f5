"""Private level selection for a text column: noisy counts over a threshold
(docs/mathematics.md#preparing-the-data-privately).

Each level present in the training rows gets its count plus ``Lap(2/ε)`` (replacing a row
moves two counts by one: ℓ1 sensitivity 2), released on the lattice gℤ of that noise scale, and is
kept when the released count exceeds ``τ + g/2``, ``τ = 1 + (2/ε)·ln(1/(2δ))``: the released
value is within g/2 of the ideal noisy count, so a level passes only if its ideal noisy count
exceeds τ. A level present in only one of two neighbouring tables has count 1 there and passes
with probability at most ``½·exp(−(τ − 1)ε/2) = δ``, so the step is (ε, δ)-DP. The kept levels are listed in a public order (sorted names); with more than ``max_levels`` kept,
the largest noisy counts win (never the true ones). A value whose level was not kept, and a
gap, give no column (an all-zero block).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accfirst.datasets.columns import Categorical, listing, quoted
from accfirst.datasets.prepare.base import PRIVATE, Context, Step, StepRecord
from accfirst.datasets.prepare.noise import laplace_release
from accfirst.mechanisms.lattice import lattice_spacing

COUNT_SENSITIVITY = 2.0


def level_counts(column: Categorical) -> np.ndarray:
    """How many rows of ``column`` hold each of its levels (gaps counted nowhere)."""
    return np.bincount(column.codes[column.codes >= 0], minlength=len(column.levels))


def threshold(epsilon: float, delta: float) -> float:
    """τ: the ideal noisy count a level must exceed to be kept (its δ is priced there)."""
    return 1.0 + (COUNT_SENSITIVITY / epsilon) * math.log(1.0 / (2.0 * delta))


def released_threshold(epsilon: float, delta: float) -> float:
    """τ + g/2: the released (lattice) count a level must exceed, g the lattice's spacing at the noise scale 2/ε.

    A released count above it has an ideal noisy count above τ, so the comparison is priced by δ
    (docs/mathematics.md#preparing-the-data-privately).
    """
    return threshold(epsilon, delta) + lattice_spacing(COUNT_SENSITIVITY / epsilon) / 2


@dataclass(eq=False)
class PrivateLevels(Step):
    """Release the levels of a text column that has no declared list."""

    name = "private levels"
    kind = PRIVATE
    weight = 4.0
    uses_delta = True
    norm = "l1"
    needs = "the column holds text and has no declared levels"
    reads = "how many training rows hold each level"
    mechanism = "Laplace counts over a threshold, ℓ1 sensitivity 2: (ε, δ)"
    writes = "the levels that get a 0/1 column"

    max_levels: int

    def statistic(self, context: Context) -> np.ndarray:
        return level_counts(context.text(self.plan.name)).astype(np.float64)

    def sensitivity(self, context: Context) -> float:
        return COUNT_SENSITIVITY

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        plan = self.plan
        levels = context.text(plan.name).levels
        counts = self.statistic(context)
        present = np.flatnonzero(counts > 0)
        noisy = laplace_release(counts[present], COUNT_SENSITIVITY, epsilon, context.rng)
        tau = threshold(epsilon, delta)
        passed = noisy > released_threshold(epsilon, delta)
        order = np.argsort(-noisy[passed], kind="stable")[: self.max_levels]
        kept = present[passed][order]
        plan.levels = tuple(sorted(levels[code] for code in kept))
        spent = f"(ε = {epsilon:.3g}, δ = {delta:.2g})"
        if not plan.levels:
            plan.dropped = f"no level's noisy count passed the threshold {tau:,.0f}: declare its levels to keep it"
            return self.record(f"{quoted(plan.name)}: no level passed the threshold; left out {spent}", epsilon, delta)
        capped = f", the {self.max_levels} largest noisy counts" if passed.sum() > self.max_levels else ""
        return self.record(
            f"{quoted(plan.name)}: {len(plan.levels)} level(s) whose noisy count passed {tau:,.0f}{capped} ({listing(plan.levels, 8)}); "
            f"other values and gaps give no column {spent}",
            epsilon,
            delta,
        )
