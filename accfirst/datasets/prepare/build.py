"""From a plan to arrays: what both preparations share once their steps have run.

A preparation first decides a ``Plan`` (the feature and target columns, the data its steps may
read, the held-out rows, the steps), then runs its steps, which write numbers into the columns'
``ColumnPlan``: the private preparation's come from declarations and charged mechanisms, the
evaluation-only one's are read exactly. Turning rows into features and targets is then the same
for both and reads no statistic: each row goes through the plans alone (``ColumnPlan.transform``),
every feature is divided by one bound, a row beyond ``‖x‖₁ = 1`` is clipped back onto the ball
(docs/mathematics.md#setting-and-notation), and one beyond the Euclidean bound ρ onto its ball.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from accfirst.datasets.columns import Categorical
from accfirst.datasets.prepare.base import ColumnPlan, Context, StepRecord, settled
from accfirst.datasets.prepare.identifiers import IDENTIFIER_REASON
from accfirst.datasets.prepare.kind import Cells
from accfirst.datasets.prepare.options import PrepOptions
from accfirst.datasets.prepare.scaling import clip_rows, clip_rows_l2
from accfirst.datasets.prepared import DatasetInfo, Preparation, PreparedData, PrepReport

# A logistic zero row's label: with x = 0 its loss is log 2 whatever θ, so any label would do.
_ZERO_ROW_LABEL = -1.0

Columns = Mapping[str, np.ndarray | Categorical | Cells]


@dataclass
class Plan:
    """What a preparation decided before its steps run, and the steps.

    ``context`` holds the columns (every row) and the training rows the steps may read; ``test``
    the held-out rows; ``raw_target`` a ridge target in its own units; ``structure`` the records of
    the decisions taken before the steps (columns, split); ``identifiers`` the columns left out as
    identifiers (``prepare.identifiers``). Each preparation adds its steps.
    """

    context: Context
    features: list[ColumnPlan]
    target: ColumnPlan
    test: np.ndarray
    options: PrepOptions
    raw_target: np.ndarray | None = None
    structure: list[StepRecord] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[ColumnPlan]:
        """The feature columns that stay (no released or read number left them out)."""
        return [column for column in self.features if not column.dropped]

    @property
    def dropped_columns(self) -> tuple[tuple[str, str], ...]:
        """``(column, reason)`` for every column left out of the features: the identifiers, then by the steps."""
        return (
            *((name, IDENTIFIER_REASON) for name in self.identifiers),
            *((column.name, column.dropped) for column in self.features if column.dropped),
        )


class Rows(NamedTuple):
    """Prepared rows: features, targets, where the target is present, and which rows were clipped."""

    X: np.ndarray
    y: np.ndarray
    present: np.ndarray
    clipped: np.ndarray


def fill_features(features: Sequence[ColumnPlan], columns: Columns, rows: np.ndarray) -> np.ndarray:
    """The features of ``rows`` from the plans alone, row by row, before the division by the bound."""
    X = np.zeros((len(rows), sum(column.width for column in features)))
    start = 0
    for column in features:
        column.transform(settled(column.name, columns[column.name]), rows, X[:, start : start + column.width])
        start += column.width
    return X


def scaled_features(
    features: Sequence[ColumnPlan], bound: float, row_bound: float, columns: Columns, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The features of ``rows`` divided by ``bound``, clipped into the unit ℓ1 ball and then into ‖x‖₂ ≤ ``row_bound``;
    which rows the ℓ1 clip moved."""
    X = fill_features(features, columns, rows)
    X /= bound
    clipped = clip_rows(X)
    clip_rows_l2(X, row_bound)
    return X, clipped


def build_rows(
    features: Sequence[ColumnPlan],
    target: ColumnPlan,
    bound: float,
    row_bound: float,
    columns: Columns,
    rows: np.ndarray,
) -> Rows:
    """Features and targets of ``rows`` from the plans alone (row by row).

    A ridge target becomes ``(y − centre)/spread`` clipped to [−1, 1]; a row whose target is
    missing is a zero row (x = 0, y = 0; a logistic label is irrelevant when x = 0).
    """
    X, clipped = scaled_features(features, bound, row_bound, columns, rows)
    column = settled(target.name, columns[target.name])
    if isinstance(column, Categorical):
        raise TypeError(f"the target {target.name!r} is read as numbers")
    values = column[rows]
    present = np.isfinite(values)
    if target.kind == "labels":
        y = np.where(present, values, _ZERO_ROW_LABEL)
    else:
        y = np.zeros(len(rows))
        scaled = (target.clipped(values[present]) - target.centre) / target.spread
        clipped[present] |= np.abs(scaled) > 1
        y[present] = np.clip(scaled, -1.0, 1.0)
    X[~present] = 0.0
    return Rows(X, y, present, clipped)


def prepared_data(
    plan: Plan,
    train: Rows,
    test: Rows,
    report: PrepReport,
    preparation: Preparation,
    info: DatasetInfo | None,
    row_bound: float,
    target_range: tuple[float, float] | None = None,
) -> PreparedData:
    """The read-only arrays, their report, their bound ρ on a row's Euclidean norm and, from a private plan, the public
    interval of the ridge targets; test rows without a target leave the quality figures."""
    X_test, y_test = test.X[test.present], test.y[test.present]
    ridge = plan.options.task == "ridge"
    raw = plan.raw_target
    y_test_original = raw[plan.test][test.present] if ridge and raw is not None else None
    for array in (train.X, train.y, X_test, y_test, *(() if y_test_original is None else (y_test_original,))):
        array.flags.writeable = False
    return PreparedData(
        X_train=train.X,
        y_train=train.y,
        X_test=X_test,
        y_test=y_test,
        task=plan.options.task,
        feature_names=tuple(name for column in plan.kept for name in column.names),
        target_name=plan.target.name,
        report=report,
        info=info,
        y_test_original=y_test_original,
        preparation=preparation,
        row_bound=row_bound,
        prepared_range=target_range,
    )
