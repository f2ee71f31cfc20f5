"""ρ, the public bound on a prepared row's Euclidean norm (docs/mathematics.md#preparing-the-data-privately).

Deterministic (fixed seeds; the assertions are exact inequalities or equalities): false-failure rate 0. A ρ taken
from half-ranges instead of each column's largest distance from its centre fails the first two tests (a declared
range centred at a private mean reaches beyond its half-range: the neighbour check's declared ages), and a ρ read
from the rows the second.
"""

from __future__ import annotations

import numpy as np
import pytest

from accfirst.datasets import ColumnSpec, Schema, from_frame, load_builtin
from accfirst.datasets.prepare.fitted import prepare_fit
from accfirst.datasets.prepare.scaling import row_l2
from tests.data import customer_upload, mixed_table

RIDGE = {"target": "spend", "task": "ridge"}


def _largest(data) -> float:
    return float(max(row_l2(data.X_train).max(), row_l2(data.X_test).max()))


def test_the_plans_bound_holds_on_every_row_and_is_well_below_one():
    for frame, target in (
        (customer_upload(2_000), "annual_spend"),
        (mixed_table(2_000, 1).drop(columns="churn"), "spend"),
    ):
        data = from_frame(frame, target=target, task="ridge", noise_seed=5)
        assert _largest(data) <= data.row_bound < 0.5
        assert any("‖x‖₂ ≤ ρ" in step for step in data.report.steps)


def test_the_bound_is_the_square_root_of_the_columns_largest_squares_over_the_bound():
    """Every range declared, no centring: a column divided by its half-range h takes at most max(|low|, |high|)/h, and
    the rows are divided by B = the number of columns."""
    frame = mixed_table(1_000, 2).drop(columns=["churn", "region", "plan", "colour"])
    ranges = {"age": (18, 100), "income": (0, 200_000), "visits": (0, 12), "score": (0, 100), "tenure": (0, 25)}
    ranges["member"] = (0, 1)
    schema = Schema({name: ColumnSpec(range=r) for name, r in {**ranges, "spend": (0, 1_500)}.items()})
    options = {**RIDGE, "schema": schema, "center": False, "noise_seed": 0}
    data = from_frame(frame, **options)
    largest = np.array([max(abs(low), abs(high)) / ((high - low) / 2) for low, high in ranges.values()])
    assert data.report.feature_scale == pytest.approx(len(ranges))
    assert data.row_bound == pytest.approx(np.sqrt(np.sum(largest**2)) / len(ranges)) and data.row_bound < 1
    assert _largest(data) <= data.row_bound
    assert data.prep_epsilon == 0  # everything declared: ρ is public, the same whatever the values
    other = from_frame(mixed_table(1_000, 3).drop(columns=["churn", "region", "plan", "colour"]), **options)
    assert other.row_bound == data.row_bound and not np.array_equal(other.X_train, data.X_train)


def test_evaluation_only_and_public_data_read_the_largest_row():
    data = from_frame(mixed_table(1_000, 6).drop(columns="churn"), **RIDGE, preparation="evaluation")
    assert _largest(data) <= data.row_bound <= _largest(data) * (1 + 1e-14)
    assert any("the largest Euclidean norm of a row" in step for step in data.report.steps)
    buzz = load_builtin("synthetic-buzz")
    assert _largest(buzz) <= buzz.row_bound <= _largest(buzz) * (1 + 1e-14) and buzz.prep_epsilon == 0


def test_an_estimators_preparation_keeps_the_bound_and_clips_new_rows_to_it():
    frame = mixed_table(1_500, 7).drop(columns="churn")
    X, y = frame.drop(columns="spend"), frame["spend"]
    fitted, X_fit, _ = prepare_fit(X, y, "ridge", {"prep_epsilon": 2.0, "noise_seed": 0})
    assert row_l2(X_fit).max() <= fitted.row_bound
    extreme = X.head(3).assign(age=1e9, income=-1e9, visits=1e9, score=-1e9, tenure=1e9, member=1e9)
    assert row_l2(fitted.transform(extreme)).max() <= fitted.row_bound * (1 + 1e-12) < 1
