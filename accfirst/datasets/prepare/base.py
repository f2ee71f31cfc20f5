"""What every preparation step shares: its record, the plan it writes and the data it may read.

A step states, as class attributes, the metadata it ``needs``, the statistic it ``reads``,
its ``mechanism`` and what it ``writes``; a private step also has a ``weight`` (its share of
the preparation budget, docs/data-preparation.md) and, for the neighbour check, its exact
``statistic`` and its ``sensitivity``. Running a step writes numbers into a ``ColumnPlan``
and returns a ``StepRecord`` with what it spent. Only the steps read the data; turning rows
into features afterwards (``ColumnPlan.transform``) uses the plan alone, one row at a time.
Both preparations write the same plans: the private one with declared or released numbers, the
evaluation-only one with numbers its steps read exactly (``READS_EXACTLY``: no ε covers them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from accfirst.datasets.columns import Categorical
from accfirst.datasets.prepare.noise import laplace_release
from accfirst.datasets.prepared import DECLARED, EVALUATION, FREE, PRIVATE, StepRecord

if TYPE_CHECKING:  # kind.py builds on this module: its Cells are named here for the type checker only
    from accfirst.datasets.prepare.kind import Cells

__all__ = ["DECLARED", "EVALUATION", "FREE", "PRIVATE", "ColumnPlan", "Context", "DeclaredStep", "Step", "StepRecord"]

# The mechanism of a statistic read without noise: the evaluation-only preparation's (its ε is ∞).
READS_EXACTLY = "reads the data without noise: evaluation only"
# The column that the levels grouped together share (evaluation only groups the rarest beyond the cap).
OTHER_LEVEL = "(other)"


@dataclass
class ColumnPlan:
    """The public numbers that turn one column into features (or the target), written by the steps.

    A numeric value is clipped to ``[low, high]`` (when there is a range), a gap takes ``fill``,
    then ``(value − centre)/spread``; ``median`` is a released median (the middle of a private range). A text value becomes a 0/1 column per level in ``levels``;
    any other value gives zeros, or the ``(other)`` column when ``grouped`` levels share one, and a
    gap gives the column ``gap_level`` (−1: none); ``level_means``, when given, are subtracted from
    the block. (The private preparation neither groups, fills a text gap nor centres a block: the
    evaluation-only one does.) ``dropped`` says why a released number left the column out.
    """

    name: str
    kind: str
    log1p: bool = False
    low: float | None = None
    high: float | None = None
    fill: float | None = None
    median: float | None = None
    centre: float = 0.0
    spread: float = 1.0
    levels: tuple[str, ...] = ()
    grouped: int = 0
    gap_level: int = -1
    level_means: np.ndarray | None = None
    dropped: str = ""

    @property
    def has_range(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def bounds(self) -> tuple[float, float]:
        """``(low, high)``, for the steps that need a range."""
        if self.low is None or self.high is None:
            raise TypeError(f"column {self.name!r} has no range")
        return self.low, self.high

    @property
    def level_names(self) -> tuple[str, ...]:
        """The levels that get a column, ``(other)`` last when levels are grouped."""
        return (*self.levels, OTHER_LEVEL) if self.grouped else self.levels

    @property
    def width(self) -> int:
        """Output columns: one per level (and ``(other)``) for text, one for numbers."""
        return len(self.level_names) if self.kind == "text" else 1

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}={level}" for level in self.level_names) if self.kind == "text" else (self.name,)

    @property
    def half_range(self) -> float:
        """Half the width of the column's output (1 for a one-hot block): public, from the plan."""
        if self.kind == "text":
            return 1.0
        if not self.has_range:
            return math.inf
        low, high = self.bounds
        return (high - low) / (2 * self.spread)

    @property
    def largest(self) -> float:
        """The largest |value| the column's output takes, from the plan: a numeric column's range's largest distance
        from its centre over its spread (∞ without a range), 1 for a one-hot block of the private preparation (at most
        one 1: its blocks are not centred)."""
        if self.kind == "text":
            return 1.0
        if not self.has_range:
            return math.inf
        low, high = self.bounds
        return max(abs(low - self.centre), abs(high - self.centre)) / abs(self.spread)

    @property
    def target_interval(self) -> tuple[float, float]:
        """The public interval a prepared ridge target lies in: ``[(low − centre)/spread, (high − centre)/spread]``
        within [−1, 1], widened to hold 0 (a row whose target is missing), or [−1, 1] without a range
        (docs/mathematics.md#a-target-in-the-units-people-read). A function of the plan alone, so it holds for every
        row of every neighbouring table."""
        if not self.has_range:
            return -1.0, 1.0
        low, high = self.bounds
        return min(0.0, max(-1.0, (low - self.centre) / self.spread)), max(
            0.0, min(1.0, (high - self.centre) / self.spread)
        )

    def clipped(self, values: np.ndarray) -> np.ndarray:
        """Numeric values clipped to the range, gaps filled (a new array)."""
        out = np.clip(values, self.low, self.high) if self.has_range else values.copy()
        out[~np.isfinite(values)] = 0.0 if self.fill is None else self.fill
        return out

    def transform(self, column: np.ndarray | Categorical, rows: np.ndarray, block: np.ndarray) -> None:
        """Write the column's output block for ``rows`` into ``block`` (row by row: no statistic)."""
        if isinstance(column, Categorical):
            mapping = np.full(len(column.levels) + 1, self.gap_level, dtype=np.int64)
            position = {level: j for j, level in enumerate(self.levels)}
            other = len(self.levels) if self.grouped else -1
            mapping[:-1] = [position.get(level, other) for level in column.levels]
            targets = mapping[column.codes[rows]]  # a gap (code −1) reads the last entry
            hit = targets >= 0
            block[np.flatnonzero(hit), targets[hit]] = 1.0
            if self.level_means is not None:
                block -= self.level_means
            return
        block[:, 0] = (self.clipped(column[rows]) - self.centre) / self.spread


def settled(name: str, column: np.ndarray | Categorical | Cells) -> np.ndarray | Categorical:
    """A column whose kind is known (numbers or text codes); its ``Cells`` before ``PrivateKind`` released it raise."""
    if isinstance(column, (np.ndarray, Categorical)):
        return column
    raise TypeError(f"column {name!r} is read before its kind is released")


@dataclass
class Context:
    """The data a step may read (the training rows of each column) and the noise it draws.

    ``columns`` holds every row (log(1 + x) already applied); steps read ``train`` rows only.
    """

    columns: dict[str, np.ndarray | Categorical | Cells]  # Cells: a column whose kind is not released yet
    train: np.ndarray
    rng: np.random.Generator

    @property
    def n(self) -> int:
        """Training rows: public (it depends on the table's row count and the test share only)."""
        return len(self.train)

    def values(self, name: str) -> np.ndarray | Categorical:
        """The training rows of a column."""
        column = settled(name, self.columns[name])
        if isinstance(column, Categorical):
            return Categorical(column.codes[self.train], column.levels)
        rows: np.ndarray = column[self.train]
        return rows

    def numbers(self, name: str) -> np.ndarray:
        """The training rows of a numeric column."""
        values = self.values(name)
        if isinstance(values, Categorical):
            raise TypeError(f"column {name!r} holds text, not numbers")
        return values

    def text(self, name: str) -> Categorical:
        """The training rows of a text column."""
        values = self.values(name)
        if not isinstance(values, Categorical):
            raise TypeError(f"column {name!r} holds numbers, not text")
        return values


@dataclass(eq=False)
class Step:
    """A preparation step on one column (see the module docstring); subclasses fill the class attributes.

    A step's own settings are dataclass fields after ``plan``. A free step reads nothing unless it says.
    """

    name: ClassVar[str]
    needs: ClassVar[str]
    reads: ClassVar[str] = "nothing"
    mechanism: ClassVar[str]
    writes: ClassVar[str]
    kind: ClassVar[str] = FREE
    weight: ClassVar[float] = 0.0
    uses_delta: ClassVar[bool] = False
    # For the neighbour check: how the statistic's movement is measured ("max" or "l1").
    norm: ClassVar[str] = "max"

    plan: ColumnPlan

    def run(self, context: Context, epsilon: float, delta: float) -> StepRecord:
        raise NotImplementedError

    def apply(self, context: Context) -> None:
        """Write what the step released into the columns a context holds (only a column's kind does)."""

    def statistic(self, context: Context) -> np.ndarray:
        """The exact statistic the mechanism adds noise to (private steps; never released)."""
        raise NotImplementedError

    def sensitivity(self, context: Context) -> float:
        """How far ``statistic`` can move when one training row is replaced (private steps)."""
        raise NotImplementedError

    def laplace_number(self, context: Context, epsilon: float) -> float:
        """A one-number ``statistic`` released by the Laplace mechanism: noise of scale ``sensitivity``/ε (ε-DP)."""
        return float(laplace_release(self.statistic(context)[0], self.sensitivity(context), epsilon, context.rng)[0])

    def record(self, note: str, epsilon: float = 0.0, delta: float = 0.0) -> StepRecord:
        return StepRecord(self.name, self.plan.name, self.kind, self.mechanism, epsilon, delta, note)


class DeclaredStep(Step):
    """A step that writes what the user declared into the plan: it reads nothing and costs no privacy."""

    kind = DECLARED
    mechanism = "none: declared, costs no privacy"
