"""The evaluation-only preparation's steps: statistics read exactly, written into the plans the private steps write
(docs/data-preparation.md#evaluation-only-the-preparation-that-reads-the-data).

Each step states what it needs, reads and writes, as a private step does; its mechanism is
``READS_EXACTLY``: the statistic itself, no noise, so no ε covers it (the preparation's ε is ∞).
It writes a ``ColumnPlan``'s levels, gap value, centre or spread, and the rows are then built from
the plans alone, as in private mode. The centres and the spreads are read from the filled training
matrix as a whole (``fill_features``): a matrix sums each column in row order, a lone column
pairwise, and the two differ in the last bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from accfirst.datasets.columns import Categorical, fmt, quoted
from accfirst.datasets.prepare.base import OTHER_LEVEL, READS_EXACTLY, ColumnPlan, Context, settled
from accfirst.datasets.prepare.build import fill_features
from accfirst.datasets.prepare.levels import level_counts
from accfirst.datasets.prepare.scaling import row_l1
from accfirst.datasets.prepared import EVALUATION, FREE
from accfirst.errors import DataError

TOO_LARGE = (
    "some values are too large to add up in floating point (near 1e308); "
    "rescale those columns (e.g. divide by a million) or apply log(1 + x) to them"
)


@dataclass(eq=False)
class ExactStep:
    """A step of the evaluation-only preparation: ``run`` writes into the plans and returns the report's notes."""

    name: ClassVar[str]
    needs: ClassVar[str]
    reads: ClassVar[str]
    writes: ClassVar[str]
    mechanism: ClassVar[str] = READS_EXACTLY
    kind: ClassVar[str] = EVALUATION

    def run(self, context: Context) -> list[str]:
        raise NotImplementedError


@dataclass(eq=False)
class ExactLevels(ExactStep):
    """A text column's levels by their training counts (the counts private level selection adds noise to).

    Most frequent first; beyond ``max_levels`` the rarest share one ``(other)`` column, which also
    takes a level never seen in training; a gap takes the most frequent level.
    """

    name = "encoding"
    needs = "a text column"
    reads = "how many training rows hold each level"
    writes = "the levels that get a 0/1 column, the (other) column, the level a gap takes"

    plan: ColumnPlan
    max_levels: int

    def run(self, context: Context) -> list[str]:
        plan = self.plan
        column = context.text(plan.name)
        counts = level_counts(column)
        seen = [code for code in range(len(column.levels)) if counts[code]]
        ordered = sorted(seen, key=lambda code: (-counts[code], column.levels[code]))
        grouped = ordered[self.max_levels - 1 :] if len(ordered) > self.max_levels else []
        plan.levels = tuple(column.levels[code] for code in ordered[: len(ordered) - len(grouped)])
        plan.grouped = len(grouped)
        plan.gap_level = 0 if plan.width else -1
        return [self._note()]

    def _note(self) -> str:
        plan, names = self.plan, self.plan.level_names
        levels = ", ".join(f"'{level}'" for level in names[:8]) + (", …" if len(names) > 8 else "")
        text = (
            f"one-hot encoded the text column '{plan.name}' into {len(names)} columns of 0/1 ({levels}), "
            "levels from the training rows, most frequent first"
        )
        if plan.grouped:
            text += (
                f"; it has more than {self.max_levels} levels, so the {plan.grouped:,} rarest share the column "
                f"'{plan.name}={OTHER_LEVEL}'"
            )
        return (
            text
            + "; a level not seen in training goes to "
            + (f"'{OTHER_LEVEL}'" if plan.grouped else "no column (all zeros)")
        )


@dataclass(eq=False)
class ExactGaps(ExactStep):
    """What a gap becomes: a numeric column's training median, a text column's most frequent level (``ExactLevels``).

    ``imputed`` lists ``(column, statistic, values filled)`` for every column with a gap, training and test rows.
    """

    name = "encoding"
    needs = "the feature columns (text ones with their levels)"
    reads = "each numeric column's training median; where gaps are, training and test rows"
    writes = "the value a missing or infinite entry takes"

    plans: Sequence[ColumnPlan]
    test: np.ndarray
    imputed: list[tuple[str, str, int]] = field(default_factory=list)

    def run(self, context: Context) -> list[str]:
        for plan in self.plans:
            column = settled(plan.name, context.columns[plan.name])
            if isinstance(column, Categorical):
                filled = int(
                    np.count_nonzero(column.codes[context.train] < 0) + np.count_nonzero(column.codes[self.test] < 0)
                )
                statistic = (
                    f"the most frequent level '{plan.level_names[plan.gap_level]}'" if plan.width else "no column"
                )
            else:
                train = context.numbers(plan.name)
                filled = int(np.count_nonzero(~np.isfinite(train)) + np.count_nonzero(~np.isfinite(column[self.test])))
                known = train[np.isfinite(train)]
                # A column whose training values are all missing has no median; 0 keeps it harmless (constant).
                median = float(np.median(known)) if filled and known.size else 0.0
                plan.fill = median
                statistic = f"the training median {median:.6g}" + (" (after log(1 + x))" if plan.log1p else "")
            if filled:
                self.imputed.append((plan.name, statistic, filled))
        if not self.imputed:
            return []
        shown = "; ".join(f"'{name}': {count:,} with {statistic}" for name, statistic, count in self.imputed[:6])
        more = f"; and {len(self.imputed) - 6} more column(s)" if len(self.imputed) > 6 else ""
        return [
            f"filled missing or infinite feature values with statistics of the training rows ({shown}{more}); "
            "this reads the data and is not private"
        ]


@dataclass(eq=False)
class TargetLog(ExactStep):
    """A ridge target taken as ``log(1 + y)`` (the columns hold it so already): a note, nothing read."""

    name = "log(1 + y)"
    needs = "log1p_target"
    reads = "nothing"
    writes = "the target as log(1 + y)"
    mechanism = "none"
    kind = FREE

    target: str

    def run(self, context: Context) -> list[str]:
        return [f"applied log(1 + y) to the target {quoted(self.target)}"]


@dataclass(eq=False)
class ExactCentring(ExactStep):
    """Centre every feature column (one-hot columns too) and a ridge target by their training means."""

    name = "centring"
    needs = "the filled features; a ridge target"
    reads = "the training means"
    writes = "the centres (a one-hot block's per level) subtracted from every value"

    plans: Sequence[ColumnPlan]
    target: ColumnPlan | None

    def run(self, context: Context) -> list[str]:
        means = fill_features(self.plans, context.columns, context.train).mean(axis=0)
        start = 0
        for plan in self.plans:
            if plan.kind == "text":
                plan.level_means = means[start : start + plan.width]
            else:
                plan.centre = means[start]
            start += plan.width
        if self.target is None:
            return [
                "subtracted the training means of the features (the model has no intercept); "
                "the means read the data and are not private"
            ]
        self.target.centre = float(context.numbers(self.target.name).mean())
        return [
            f"subtracted the training means of the features and of the target ({fmt(self.target.centre)}), because "
            "the model has no intercept; the means read the data and are not private"
        ]


@dataclass(eq=False)
class ExactSpread(ExactStep):
    """Divide each numeric feature by its training standard deviation (1 for a column constant in training)."""

    name = "standardising"
    needs = "the centred features"
    reads = "each numeric column's training standard deviation"
    writes = "the spread every value is divided by"

    plans: Sequence[ColumnPlan]

    def run(self, context: Context) -> list[str]:
        starts = np.cumsum([0, *(plan.width for plan in self.plans)])[:-1]
        numeric = [(plan, int(start)) for plan, start in zip(self.plans, starts) if plan.kind != "text"]
        columns = [start for _, start in numeric]
        sds = fill_features(self.plans, context.columns, context.train)[:, columns].std(axis=0)
        # A column constant in the training rows (possible after filling gaps) has nothing to rescale.
        sds[sds == 0] = 1.0
        for (plan, _), sd in zip(numeric, sds):
            plan.spread = sd
        shown = ", ".join(f"{quoted(plan.name)} {sd:.4g}" for (plan, _), sd in zip(numeric[:6], sds[:6]))
        more = f", and {len(numeric) - 6} more" if len(numeric) > 6 else ""
        return [
            f"divided each of the {len(numeric)} numeric feature(s) by its training standard deviation ({shown}{more}), "
            "so that columns in large units do not crowd the others out; this reads the data and is not private"
        ]


@dataclass(eq=False)
class RowScale(ExactStep):
    """The bound every feature is divided by, and a ridge target's scale: read exactly ("paper") or stated ("clip").

    ``notes`` (after the rows are built) says what was divided and how many rows were clipped.
    """

    name = "scaling"
    needs = "the centred and standardised features; a ridge target"
    reads = "the largest training row ℓ1 norm and |y| ('paper'); nothing ('clip')"
    writes = "the bound B every feature is divided by and the target's scale; rows are clipped to ‖x‖₁ ≤ 1"

    plans: Sequence[ColumnPlan]
    target: ColumnPlan
    ridge: bool
    bounds: tuple[float, float | None] | None  # the stated bounds of 'clip' scaling; None: 'paper'
    feature_scale: float = 0.0
    target_scale: float | None = None

    @property
    def reads_data(self) -> bool:
        return self.bounds is None

    def run(self, context: Context) -> list[str]:
        if self.bounds is not None:
            self.feature_scale, target_bound = self.bounds
            self.target_scale = target_bound if self.ridge else None  # logistic labels are not scaled
        else:
            self.feature_scale = float(row_l1(fill_features(self.plans, context.columns, context.train)).max())
            if not math.isfinite(self.feature_scale):
                raise DataError(TOO_LARGE)
            if self.feature_scale == 0:
                raise DataError("every training row is all zeros after preprocessing; there is nothing to learn from")
            target = self.target
            self.target_scale = (
                float(np.max(np.abs(target.clipped(context.numbers(target.name)) - target.centre)))
                if self.ridge
                else None
            )
            if self.target_scale == 0:
                raise DataError("every training target is 0 after preprocessing; there is nothing to learn from")
        if self.ridge:
            assert self.target_scale is not None  # a ridge target's 'clip' bound is required (preparation_options)
            self.target.spread = self.target_scale
        return []

    def notes(self, clipped_train: np.ndarray, clipped_test: np.ndarray) -> tuple[int, int, list[str]]:
        """Training and test rows clipped, and the notes."""
        n_train, n_test = int(clipped_train.sum()), int(clipped_test.sum())
        y_part = " (and y to [−1, 1])" if self.ridge else ""
        if self.bounds is None:
            notes = [
                f"divided every feature by {self.feature_scale:.6g}, the largest ℓ1 norm of a training row "
                "('paper' scaling, as in the paper's experiments: this reads the data and is not private)"
            ]
            if self.ridge:
                notes.append(
                    f"divided the target by {self.target.spread:.6g}, the largest |y| in the training rows (not private)"
                )
            if n_test:
                notes.append(
                    f"{n_test:,} test row(s) fell outside ‖x‖₁ ≤ 1{y_part} with the training constants and were clipped "
                    "(test rows only feed the quality figures)"
                )
            return 0, n_test, notes  # under 'paper' scaling a training row can exceed ‖x‖₁ = 1 only by rounding
        note = (
            f"divided every feature by the stated bound {self.feature_scale:g}"
            + (f" and the target by the stated bound {self.target.spread:g}" if self.ridge else "")
            + f", then clipped rows to ‖x‖₁ ≤ 1{y_part}: {n_train:,} training and {n_test:,} test row(s) clipped "
            "('clip' scaling with public bounds: this step reads nothing from the data)"
        )
        return n_train, n_test, [note]
