"""The preparation budget and how it is split across steps and columns
(docs/mathematics.md#preparing-the-data-privately).

One row touches every column, so the private steps compose by basic composition: their ε add
up to ``ε_prep`` and their δ to ``δ_prep``. The split rule: each private step has a weight (a
column's kind ¼; a quantile 1, so a range 2; a mean ½; a standard deviation ½; a level
selection 4, because a level must beat a threshold of order ``(2/ε)·ln(1/δ)`` counts), and gets
``ε_prep × its weight / the total weight``; the level selections share ``δ_prep`` equally. The
kinds are released first, so the total weight counts a column of undeclared kind as numeric (as text
when a numeric column's steps would spend nothing);
the other steps then share what the kinds leave by their weights (``private.kind_budget``).
Only public facts (which columns, their declarations, the options) and the released kinds
decide the steps, so the split reads nothing else from the data. A kind's ¼ gives it ε·n = 37.5
at the default: a column of numbers with a few words stays numeric but with probability ~e⁻¹⁸.

The default budget follows n: ``ε_prep = 150 × total weight / n`` (each quantile gets ε = 150/n).
A statistic's error under ε shrinks like 1/(nε), and so does every ε an accuracy-first run
pays, so a budget ∝ 1/n keeps each statistic equally good, and the preparation an equal share of
a run, at every table size: at 50,000 rows and 13 columns about 0.1, at 500 rows about 10 (such
a table is expensive to prepare privately; declaring its ranges and levels is free). The
constant was chosen by measurement (``benchmarks/bench_preparation.py``): below it the private
quartiles start to miss, and a range that misses squashes its column.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

from accfirst.datasets.prepare.base import Step
from accfirst.datasets.prepare.ranges import PrivateRange
from accfirst.errors import DataError

DEFAULT_PREP_DELTA = 1e-6
EPSILON_ROWS_PER_WEIGHT = 150.0
# A quartile's ε below this many "rows' worth" (ε·n) risks a range that misses: ε·(n/4)/2 ≈ 10
# nats between the quartile and the grid's far ends, which hold some 600 candidates.
RELIABLE_QUANTILE_ROWS = 80.0


def default_prep_epsilon(weight: float, n: int) -> float:
    """The default ε_prep for a plan of this total weight on n training rows (see the module docstring)."""
    return EPSILON_ROWS_PER_WEIGHT * weight / n


def validate_budget(prep_epsilon: object, prep_delta: object) -> tuple[float | None, float]:
    """ε_prep (``None``: the default) and δ_prep, checked at the boundary."""
    if prep_epsilon is not None:
        if isinstance(prep_epsilon, bool) or not isinstance(prep_epsilon, numbers.Real):
            raise DataError(f"prep_epsilon must be a number > 0 (or None for the default); got {prep_epsilon!r}")
        if not (math.isfinite(prep_epsilon) and float(prep_epsilon) > 0):
            raise DataError(f"prep_epsilon must be a finite number > 0; got {prep_epsilon!r}")
    if isinstance(prep_delta, bool) or not isinstance(prep_delta, numbers.Real) or not 0 < float(prep_delta) < 1:
        raise DataError(f"prep_delta must be in (0, 1); got {prep_delta!r}")
    return (None if prep_epsilon is None else float(prep_epsilon)), float(prep_delta)


def budget_warning(steps: Sequence[Step], shares: Sequence[tuple[float, float]], n: int) -> str:
    """A note when a private range gets less ε per quartile than n rows need to find it reliably, or ``""``."""
    per_quantile = [
        epsilon / step.weight for step, (epsilon, _) in zip(steps, shares) if isinstance(step, PrivateRange)
    ]
    if not per_quantile or min(per_quantile) * n >= RELIABLE_QUANTILE_ROWS:
        return ""
    need = RELIABLE_QUANTILE_ROWS * sum(step.weight for step in steps) / n
    return (
        f"the budget gives each private quartile ε = {min(per_quantile):.3g}, below the {RELIABLE_QUANTILE_ROWS:g}/n = "
        f"{RELIABLE_QUANTILE_ROWS / n:.3g} that {n:,} rows need for it to be reliable: a range may miss and squash "
        f"its column; declare the ranges, or give at least prep_epsilon = {need:.3g}"
    )


def allocate(steps: Sequence[Step], epsilon: float, delta: float) -> list[tuple[float, float]]:
    """Each step's (ε, δ): ε in proportion to the weights, δ shared equally by the steps that use one."""
    weight = sum(step.weight for step in steps)
    users = sum(step.uses_delta for step in steps)
    return [
        (epsilon * step.weight / weight if step.weight else 0.0, delta / users if step.uses_delta else 0.0)
        for step in steps
    ]
