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

The default budget follows n, within a share of the table's budget: ``ε_prep = min(150 × total
weight / n, 25% of budget)``, where ``budget`` is the ε the user means to spend on the table in all,
preparation included (public, stated by the caller; 2 by default; ``None`` states none, and the
preparation then takes what its statistics need). A statistic's error under ε shrinks like 1/(nε),
and so does every ε an accuracy-first run pays, so a budget ∝ 1/n keeps each statistic equally
good, and the preparation an equal share of a run, at every table size: at 50,000 rows and 13
columns about 0.1. The constant was chosen by measurement (``benchmarks/bench_preparation.py``):
below it the private quantiles start to miss, and a range that misses squashes its column. The
share keeps a preparation from taking most of what a user will spend
(docs/mathematics.md#preparing-the-data-privately): a median gets at least 0.25 × budget / weight,
reliable (ε·n ≥ 60) on 120 × weight rows at the default budget (the customer table's 4,000 training
rows need 0.77 and get 0.5, ε·n = 74 per median); a smaller table gets less than its statistics need,
which the report says (declaring the ranges and levels is free).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

from accfirst.datasets.prepare.base import Step
from accfirst.datasets.prepare.ranges import PrivateMedian, PrivateRange
from accfirst.errors import DataError

DEFAULT_PREP_DELTA = 1e-6
EPSILON_ROWS_PER_WEIGHT = 150.0
# The ε a user means to spend on a table in all, preparation included, unless stated; the preparation's share of it.
DEFAULT_TABLE_BUDGET = 2.0
PREP_SHARE = 0.25
# A median's ε below this many "rows' worth" (ε·n) risks a range that misses: ε·(n/2)/2 ≈ 15 nats between the median
# and the grid's far ends, which hold a thousand candidates or more.
RELIABLE_QUANTILE_ROWS = 60.0


def needed_prep_epsilon(weight: float, n: int) -> float:
    """What a plan of this total weight on n training rows needs for statistics as good as a large table's."""
    return EPSILON_ROWS_PER_WEIGHT * weight / n


def default_prep_epsilon(weight: float, n: int, budget: float | None) -> float:
    """The default ε_prep: what the statistics need, at most ``PREP_SHARE`` of the table's budget (see the module
    docstring)."""
    needed = needed_prep_epsilon(weight, n)
    return needed if budget is None else min(needed, PREP_SHARE * budget)


def budget_note(weight: float, n: int, options_epsilon: float | None, budget: float | None, epsilon: float) -> str:
    """The report's sentence on how ε_prep was chosen."""
    if options_epsilon is not None:
        return f"the preparation's budget: ε = {epsilon:.3g}, as stated"
    needed = needed_prep_epsilon(weight, n)
    rule = f"{needed:.3g}, what its statistics need ({EPSILON_ROWS_PER_WEIGHT:g} × weight {weight:g} / {n:,} rows)"
    if budget is None:
        return f"the preparation's budget: ε = {rule} (no budget stated for the table)"
    return (
        f"the preparation's budget: ε = {epsilon:.3g}, the smaller of {rule} and {PREP_SHARE * budget:.3g}, "
        f"{PREP_SHARE:.0%} of the table's budget ε = {budget:g}"
    )


def validate_budget(
    prep_epsilon: object, prep_delta: object, budget: object
) -> tuple[float | None, float, float | None]:
    """ε_prep (``None``: the default), δ_prep and the table's budget (``None``: none stated), checked at the boundary."""
    checked: list[float | None] = []
    for name, value in (("prep_epsilon", prep_epsilon), ("budget", budget)):
        if value is None:
            checked.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise DataError(f"{name} must be a number > 0 (or None); got {value!r}")
        if not (math.isfinite(value) and float(value) > 0):
            raise DataError(f"{name} must be a finite number > 0; got {value!r}")
        checked.append(float(value))
    if isinstance(prep_delta, bool) or not isinstance(prep_delta, numbers.Real) or not 0 < float(prep_delta) < 1:
        raise DataError(f"prep_delta must be in (0, 1); got {prep_delta!r}")
    return checked[0], float(prep_delta), checked[1]


def budget_warning(steps: Sequence[Step], shares: Sequence[tuple[float, float]], n: int) -> str:
    """A note when a private range's quantiles get less ε than n rows need to find them reliably, or ``""``."""
    quantiles = (PrivateMedian, PrivateRange)
    per_quantile = [epsilon for step, (epsilon, _) in zip(steps, shares) if isinstance(step, quantiles)]
    if not per_quantile or min(per_quantile) * n >= RELIABLE_QUANTILE_ROWS:
        return ""
    need = RELIABLE_QUANTILE_ROWS * sum(step.weight for step in steps) / n
    return (
        f"the budget gives each private quantile ε = {min(per_quantile):.3g}, below the {RELIABLE_QUANTILE_ROWS:g}/n = "
        f"{RELIABLE_QUANTILE_ROWS / n:.3g} that {n:,} rows need for it to be reliable: a range may miss and squash "
        f"its column; declare the ranges, or give at least prep_epsilon = {need:.3g} (a table's budget of "
        f"{need / PREP_SHARE:.3g} gives it by default)"
    )


def allocate(steps: Sequence[Step], epsilon: float, delta: float) -> list[tuple[float, float]]:
    """Each step's (ε, δ): ε in proportion to the weights, δ shared equally by the steps that use one."""
    weight = sum(step.weight for step in steps)
    users = sum(step.uses_delta for step in steps)
    return [
        (epsilon * step.weight / weight if step.weight else 0.0, delta / users if step.uses_delta else 0.0)
        for step in steps
    ]
