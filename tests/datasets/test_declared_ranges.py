"""Declared ranges in short (``from_frame(..., ranges={"age": (18, 100)})``) are the schema's ranges, and free
for their column (docs/data-preparation.md#numeric-columns, docs/mathematics.md#preparing-the-data-privately).
Deterministic: fixed noise seeds, no false failures.
"""

from __future__ import annotations

import numpy as np
import pytest

from accfirst.datasets import Schema, from_frame
from accfirst.datasets.prepare.private import random_split
from accfirst.errors import DataError
from tests.data import mixed_table

TABLE = mixed_table(1_000, seed=5).drop(columns="churn")
RIDGE = {"target": "spend", "task": "ridge", "noise_seed": 0, "budget": None}
RANGES = {"age": (18, 100), "income": (0, 200_000)}


def _spent(data: object, column: str) -> float:
    frame = data.preparation.to_frame()
    return float(frame.loc[frame["column"] == column, "epsilon"].sum())


def test_a_declared_range_costs_its_column_nothing():
    private = from_frame(TABLE, **RIDGE)
    declared = from_frame(TABLE, **RIDGE, ranges=RANGES)
    for column in RANGES:
        assert _spent(private, column) > 0  # a kind, a median and a distance, all charged
        assert _spent(declared, column) == 0.0
    assert declared.prep_epsilon < private.prep_epsilon
    steps = " ".join(declared.report.steps)
    assert "'age': the middle of its declared range, 59, subtracted" in steps
    # Centred at the middle of the range, not at a mean: a training row aged 59 gets 0, older rows a positive value.
    age = declared.feature_names.index("age")
    rows = random_split(len(TABLE), 0.2, 0)[0]
    kept = TABLE["spend"].notna().to_numpy()[rows]  # a missing target makes a zero row
    ages, x = TABLE["age"].to_numpy()[rows][kept], declared.X_train[kept, age]
    assert (ages == 59).any() and (x[ages == 59] == 0).all()
    assert (x[ages > 59] > 0).all() and (x[ages < 59] < 0).all()


def test_the_short_form_is_the_schemas_range():
    short = from_frame(TABLE, **RIDGE, ranges={"age": [18, 100]})
    schema = from_frame(TABLE, **RIDGE, schema={"columns": {"age": {"range": [18, 100]}}})
    np.testing.assert_array_equal(short.X_train, schema.X_train)
    assert short.report.steps == schema.report.steps
    # Added to a schema's other entries for the same column and table.
    both = from_frame(
        TABLE,
        **RIDGE,
        schema=Schema.from_dict({"columns": {"income": {"log1p": True}}}),
        ranges={"income": (0, 200_000)},
    )
    assert _spent(both, "income") == 0.0 and "log(1 + x)" in " ".join(both.report.steps)


def test_a_declared_target_range_keeps_a_private_mean():
    """The models have no intercept: the ridge target is centred at a private mean whatever its range."""
    data = from_frame(TABLE, **RIDGE, ranges={"spend": (0, 1_500)})
    frame = data.preparation.to_frame()
    target = frame.loc[frame["column"] == "spend"]
    assert list(target.loc[target["epsilon"] > 0, "step"]) == ["private centre"]


@pytest.mark.parametrize(
    ("ranges", "extra", "message"),
    [
        ({"age": (100, 18)}, {}, "ranges['age']: range must have low < high"),
        ({"age": "18:100"}, {}, "ranges['age']: range must be two finite numbers"),
        ({"age": (0, float("inf"))}, {}, "range must be two finite numbers"),
        ([("age", (18, 100))], {}, "ranges must map column names to (low, high)"),
        ({"region": (0, 1)}, {"schema": {"columns": {"region": {"levels": ["north"]}}}}, "not both"),
        ({"age": (0, 1)}, {"schema": {"columns": {"age": {"range": [18, 100]}}}}, "already declares the range"),
        ({"agee": (0, 1)}, {}, "agee"),
    ],
)
def test_a_bad_declared_range_is_a_data_error(ranges, extra, message):
    with pytest.raises(DataError) as raised:
        from_frame(TABLE, **RIDGE, ranges=ranges, **extra)
    assert message in str(raised.value)
