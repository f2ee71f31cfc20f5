"""The private preparation inside an estimator's ``fit`` (docs/mathematics.md#preparing-the-data-privately): every row
trains, the released plans stay.

``prepare_fit`` prepares a DataFrame and its target as ``from_frame`` does privately (declared
metadata first, a charged mechanism for the rest), with no held-out part: an estimator's ``fit``
trains on every row it is given. It returns a ``FittedPreparation`` — the released column plans
and the ``Preparation`` with its (ε, δ) — whose ``transform`` turns any later frame into
features from the plans alone, one row at a time: ``predict`` reads no statistic of its rows.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from accfirst.datasets.columns import label_keys, listing, matches, quoted, read_table
from accfirst.datasets.prepare.base import ColumnPlan
from accfirst.datasets.prepare.build import scaled_features
from accfirst.datasets.prepare.kind import read_cells
from accfirst.datasets.prepare.options import PrepOptions
from accfirst.datasets.prepare.private import build, plan_private, positive_class, read_column, release
from accfirst.datasets.prepare.scaling import UnitBallScaling
from accfirst.datasets.prepared import PRIVATE_MODE, Preparation
from accfirst.datasets.preprocess import check_target_read, preparation_options
from accfirst.datasets.upload import UploadLimits
from accfirst.errors import DataError

# An estimator's input is the caller's own frame, not an upload: no upload limits.
_NO_LIMITS = UploadLimits(max_bytes=2**62, max_rows=2**62, max_columns=2**62, max_memory=2**62)
# Options of ``from_frame`` an estimator's fit has no use for: it prepares privately and holds no rows out.
_FIT_ONLY = ("preparation", "test_size", "seed")
_DEFAULT_TARGET = "y"


@dataclass(frozen=True)
class FittedPreparation:
    """The released plans of a private preparation, what it cost, and (logistic) the declared classes.

    Parameters
    ----------
    features : the feature columns' plans (kept ones only), in output order.
    target : the target's plan (ridge: its centre and scale, to map predictions back).
    feature_bound : the stated bound on ‖x‖₁ (``scaling="clip"``), or ``None`` (the plans' bound).
    row_bound : ρ, the plans' bound on a row's Euclidean norm (``UnitBallScaling.row_bound``); rows are clipped to it.
    preparation : every step with its mechanism and (ε, δ).
    classes : logistic: the declared (negative, positive) classes; ``None`` for ridge.
    """

    features: tuple[ColumnPlan, ...]
    target: ColumnPlan
    feature_bound: float | None
    row_bound: float
    preparation: Preparation
    classes: np.ndarray | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The prepared features' names (``column=level`` for a text level), in ``coef_``'s order."""
        return tuple(name for plan in self.features for name in plan.names)

    def transform(self, X: object) -> np.ndarray:
        """The features of a frame's rows from the released plans alone (no statistic of ``X`` is read).

        A gap takes the released fill, a text level the plan does not list gives zeros.
        """
        frame = _frame(X)
        series = {str(name).strip(): frame.iloc[:, i] for i, name in enumerate(frame.columns)}
        missing = [plan.name for plan in self.features if plan.name not in series]
        if missing:
            raise DataError(f"X lacks the column(s) {listing(missing)} the model was fitted on")
        columns = {plan.name: read_column(series[plan.name], plan.kind, plan.log1p) for plan in self.features}
        bound = UnitBallScaling(self.features, self.feature_bound).bound()
        return scaled_features(self.features, bound, self.row_bound, columns, np.arange(len(frame)))[0]

    def target_present(self, y: ArrayLike) -> np.ndarray:
        """Where a target value is there as ``fit`` read it: a ridge target a number (a gap or a word is missing), a
        logistic label any cell but a gap. ``fit`` trains on a row without one as a zero row; a score has nothing to
        compare its prediction with."""
        cells = read_cells(y.reset_index(drop=True) if isinstance(y, pd.Series) else pd.Series(np.asarray(y)))
        present: np.ndarray = np.logical_not(cells.gap) if self.classes is not None else np.isfinite(cells.as_numbers())
        return present

    def to_target_units(self, scores: np.ndarray) -> np.ndarray:
        """Ridge predictions on the prepared scale in the target's own units: × scale, + centre, then expm1."""
        values = scores * self.target.spread + self.target.centre
        return np.expm1(values) if self.target.log1p else values


def prepare_fit(
    X: object, y: ArrayLike, task: str, prepare: str | Mapping[str, object]
) -> tuple[FittedPreparation, np.ndarray, np.ndarray]:
    """Prepare ``(X, y)`` privately on every row: the fitted preparation, the features and the targets.

    ``prepare`` is ``"private"`` (the defaults of ``from_frame``) or a mapping of its options
    (``schema``, ``prep_epsilon``, ``prep_delta``, ``positive_class``, ``noise_seed``, …). The
    target's name is ``y.name`` for a named Series, else ``"y"`` (the name a schema uses for it).
    """
    options = _options(prepare, task)
    frame = _frame(X)
    name = getattr(y, "name", None)
    target = _DEFAULT_TARGET if name is None else str(name).strip()
    if target in {str(name).strip() for name in frame.columns}:
        raise DataError(f"the target's name {quoted(target)} is also a column of X; rename one of them")
    array = np.asarray(y)
    if array.ndim != 1 or len(array) != len(frame):
        raise DataError(f"y must hold one value per row of X ({len(frame):,}); got shape {array.shape}")
    values = y.reset_index(drop=True) if isinstance(y, pd.Series) else pd.Series(array)
    table = read_table(pd.concat([frame.reset_index(drop=True), values.rename(target)], axis=1), target, _NO_LIMITS)
    check_target_read(options, target)
    plan = plan_private(table, None, options, hold_out=False)
    classes = _classes(options, target) if task == "logistic" else None
    preparation = release(plan)
    rows = build(plan, plan.context.columns, plan.context.train)
    fitted = FittedPreparation(
        tuple(plan.kept), plan.target, options.feature_bound, plan.scaling.row_bound(), preparation, classes
    )
    return fitted, rows.X, rows.y


def _options(prepare: object, task: str) -> PrepOptions:
    """The preparation options of ``prepare`` (``"private"`` or a mapping), checked as ``from_frame`` checks them."""
    if isinstance(prepare, str) and prepare == PRIVATE_MODE:
        chosen: dict[str, Any] = {}  # checked by preparation_options
    elif isinstance(prepare, Mapping):
        chosen = dict(prepare)
    else:
        raise DataError(
            f"prepare must be None (numeric arrays), 'private' or a mapping of preparation options such as "
            f"{{'schema': ..., 'prep_epsilon': 0.2}}; got {prepare!r} (an estimator's ε covers its preparation: the "
            "evaluation-only one reads the data)"
        )
    allowed = [name for name in inspect.signature(preparation_options).parameters if name not in (*_FIT_ONLY, "task")]
    unknown = sorted(set(chosen) - set(allowed))
    if unknown:
        fit_only = set(unknown) & set(_FIT_ONLY)
        reason = (
            "; an estimator prepares privately and trains on every row it is given (hold rows out before fit)"
            if fit_only
            else ""
        )
        raise DataError(f"unknown prepare option(s) {listing(unknown)}{reason}; allowed: {listing(allowed, 20)}")
    return preparation_options(task=task, **chosen)


def _frame(X: object) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise DataError(
            f"with prepare, X must be a pandas DataFrame (named columns of numbers or text, gaps allowed); "
            f"got {type(X).__name__}"
        )
    return X


def _classes(options: PrepOptions, target: str) -> np.ndarray:
    """(negative, positive): the target's two declared levels, the declared positive class second."""
    levels = options.schema.column(target).levels or ()
    keys = label_keys(pd.Series(levels, dtype=object), target)
    hit = matches(keys, positive_class(options))
    if len(levels) != 2 or hit.sum() != 1:
        raise DataError(
            f"AccuracyFirstLogistic with prepare needs the target's two classes declared, the positive one among "
            f"them: e.g. schema={{'columns': {{{target!r}: {{'levels': ['no', 'yes']}}}}, 'positive_class': 'yes'}} "
            "(reading the classes from y would read the data)"
        )
    return np.concatenate([keys.keys[~hit], keys.keys[hit]])
