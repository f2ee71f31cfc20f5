"""Assertions shared by the dataset tests: what docs/mathematics.md#setting-and-notation promises about a prepared
dataset."""

from __future__ import annotations

import numpy as np

from accfirst.datasets import PreparedData

# The evaluation-only preparation, which reads the data.
EVALUATION = {"preparation": "evaluation"}
# The from_frame options that reproduce the preparation from before gaps were filled, text
# columns one-hot encoded and features centred and standardised by default: the tests that
# recover raw rows from prepared ones (row × feature_scale) use them.
LEGACY = {**EVALUATION, "center": False, "standardize": False, "missing": "drop", "max_levels": 0}


def assert_spec(prepared: PreparedData) -> None:
    """Float64, finite, read-only; rows ‖x‖₁ ≤ 1; ridge |y| ≤ 1, logistic y ∈ {−1, +1}; consistent shapes."""
    parts = (prepared.X_train, prepared.y_train, prepared.X_test, prepared.y_test)
    for array in parts:
        assert array.dtype == np.float64
        assert np.isfinite(array).all()
        assert not array.flags.writeable
    n_train, p = prepared.X_train.shape
    assert prepared.y_train.shape == (n_train,)
    assert prepared.X_test.shape == (prepared.y_test.shape[0], p)
    assert len(prepared.feature_names) == p >= 1
    assert (prepared.report.n_train, prepared.report.n_test) == (n_train, len(prepared.y_test))
    for X in (prepared.X_train, prepared.X_test):
        assert np.abs(X).sum(axis=1).max(initial=0.0) <= 1.0
    if prepared.task == "ridge":
        assert np.abs(prepared.y_train).max() <= 1.0 and np.abs(prepared.y_test).max(initial=0.0) <= 1.0
    else:
        assert set(np.unique(prepared.y_train)) == {-1.0, 1.0}
        assert set(np.unique(prepared.y_test)) <= {-1.0, 1.0}
