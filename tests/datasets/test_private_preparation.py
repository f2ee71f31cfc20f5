"""The private preparation (docs/mathematics.md#preparing-the-data-privately) end to end: its ledger, its structure,
declared metadata, quality.

Fixed seeds. The quality test compares the exact model θ* (a non-private ridge fit on the
prepared training rows) with the evaluation-only preparation of the same table; its false-failure rate is
stated on the test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from accfirst import RidgeProblem
from accfirst.datasets import ColumnSpec, PreparedData, Schema, from_frame, load_builtin, load_schema
from accfirst.datasets.prepare.budget import DEFAULT_TABLE_BUDGET, EPSILON_ROWS_PER_WEIGHT, PREP_SHARE, allocate
from accfirst.datasets.prepare.centre import PrivateCentre
from accfirst.datasets.prepare.levels import PrivateLevels
from accfirst.datasets.prepare.private import random_split
from accfirst.datasets.prepare.ranges import PrivateRange
from accfirst.datasets.prepared import EXCLUDES_PREPARATION
from accfirst.errors import DataError
from tests.data import mixed_table
from tests.datasets.dataset_checks import assert_spec

TABLE = mixed_table(1_000, seed=5)
RIDGE = {"target": "spend", "task": "ridge"}
LOGISTIC = {"target": "churn", "task": "logistic", "positive_class": "yes"}
LAMBDA = 0.005


def _ridge(**options: object) -> PreparedData:
    """The table prepared with no table budget stated: its 800 training rows get what their statistics need."""
    return from_frame(TABLE.drop(columns="churn"), **RIDGE, **{"noise_seed": 0, "budget": None, **options})


def test_the_ledger_adds_the_steps_by_basic_composition():
    data = _ridge()
    assert_spec(data)
    frame = data.preparation.to_frame()
    assert list(frame.columns) == ["step", "column", "kind", "mechanism", "epsilon", "delta", "note"]
    private = frame[frame["kind"] == "private"]
    assert data.prep_epsilon == pytest.approx(private["epsilon"].sum()) and data.prep_epsilon > 0
    assert data.prep_delta == pytest.approx(1e-6)  # the level selections share δ_prep
    assert (frame.loc[frame["kind"] != "private", ["epsilon", "delta"]] == 0).all().all()
    # The default budget: 150 per unit of weight per training row (docs/data-preparation.md); a column
    # whose kind is released privately counts as numeric (a median and a median distance, 1 each; centred at the
    # median for free) plus its kind step (0.25); the target adds its median, its median distance and a mean (0.5).
    kinds = (private["step"] == "private kind").sum()
    assert kinds == 9
    total = kinds * (0.25 + 2.0) + 2.0 + 0.5
    assert data.prep_epsilon == pytest.approx(EPSILON_ROWS_PER_WEIGHT * total / data.n)
    assert "no budget stated for the table" in " ".join(data.report.steps)
    assert set(private["column"]) == {
        "age",
        "income",
        "visits",
        "score",
        "tenure",
        "member",
        "region",
        "plan",
        "colour",
        "spend",
    }
    assert "repeatable run (noise seed 0): not a private release" in data.report.steps[-1]


def test_by_default_the_preparation_takes_at_most_a_quarter_of_the_tables_budget():
    frame = TABLE.drop(columns="churn")
    capped = from_frame(frame, **RIDGE, noise_seed=0)  # needs 150 × weight 22.75 / 800 rows = 4.27
    assert capped.prep_epsilon == pytest.approx(PREP_SHARE * DEFAULT_TABLE_BUDGET) == pytest.approx(0.5)
    assert capped.preparation.share == pytest.approx(0.25)
    assert "25% of the table's budget ε = 2" in capped.report.steps[-1]
    assert any("the smaller of 4.27, what its statistics need" in step for step in capped.report.steps)
    assert any("below the 60/n" in step for step in capped.report.steps)  # and it says what that costs
    larger = from_frame(frame, **RIDGE, noise_seed=0, budget=40.0)
    assert larger.prep_epsilon == pytest.approx(EPSILON_ROWS_PER_WEIGHT * 22.75 / larger.n)  # within 25% of 40
    assert f"{larger.prep_epsilon / 40:.0%} of the table's budget ε = 40" in larger.report.steps[-1]
    stated = from_frame(frame, **RIDGE, noise_seed=0, prep_epsilon=3.0)
    assert stated.prep_epsilon == pytest.approx(3.0) and "more than the table's budget ε = 2" in stated.report.steps[-1]
    big = mixed_table(25_000, seed=5).drop(columns="churn")  # 20,000 training rows need less than the share
    assert from_frame(big, **RIDGE, noise_seed=0).prep_epsilon == pytest.approx(
        EPSILON_ROWS_PER_WEIGHT * 22.75 / 20_000
    )


def test_a_stated_budget_is_split_by_weight():
    data = _ridge(prep_epsilon=0.5, prep_delta=1e-7)
    frame = data.preparation.to_frame()
    assert data.prep_epsilon == pytest.approx(0.5) and data.prep_delta == pytest.approx(1e-7)
    medians = frame.loc[frame["step"] == "private median", "epsilon"]
    ranges = frame.loc[frame["step"] == "private range", "epsilon"]
    centres = frame.loc[frame["step"] == "private centre", "epsilon"]
    levels = frame.loc[frame["step"] == "private levels", "epsilon"]
    assert medians.nunique() == ranges.nunique() == centres.nunique() == levels.nunique() == 1
    assert len(centres) == 1  # the target's mean: the features are centred at their released medians
    assert medians.iloc[0] == pytest.approx(ranges.iloc[0]) and ranges.iloc[0] == pytest.approx(2 * centres.iloc[0])
    assert levels.iloc[0] == pytest.approx(4 * ranges.iloc[0])


def test_a_column_released_as_text_has_a_share_when_numeric_columns_would_spend_nothing():
    """Public bounds, no centring, no standardising: a numeric column spends nothing, so an undeclared column
    counts as text in the total weight; counted as numeric, the kinds took the whole budget and the level
    selection of a column released as text got ε = 0 (a division by zero)."""
    options = {"center": False, "standardize": False, "scaling": "clip", "feature_bound": 3.0, "noise_seed": 0}
    data = from_frame(TABLE[["age", "region", "churn"]], **LOGISTIC, **options, budget=None)
    frame = data.preparation.to_frame()
    levels = frame.loc[frame["step"] == "private levels", "epsilon"]
    assert len(levels) == 1 and levels.iloc[0] > 0
    assert data.prep_epsilon == pytest.approx(EPSILON_ROWS_PER_WEIGHT * 2 * (0.25 + 4.0) / data.n)
    assert any(name.startswith("region=") for name in data.feature_names)


def test_a_small_budget_says_the_ranges_may_miss():
    data = _ridge(prep_epsilon=0.05)
    warning = next(step for step in data.report.steps if "below the 60/n" in step)
    assert "declare the ranges, or give at least prep_epsilon = " in warning
    assert not any("below the 60/n" in step for step in _ridge().report.steps)


def test_noise_comes_from_the_system_unless_a_seed_makes_the_run_repeatable():
    frame = TABLE.drop(columns="churn")
    first, second = (from_frame(frame, **RIDGE) for _ in range(2))
    assert not np.array_equal(first.X_train, second.X_train)  # fresh noise: different private means
    assert "repeatable" not in first.report.steps[-1] and first.preparation.noise_seed is None
    again = [_ridge(noise_seed=7) for _ in range(2)]
    np.testing.assert_array_equal(again[0].X_train, again[1].X_train)
    assert "repeatable run (noise seed 7): not a private release" in again[0].preparation.summary


def test_no_row_is_dropped_and_a_missing_target_is_a_zero_row():
    data = _ridge()
    assert data.report.rows_dropped_missing == 0
    assert data.n == 800  # 1,000 rows, 20% held out: n does not depend on the gaps
    frame = TABLE.drop(columns="churn")
    train, test = random_split(len(frame), 0.2, 0)
    missing = frame["spend"].isna().to_numpy()
    zero = missing[train]
    assert zero.any()
    np.testing.assert_array_equal(data.X_train[zero], 0.0)
    np.testing.assert_array_equal(data.y_train[zero], 0.0)
    assert not (data.X_train[~zero] == 0).all(axis=1).any()
    # Test rows without a target only leave the quality figures (evaluation only).
    assert len(data.y_test) == len(test) - missing[test].sum()


def test_the_split_depends_on_n_and_the_seed_only():
    one, other = mixed_table(300, seed=1), mixed_table(300, seed=2)
    public = {"center": False, "standardize": False, "scaling": "clip", "feature_bound": 1_000.0, "target_bound": 1e4}
    rows = []
    for table in (one, other):
        marked = table.drop(columns="churn").assign(row=np.arange(1.0, 301.0))
        data = from_frame(marked, **RIDGE, features=["row"], **public, noise_seed=0)
        rows.append(np.round(data.X_train[:, 0] * 1_000))  # the row's number; 0 for a zero row
    keep = (rows[0] != 0) & (rows[1] != 0)  # rows whose target is missing in either table are zero rows
    assert keep.sum() > 200
    np.testing.assert_array_equal(rows[0][keep], rows[1][keep])
    np.testing.assert_array_equal(rows[0][keep], random_split(300, 0.2, 0)[0][keep] + 1)


def test_logistic_labels_need_a_declared_positive_class():
    frame = TABLE.drop(columns="spend")
    with pytest.raises(DataError, match="needs the positive class declared"):
        from_frame(frame, target="churn", task="logistic")
    by_option = from_frame(frame, **LOGISTIC, noise_seed=0)
    by_schema = from_frame(frame, target="churn", task="logistic", schema={"positive_class": "yes"}, noise_seed=0)
    np.testing.assert_array_equal(by_option.y_train, by_schema.y_train)
    labels = frame["churn"].to_numpy()[random_split(len(frame), 0.2, 0)[0]]
    np.testing.assert_array_equal(by_option.y_train, np.where(labels == "yes", 1.0, -1.0))
    assert by_option.report.positive_class == "yes"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"missing": "drop"}, "missing='drop' drops rows, so n would depend on the data"),
        ({"scaling": "paper"}, "scaling must be 'ranges' or 'clip'; got 'paper'; 'paper' reads the data"),
        ({"standardize": "sd"}, "standardize must be True, False, 'half-range' or 'private'"),
        ({"prep_epsilon": 0}, "prep_epsilon must be a finite number > 0"),
        ({"budget": -1.0}, "budget must be a finite number > 0"),
        ({"budget": "all"}, "budget must be a number > 0 (or None)"),
        ({"prep_delta": 1.0}, "prep_delta must be in (0, 1)"),
        ({"noise_seed": -1}, "noise_seed must be None"),
        ({"preparation": "public"}, "preparation must be 'private' or 'evaluation'"),
        ({"schema": {"columns": {"nope": {"range": [0, 1]}}}}, "the schema names column(s) 'nope'"),
        (
            {"log1p_columns": ["region"], "schema": Schema({"region": ColumnSpec(kind="text")})},
            "column 'region' is declared text; log(1 + x) applies to numeric columns only",
        ),
    ],
)
def test_bad_private_options_are_data_errors(options, message):
    with pytest.raises(DataError) as caught:
        from_frame(TABLE.drop(columns="churn"), **RIDGE, **options)
    assert message in str(caught.value)


def test_declared_metadata_is_free_and_replaces_the_private_steps():
    numbers = ["age", "income", "visits", "score", "tenure", "member"]
    schema = Schema(
        {
            **dict.fromkeys(numbers, ColumnSpec(range=(0, 1e6))),
            "age": ColumnSpec(range=(18, 100)),
            "income": ColumnSpec(range=(0, 1e7), log1p=True),
            "region": ColumnSpec(levels=("north", "south", "east", "west", "centre")),
            "plan": ColumnSpec(levels=("basic", "plus", "pro")),
            "colour": ColumnSpec(read=False),
            "spend": ColumnSpec(range=(0, 1_000)),
        }
    )
    data = _ridge(schema=schema, center=False)
    assert data.prep_epsilon == 0 and data.prep_delta == 0
    assert "every statistic was declared" in data.report.steps[-1]
    assert "colour" not in {name.split("=")[0] for name in data.feature_names}
    region = tuple(name for name in data.feature_names if name.startswith("region="))
    assert region == tuple(f"region={level}" for level in ("north", "south", "east", "west", "centre"))
    assert set(data.preparation.to_frame()["kind"]) == {"declared", "post-processing"}
    assert data.report.log1p_columns == ("income",)
    # With centring, the means are the only private steps.
    centred = _ridge(schema=schema)
    private = centred.preparation.to_frame().query("kind == 'private'")
    assert set(private["step"]) == {"private centre"} and centred.prep_delta == 0


def test_declared_levels_give_columns_even_when_rare_and_zeros_for_other_values():
    frame = TABLE.drop(columns="churn")
    data = _ridge(schema={"columns": {"colour": {"levels": ["c0", "c29", "unseen"]}}})
    block = [data.feature_names.index(f"colour={level}") for level in ("c0", "c29", "unseen")]
    train = random_split(len(frame), 0.2, 0)[0]
    colour = frame["colour"].to_numpy()[train]
    present = frame["spend"].notna().to_numpy()[train]
    active = data.X_train[:, block] != 0
    np.testing.assert_array_equal(active[:, 0], (colour == "c0") & present)
    np.testing.assert_array_equal(active[:, 1], (colour == "c29") & present)
    assert not active[:, 2].any()


def test_identifier_like_text_gets_no_level_and_leaves_by_its_release():
    frame = TABLE.drop(columns="churn").assign(customer=[f"id-{i}" for i in range(len(TABLE))])
    data = from_frame(frame, **RIDGE, noise_seed=0)
    reasons = dict(data.report.dropped_columns)
    assert reasons["customer"].startswith("no level's noisy count passed the threshold")
    assert not any(name.startswith("customer=") for name in data.feature_names)


def test_evaluation_only_excludes_preparation_and_public_data_are_free():
    evaluation = from_frame(TABLE.drop(columns="churn"), **RIDGE, preparation="evaluation")
    assert math.isinf(evaluation.prep_epsilon) and evaluation.preparation.mode == "evaluation"
    assert evaluation.report.steps[-1] == f"preparation: every ε shown {EXCLUDES_PREPARATION}"
    kinds = set(evaluation.preparation.to_frame()["kind"])
    assert "evaluation only" in kinds and "private" not in kinds
    buzz = load_builtin("synthetic-buzz")
    assert buzz.prep_epsilon == 0 and "generated from public parameters: preparation is free" in buzz.report.steps[-1]


def test_the_private_spread_and_median_options():
    data = _ridge(standardize="private", missing="median", prep_epsilon=2.0)
    steps = set(data.preparation.to_frame()["step"])
    assert {"private spread", "private median"} <= steps and "half-range" not in steps
    assert_spec(data)


def test_a_schema_file_in_json_or_yaml(tmp_path):
    schema = Schema(
        {
            "age": ColumnSpec(range=(18, 100)),
            "region": ColumnSpec(levels=("north", "south")),
            "colour": ColumnSpec(read=False),
        },
        positive_class="yes",
    )
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_dict()), encoding="utf-8")
    (tmp_path / "schema.yaml").write_text(
        "positive_class: 'yes'\ncolumns:\n  age: {range: [18, 100]}\n  region: {levels: [north, south]}\n"
        "  colour: {read: false}\n",
        encoding="utf-8",
    )
    assert load_schema(tmp_path / "schema.json") == schema == load_schema(tmp_path / "schema.yaml")
    (tmp_path / "bad.json").write_text("{'columns': }", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json is not valid JSON"):
        load_schema(tmp_path / "bad.json")
    with pytest.raises(DataError, match=r"cannot read the schema file missing\.json"):
        load_schema(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ([], "a schema must be a mapping"),
        ({"colums": {}}, "unknown schema key(s) ['colums']"),
        ({"columns": {"a": {"range": [1, 1]}}}, "range must have low < high"),
        ({"columns": {"a": {"range": [0, "x"]}}}, "range must be two finite numbers"),
        ({"columns": {"a": {"levels": "abc"}}}, "levels must be a non-empty list of texts"),
        ({"columns": {"a": {"levels": ["x", "x"]}}}, "levels must be distinct"),
        ({"columns": {"a": {"range": [0, 1], "levels": ["x"]}}}, "not both"),
        ({"columns": {"a": {"read": False, "log1p": True}}}, "a column that is not read takes no other metadata"),
        ({"columns": {"a": {"kind": "date"}}}, "kind must be 'numeric', 'text' or 'identifier'"),
        ({"columns": {"a": {"limits": [0, 1]}}}, "unknown key(s) ['limits']"),
        ({"columns": {"a": {"kind": "text", "range": [0, 1]}}}, "a text column takes levels"),
        ({"columns": {"a": 3}}, "its metadata must be a mapping"),
    ],
)
def test_a_malformed_schema_is_a_data_error(record, message):
    with pytest.raises(DataError) as caught:
        Schema.from_dict(record)
    assert message in str(caught.value)


def test_declared_kinds_override_the_files_types():
    frame = TABLE.drop(columns="churn").assign(code=np.where(np.arange(len(TABLE)) % 2, 1.0, 2.0))
    schema = {"columns": {"code": {"kind": "text", "levels": ["1", "2"]}, "visits": {"kind": "text"}}}
    data = from_frame(frame, **RIDGE, schema=schema, noise_seed=0, budget=None)
    assert {"code=1", "code=2"} <= set(data.feature_names)
    assert any(name.startswith("visits=") for name in data.feature_names)


def test_allocate_splits_epsilon_by_weight_and_delta_equally():
    steps = [PrivateRange(None, 3.0), PrivateCentre(None), PrivateLevels(None, 20), PrivateLevels(None, 20)]
    shares = allocate(steps, 1.3, 1e-6)
    assert [e for e, _ in shares] == pytest.approx([1.3 * 1 / 9.5, 1.3 * 0.5 / 9.5, 1.3 * 4 / 9.5, 1.3 * 4 / 9.5])
    assert [d for _, d in shares] == [0.0, 0.0, 5e-7, 5e-7]


def test_held_out_r2_stays_within_005_of_the_evaluation_only_one_at_the_default_budget():
    """A realistic mixed table (5,000 rows, text levels, 5% gaps, a heavy-tailed income), θ* at λ = 0.005.

    The private default must keep the held-out R² of θ* at least that of the evaluation-only preparation
    minus 0.05. Measured over noise seeds 0–19: private 0.40–0.46 (mean 0.44, standard deviation
    0.012), the evaluation-only one 0.26 (its division by the largest row lets the heavy tail squash every other
    column), so the smallest margin is 0.19 and no seed fails: under a normal model of the
    private R² the false-failure rate is below 10⁻⁶⁰; the test fails if the preparation loses
    the text columns or a range squashes its column.
    """
    table = mixed_table(5_000, seed=0).drop(columns="churn")
    private = from_frame(table, **RIDGE, noise_seed=0)
    evaluation = from_frame(table, **RIDGE, preparation="evaluation")
    quality = {
        name: data.test_quality(RidgeProblem(data.X_train, data.y_train, LAMBDA).theta_star)["r2"]
        for name, data in (("private", private), ("evaluation", evaluation))
    }
    assert quality["private"] >= quality["evaluation"] - 0.05, quality
    assert private.prep_epsilon > 0 and private.preparation.mode == "private"


def test_one_word_in_a_numeric_column_changes_no_decision_and_no_cost():
    """A neighbour with one cell 'unknown' in a column of numbers: with the noise fixed, the same columns, kinds and
    ε_prep (the file's type used to flip the column to text and change the bill). Surely so: d moves by 2 out of
    some 240, far from the noise's reach at this budget (false-failure rate < 10⁻¹⁰⁰)."""
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 300).astype(float), "x": rng.normal(size=300)})
    frame["y"] = frame["age"] / 10 + frame["x"] + rng.normal(size=300)
    other = frame.astype(object)
    other.loc[0, "age"] = "unknown"
    other = other.infer_objects()
    assert other["age"].dtype == object  # the file's type flipped
    prepared = [from_frame(table, target="y", task="ridge", noise_seed=4) for table in (frame, other)]
    here, there = (data.preparation.to_frame() for data in prepared)
    kinds = here[here["step"] == "private kind"]
    assert list(kinds["column"]) == ["age", "x"] and (kinds["epsilon"] > 0).all()
    assert list(here["note"]) == list(there["note"]) and prepared[0].feature_names == ("age", "x")
    assert prepared[0].feature_names == prepared[1].feature_names
    assert prepared[0].prep_epsilon == prepared[1].prep_epsilon
    assert prepared[0].prep_delta == prepared[1].prep_delta


def test_a_ridge_target_word_is_a_missing_target_and_no_message_quotes_a_cell():
    frame = TABLE.drop(columns="churn").astype({"spend": object})
    frame.loc[frame.index[:3], "spend"] = "secret-value"
    data = from_frame(frame, **RIDGE, noise_seed=0)
    assert data.n > 0
    assert not any("secret-value" in note for note in data.report.steps)
