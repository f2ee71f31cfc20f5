"""The neighbour check of docs/mathematics.md#preparing-the-data-privately on every step of the private preparation (a
test, not a proof).

A realistic table and its neighbour (one training row replaced by an extreme one: huge
numbers, unseen text, gaps everywhere, a missing or huge target) go through the same plan.
Step by step, with the mechanisms' noise fixed (the numbers released so far are the table's
own, so the neighbour's step sees the same plan), each private step's exact statistic moves by
at most its declared sensitivity; n and the split do not change; and once the plan is released,
building the rows changes nothing but the replaced row, and every row, the neighbour's extreme one included, lies
within the plan's bound ρ on a row's Euclidean norm before the last clip to it. The assertions hold surely for a correct
preparation: nothing random decides them, so the false-failure rate is 0. A sensitivity that
ignored gaps (a mean over the non-missing values only) or a build step that read a statistic
of the rows would fail them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accfirst.datasets.columns import read_table
from accfirst.datasets.prepare.base import PRIVATE, Step
from accfirst.datasets.prepare.budget import allocate, needed_prep_epsilon
from accfirst.datasets.prepare.build import scaled_features
from accfirst.datasets.prepare.levels import PrivateLevels
from accfirst.datasets.prepare.private import build, kind_budget, plan_private
from accfirst.datasets.prepare.scaling import row_l2
from accfirst.datasets.prepare.schema import ColumnSpec, Schema
from accfirst.datasets.preprocess import preparation_options
from accfirst.datasets.upload import UploadLimits
from tests.data import mixed_table
from tests.datasets.test_upload_corpus import WITH_MARKERS, _base

TABLE = mixed_table(400, seed=3)
RIDGE = {"target": "spend", "task": "ridge"}
LOGISTIC = {"target": "churn", "task": "logistic", "positive_class": "yes"}
EXTREME_ROWS = {
    "huge": {
        "age": 1e15,
        "income": -1e15,
        "visits": 1e9,
        "score": -1e9,
        "tenure": 1e12,
        "member": 7.0,
        "region": "atlantis",
        "plan": "platinum",
        "colour": "ultraviolet",
        "spend": 1e15,
        "churn": "yes",
    },
    "gaps": dict.fromkeys(TABLE.columns, None),
    "target_missing": {"spend": None, "churn": None},
    "words": {"age": "unknown", "income": "lots", "region": 7.0, "spend": "unknown", "churn": 3.0},
    "tiny": {"age": -1e-12, "income": 0.0, "visits": -5.0, "score": 1e-300, "spend": -1e12, "churn": "no"},
}
OPTIONS = {
    "defaults": {},
    "private_spread_and_median": {"standardize": "private", "missing": "median"},
    "log1p_and_declared": {
        "log1p_columns": ["income"],
        "schema": Schema({"age": ColumnSpec(range=(18, 100)), "plan": ColumnSpec(levels=("basic", "plus", "pro"))}),
    },
    "no_centring": {"center": False, "missing": "centre"},
}


def _neighbour(frame: pd.DataFrame, row: int, values: dict) -> pd.DataFrame:
    other = frame.astype(object).copy()
    for column, value in values.items():
        if column in other:
            other.loc[row, column] = value
    return other.infer_objects()


def _statistic(step: Step, context) -> dict | np.ndarray:
    """The step's exact statistic; level counts by level name (two tables factorise their text differently)."""
    value = step.statistic(context)
    if isinstance(step, PrivateLevels):
        column = context.values(step.plan.name)
        return dict(zip(column.levels, value))
    return value


def _movement(step: Step, before, after) -> float:
    if isinstance(before, dict):
        names = set(before) | set(after)
        return sum(abs(before.get(name, 0.0) - after.get(name, 0.0)) for name in names)
    difference = np.abs(np.asarray(before) - np.asarray(after))
    return float(difference.sum() if step.norm == "l1" else difference.max())


def neighbour_check(frame: pd.DataFrame, other: pd.DataFrame, given: dict, replaced: int) -> list[tuple[str, float]]:
    """Run the check (see the module docstring); returns each private step's movement over its sensitivity."""
    options = preparation_options(**{k: v for k, v in given.items() if k != "target"}, noise_seed=0)
    limits = UploadLimits()
    plan = plan_private(read_table(frame, given["target"], limits), None, options)
    neighbour = plan_private(read_table(other, given["target"], limits), None, options)
    context, other_context = plan.context, neighbour.context
    assert other_context.n == context.n and len(other) == len(frame)
    np.testing.assert_array_equal(other_context.train, context.train)
    np.testing.assert_array_equal(neighbour.test, plan.test)
    assert [type(step) for step in neighbour.kinds] == [type(step) for step in plan.kinds]
    assert [type(step) for step in neighbour.target_steps] == [type(step) for step in plan.target_steps]
    ratios = []

    def check(step: Step) -> None:
        before, after = _statistic(step, context), _statistic(step, other_context)
        moved = _movement(step, before, after)
        bound = step.sensitivity(context)
        # A mean of values far from 0 (a range that missed, at the check's small ε) is rounded to a few ulps of them.
        rounding = 0.0 if isinstance(before, dict) else 64 * np.finfo(float).eps * float(np.abs(before).max())
        assert moved <= bound * (1 + 1e-9) + 1e-12 + rounding, (step.name, step.plan.name, moved, bound)
        ratios.append((f"{step.name} {step.plan.name}", moved / bound))

    # What the statistics need, so that the released ranges are the ones a preparation of this table would use.
    each, rest = kind_budget(plan, needed_prep_epsilon(plan.weight, context.n))
    for step in plan.kinds:  # first the kinds, then every other step on the kinds released
        check(step)
        step.run(context, each, 0.0)
        step.apply(other_context)
    steps = plan.settle()
    for step, (epsilon, delta) in zip(steps, allocate(steps, rest, 1e-6)):
        if step.kind == PRIVATE:
            check(step)
        step.run(context, epsilon, delta)
    position = int(np.flatnonzero(context.train == replaced)[0])
    X, y, _, _ = build(plan, context.columns, context.train)
    X_other, y_other, _, _ = build(plan, other_context.columns, context.train)
    changed = np.flatnonzero((X != X_other).any(axis=1) | (y != y_other))
    assert set(changed) <= {position}
    X_test, y_test, _, _ = build(plan, context.columns, plan.test)
    X_test_other, y_test_other, _, _ = build(plan, other_context.columns, plan.test)
    np.testing.assert_array_equal(X_test, X_test_other)
    np.testing.assert_array_equal(y_test, y_test_other)
    # The plan's bound ρ on a row's Euclidean norm holds before the last clip to it: on the neighbour's extreme row too.
    scaling = plan.scaling
    for columns in (context.columns, other_context.columns):
        unclipped, _ = scaled_features(plan.kept, scaling.bound(), 1.0, columns, context.train)
        assert row_l2(unclipped).max() <= scaling.row_bound() * (1 + 1e-12)
    return ratios


def _training_row(frame: pd.DataFrame, given: dict, k: int) -> int:
    options = preparation_options(**{k: v for k, v in given.items() if k != "target"})
    return int(plan_private(read_table(frame, given["target"], UploadLimits()), None, options).context.train[k])


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("extreme", sorted(EXTREME_ROWS))
@pytest.mark.parametrize("task", ["ridge", "logistic"])
def test_one_replaced_row_moves_each_statistic_by_at_most_its_sensitivity(task, extreme, options):
    given = {**(RIDGE if task == "ridge" else LOGISTIC), **OPTIONS[options]}
    frame = TABLE.drop(columns="churn" if task == "ridge" else "spend")
    for k in (0, 57):
        row = _training_row(frame, given, k)
        ratios = neighbour_check(frame, _neighbour(frame, row, EXTREME_ROWS[extreme]), given, row)
        assert ratios  # the check saw private steps


def test_the_bounds_are_reached_so_the_check_can_fail():
    """On the extreme rows the median's and the median distance's utilities, a centre, the level counts and a kind
    move by their full sensitivity (the target's centre by most of it: the replaced row's target lies inside its
    range)."""
    frame = TABLE.drop(columns="churn")
    row = _training_row(frame, RIDGE, 1)
    ratios = dict(neighbour_check(frame, _neighbour(frame, row, EXTREME_ROWS["huge"]), RIDGE, row))
    assert ratios["private median income"] == pytest.approx(1.0)
    assert ratios["private range income"] == pytest.approx(1.0)
    assert ratios["private levels region"] == pytest.approx(1.0)
    assert ratios["private centre spend"] > 0.45
    words = dict(neighbour_check(frame, _neighbour(frame, row, EXTREME_ROWS["words"]), RIDGE, row))
    assert words["private kind age"] == pytest.approx(1.0)  # a number became a word: d moves by 2


def test_a_gap_replaced_by_a_value_keeps_the_quantiles_sensitivity_1():
    """The non-missing count m changes with the row: the target rank t = q·m moves too, and |Δu| ≤ 1 still."""
    frame = _base(seed=4, n=60).drop(columns="label")
    frame.loc[::3, "x1"] = np.nan
    row = _training_row(frame, {"target": "y", "task": "ridge"}, 5)
    for value in (None, 1e9, -1e9, 5.0):
        before = frame.copy()
        before.loc[row, "x1"] = np.nan if value is not None else 4.0
        other = _neighbour(before, row, {"x1": value})
        neighbour_check(before, other, {"target": "y", "task": "ridge"}, row)


def test_a_corpus_table_with_missing_markers():
    frame = WITH_MARKERS.copy()
    frame["kind"] = ["a", "b", "?", "c"] * (len(frame) // 4)
    given = {"target": "y", "task": "ridge"}
    row = _training_row(frame, given, 3)
    other = _neighbour(frame, row, {"x1": "n/a", "x2": 1e300, "kind": "brand-new"})
    assert neighbour_check(frame, other, given, row)
