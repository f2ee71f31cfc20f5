"""The public-bound scaler: a ``Pipeline`` step that scales rows into the unit ball by a bound stated without looking at
the data (docs/data-preparation.md#scaling-into-the-unit-ball).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from accfirst.datasets.preprocess import scale_rows
from accfirst.validation import validate_positive


class PublicBoundScaler(TransformerMixin, BaseEstimator):
    """Divide rows by a public bound on their ℓ1 norm, then clip them into ‖x‖₁ ≤ 1
    (docs/data-preparation.md#scaling-into-the-unit-ball, privacy-safe).

    The bound is stated without looking at the data (domain knowledge, the units' ranges),
    so this step reads nothing private; a row beyond it is scaled back onto the unit ℓ1
    sphere. The step for a ``Pipeline`` before ``AccuracyFirstRidge`` or
    ``AccuracyFirstLogistic`` (which can also do it themselves: their ``feature_bound``).

    Parameters
    ----------
    feature_bound : a public upper bound B > 0 on a row's ‖x‖₁.
    """

    def __init__(self, feature_bound: float = 1.0) -> None:
        self.feature_bound = feature_bound

    def fit(self, X: ArrayLike, y: object = None) -> PublicBoundScaler:
        """Check the bound and record the number of columns; reads no values."""
        validate_positive("feature_bound (a public bound on ‖x‖₁)", self.feature_bound)
        validate_data(self, X, dtype=np.float64)
        return self

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """X / B with every row clipped to ‖x‖₁ ≤ 1."""
        check_is_fitted(self)
        return scale_rows(validate_data(self, X, dtype=np.float64, reset=False, copy=True), self.feature_bound)

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """X · B (clipped rows stay clipped)."""
        check_is_fitted(self)
        rows: NDArray[np.float64] = validate_data(self, X, dtype=np.float64, reset=False)
        return rows * float(self.feature_bound)
