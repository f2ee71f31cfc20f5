"""``from_frame`` on real-looking tables: imputation, one-hot encoding, centring, standardising.

The defaults must make a table with text columns and gaps usable: no rows lost to gaps in
features, the text column that drives the target encoded, and the exact model θ* better
than predicting the mean on held-out rows. The legacy options keep the old behaviour.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accfirst.datasets import PreparedData, from_frame
from accfirst.datasets.prepare.base import OTHER_LEVEL
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import DataError
from tests.datasets.dataset_checks import EVALUATION, LEGACY, assert_spec

LAMBDA = 0.005
REGION_EFFECT = {"north": 80.0, "south": -60.0, "east": 20.0, "west": -30.0, "centre": 120.0}


def realistic_table(n: int = 500, seed: int = 0) -> pd.DataFrame:
    """Customers: age and income with gaps, a region that drives spending, a colour that does not.

    Income is in currency units (thousands of times larger than the other columns), the
    target has a large mean, and 13% of the rows have a gap somewhere (10% in a numeric column).
    With λ = 0.005, θ*'s test R² is 0.56 by default, 0.33 without the text columns, 0.19
    without standardising, 0.17 without centring, and −1.49 with the legacy options.
    """
    rng = np.random.default_rng(seed)
    region = rng.choice(list(REGION_EFFECT), n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    age = rng.uniform(18, 80, n).round()
    income = np.round(rng.lognormal(10.3, 0.5, n), -2)
    colour = np.array([f"c{i}" for i in range(30)])[np.minimum(rng.geometric(0.25, n) - 1, 29)]
    spend = 200 + pd.Series(region).map(REGION_EFFECT).to_numpy() + 1.5 * age + 0.002 * income
    frame = pd.DataFrame(
        {"age": age, "income": income, "region": region, "colour": colour, "spend": (spend + rng.normal(0, 25, n))}
    )
    for column, share in (("age", 0.05), ("income", 0.06), ("region", 0.04)):
        frame.loc[rng.random(n) < share, column] = np.nan
    return frame


TABLE = realistic_table()


def _theta_star_quality(prepared: PreparedData) -> dict[str, float]:
    problem_class = RidgeProblem if prepared.task == "ridge" else LogisticProblem
    problem = problem_class(prepared.X_train, prepared.y_train, LAMBDA)
    return prepared.test_quality(problem.theta_star)


def test_a_realistic_table_gives_the_exact_model_a_positive_test_r2_by_default() -> None:
    prepared = from_frame(TABLE, **EVALUATION, target="spend", task="ridge")
    assert_spec(prepared)
    assert prepared.report.rows_dropped_missing == 0 and prepared.n + len(prepared.y_test) == len(TABLE)
    assert {"region=north", "region=centre"} <= set(prepared.feature_names)
    default = _theta_star_quality(prepared)
    assert default["r2"] > 0.5
    # The text column carries the signal: leaving it out (max_levels=0) costs most of the fit.
    without_text = _theta_star_quality(from_frame(TABLE, **EVALUATION, target="spend", task="ridge", max_levels=0))
    assert default["r2"] > without_text["r2"] + 0.2
    # The old preparation lost the text columns and the rows with gaps, and θ* had no intercept to lean on.
    legacy = from_frame(TABLE, target="spend", task="ridge", **LEGACY)
    assert legacy.report.rows_dropped_missing >= 0.1 * len(TABLE)
    assert _theta_star_quality(legacy)["r2"] < 0


def test_logistic_defaults_also_centre_and_beat_the_legacy_preparation() -> None:
    table = TABLE.assign(big=np.where(TABLE["spend"] > TABLE["spend"].median(), "yes", "no")).drop(columns="spend")
    default = from_frame(table, **EVALUATION, target="big", task="logistic")
    assert default.report.centered and default.report.standardized
    legacy = from_frame(table, target="big", task="logistic", **LEGACY)
    assert _theta_star_quality(default)["accuracy"] > _theta_star_quality(legacy)["accuracy"] + 0.15


def test_every_new_step_is_in_the_report() -> None:
    report = from_frame(TABLE, **EVALUATION, target="spend", task="ridge").report
    assert report.missing == "impute" and report.max_levels == 20
    assert report.centered and report.standardized and not report.private_scaling
    assert {name for name, _, _ in report.imputed} == {"age", "income", "region"}
    assert [name for name, _, _ in report.one_hot] == ["region", "colour"]
    assert report.target_mean == pytest.approx(TABLE["spend"].mean(), rel=0.05)
    expected = {
        "one-hot encoded the text column 'region' into 5 columns": 1,
        "filled missing or infinite feature values with statistics of the training rows": 1,
        "subtracted the training means of the features and of the target": 1,
        "by its training standard deviation": 1,
    }
    for text, count in expected.items():
        matching = [step for step in report.steps if text in step]
        assert len(matching) == count, (text, report.steps)
        if "one-hot" not in text:
            assert "not private" in matching[0]


def test_legacy_options_drop_gaps_and_text_and_keep_raw_units() -> None:
    prepared = from_frame(TABLE, target="spend", task="ridge", **LEGACY)
    assert prepared.feature_names == ("age", "income")
    assert dict(prepared.report.dropped_columns)["region"].startswith("not numeric")
    complete = TABLE[["age", "income", "spend"]].dropna()
    assert prepared.n + len(prepared.y_test) == len(complete)
    assert not (prepared.report.centered or prepared.report.standardized or prepared.report.imputed)
    raw = {tuple(row) for row in complete[["age", "income"]].to_numpy()}
    recovered = np.round(prepared.X_train * prepared.report.feature_scale, 6)
    assert {tuple(row) for row in recovered} <= raw


def test_rmse_in_the_target_units_equals_a_direct_computation() -> None:
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"a": rng.uniform(0, 5, n), "b": rng.normal(0, 2, n), "kind": rng.choice(["x", "y"], n)})
    log_y = 1.0 + 0.4 * frame["a"] - 0.3 * frame["b"] + np.where(frame["kind"] == "x", 0.5, 0.0)
    frame["y"] = np.expm1(log_y)  # distinct positive values, exactly linear after log(1 + y)
    # Public bounds wide enough that no row is clipped, so the exact fit is exact on the test rows too.
    bounds = {"scaling": "clip", "feature_bound": 100.0, "target_bound": 100.0}
    prepared = from_frame(frame, **EVALUATION, target="y", task="ridge", log1p_target=True, **bounds)
    report = prepared.report
    assert report.rows_clipped_train == report.rows_clipped_test == 0
    # The original test targets are the raw values of the rows not used for training.
    train_original = np.expm1(prepared.y_train * report.target_scale + report.target_mean)
    test_original = prepared.y_test_original
    raw = frame["y"].to_numpy()
    assert np.isin(np.round(test_original, 9), np.round(raw, 9)).all()
    assert not np.isin(np.round(test_original, 9), np.round(train_original, 9)).any()
    for theta in (np.zeros(prepared.p), np.linalg.lstsq(prepared.X_train, prepared.y_train, rcond=None)[0]):
        predicted = np.expm1(report.target_mean + report.target_scale * (prepared.X_test @ theta))
        direct = float(np.sqrt(np.mean((test_original - predicted) ** 2)))
        assert prepared.test_quality(theta)["rmse"] == pytest.approx(direct, rel=1e-12)
    exact = np.linalg.lstsq(prepared.X_train, prepared.y_train, rcond=None)[0]
    assert prepared.test_quality(exact)["rmse"] == pytest.approx(0.0, abs=1e-9 * raw.max())
    zero = prepared.test_quality(np.zeros(prepared.p))["rmse"]
    assert zero == pytest.approx(np.sqrt(np.mean((test_original - np.expm1(report.target_mean)) ** 2)))


def test_to_target_units_inverts_scaling_centring_and_log1p() -> None:
    prepared = from_frame(
        TABLE.assign(spend=TABLE["spend"].abs()), **EVALUATION, target="spend", task="ridge", log1p_target=True
    )
    report = prepared.report
    back = report.to_target_units(prepared.y_train)
    assert np.all(back > 0)
    np.testing.assert_allclose(np.log1p(back), prepared.y_train * report.target_scale + report.target_mean)
    logistic = from_frame(TABLE.assign(big=TABLE["spend"] > 400), **EVALUATION, target="big", task="logistic")
    with pytest.raises(ValueError, match="only a ridge target has units"):
        logistic.report.to_target_units(np.zeros(3))


def _levels_frame(n: int = 400) -> pd.DataFrame:
    """30 levels with geometric frequencies, a numeric key k (0 … n−1, shuffled) and a target."""
    rng = np.random.default_rng(1)
    level = np.array([f"L{i:02d}" for i in range(30)])[np.minimum(rng.geometric(0.2, n) - 1, 29)]
    return pd.DataFrame({"k": rng.permutation(n).astype(float), "level": level, "y": rng.normal(size=n)})


RAW = {"center": False, "standardize": False, "scaling": "clip", "feature_bound": 1e6, "target_bound": 10.0}


def test_one_hot_cap_keeps_the_most_frequent_training_levels_and_groups_the_rest() -> None:
    frame = _levels_frame()
    prepared = from_frame(frame, **EVALUATION, target="y", task="ridge", max_levels=5, **RAW)
    ((name, kept, grouped),) = prepared.report.one_hot
    train_keys = np.round(prepared.X_train[:, 0] * 1e6).astype(int)
    train_levels = frame.set_index("k").loc[train_keys, "level"]
    counts = train_levels.value_counts()
    top = sorted(counts.index, key=lambda level: (-counts[level], level))[:4]
    assert name == "level" and kept == (*top, OTHER_LEVEL) and grouped == counts.size - 4
    assert prepared.feature_names == ("k", *(f"level={level}" for level in kept))
    block = prepared.X_train[:, 1:] * 1e6  # undo the public bound: a 0/1 block per row
    np.testing.assert_array_equal(block.sum(axis=1), 1.0)
    active = [top.index(level) if level in top else len(top) for level in train_levels]
    np.testing.assert_array_equal(np.argmax(block, axis=1), active)
    note = next(step for step in prepared.report.steps if "one-hot" in step)
    assert f"the {grouped} rarest share the column 'level={OTHER_LEVEL}'" in note


def test_a_test_level_unseen_in_training_goes_to_other_or_to_no_column() -> None:
    frame = pd.DataFrame({"k": np.arange(40.0) + 100, "level": ["a", "b"] * 20, "y": np.arange(40.0) % 7})
    first = from_frame(frame, **EVALUATION, target="y", task="ridge", **RAW)
    test_key = round(first.X_test[0, 0] * 1e6)
    frame.loc[frame["k"] == test_key, "level"] = "new"
    prepared = from_frame(frame, **EVALUATION, target="y", task="ridge", **RAW)
    row = np.flatnonzero(np.round(prepared.X_test[:, 0] * 1e6) == test_key)[0]
    assert prepared.feature_names == ("k", "level=a", "level=b")
    np.testing.assert_array_equal(prepared.X_test[row, 1:], 0.0)
    grouped = from_frame(
        frame.assign(level=[*"abcd"] * 10), **EVALUATION, target="y", task="ridge", max_levels=3, **RAW
    )
    assert grouped.feature_names[-1] == f"level={OTHER_LEVEL}"


def test_imputation_uses_training_statistics_only() -> None:
    """Gaps take the training median / most frequent level, whatever the test rows hold."""
    rng = np.random.default_rng(4)
    n = 200
    frame = pd.DataFrame({"k": np.arange(n) + 1000.0, "x": rng.normal(10, 2, n), "y": rng.normal(size=n)})
    first = from_frame(frame, **EVALUATION, target="y", task="ridge", test_size=0.5, **RAW)
    test_keys = set(np.round(first.X_test[:, 0] * 1e6).astype(int))
    in_test = frame["k"].isin(test_keys).to_numpy()
    train_keys = ~in_test
    frame["x"] = frame["x"].where(train_keys, 1000.0)  # test rows far from the training rows
    frame["colour"] = np.where(in_test, "blue", np.where(rng.random(n) < 0.6, "red", "blue"))
    gaps = rng.random(n) < 0.15
    frame.loc[gaps, ["x", "colour"]] = None
    prepared = from_frame(frame, **EVALUATION, target="y", task="ridge", test_size=0.5, **RAW)
    assert (frame["colour"] == "blue").sum() > (frame["colour"] == "red").sum()  # blue leads overall …
    statistics = {name: (statistic, count) for name, statistic, count in prepared.report.imputed}
    median = float(np.median(frame.loc[train_keys & ~gaps, "x"]))
    assert statistics["x"] == (f"the training median {median:.6g}", int(gaps.sum()))
    assert statistics["colour"][0] == "the most frequent level 'red'"  # … but red leads in training
    filled_train = prepared.X_train[:, 1] * 1e6
    keys = np.round(prepared.X_train[:, 0] * 1e6).astype(int)
    np.testing.assert_allclose(filled_train[np.isin(keys, frame.loc[gaps, "k"])], median)


def test_missing_drop_drops_rows_and_impute_keeps_them() -> None:
    dropped = from_frame(TABLE, **EVALUATION, target="spend", task="ridge", missing="drop")
    assert dropped.report.rows_dropped_missing == len(TABLE) - len(TABLE.dropna())
    assert dropped.report.imputed == () and dropped.report.missing == "drop"
    assert any("dropped" in step and "rows with a missing" in step for step in dropped.report.steps)
    target_gap = TABLE.assign(spend=TABLE["spend"].where(np.arange(len(TABLE)) % 50 != 0))
    kept = from_frame(target_gap, **EVALUATION, target="spend", task="ridge")
    assert kept.report.rows_dropped_missing == 10
    assert any("rows whose target 'spend' is missing" in step for step in kept.report.steps)


def test_identifier_like_text_is_dropped_unless_chosen() -> None:
    frame = TABLE.assign(customer=[f"id-{i}" for i in range(len(TABLE))])
    default = from_frame(frame, **EVALUATION, target="spend", task="ridge")
    assert "looks like an identifier" in dict(default.report.dropped_columns)["customer"]
    chosen = from_frame(frame, **EVALUATION, target="spend", task="ridge", features=["age", "customer"], max_levels=4)
    assert chosen.feature_names[-1] == f"customer={OTHER_LEVEL}" and chosen.p == 5


def test_private_scaling_only_when_nothing_reads_the_data() -> None:
    public = {"scaling": "clip", "feature_bound": 5.0, "target_bound": 500.0}
    numeric = TABLE[["age", "spend"]].dropna()
    assert not from_frame(numeric, **EVALUATION, target="spend", task="ridge", **public).report.private_scaling
    options = {**public, "center": False, "standardize": False}
    assert from_frame(numeric, **EVALUATION, target="spend", task="ridge", **options).report.private_scaling
    assert not from_frame(
        TABLE, **EVALUATION, target="spend", task="ridge", **options
    ).report.private_scaling  # gaps, text


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"missing": "mean"}, "missing must be 'impute' (fill gaps) or 'drop' (drop rows with gaps); got 'mean'"),
        ({"max_levels": 1}, "max_levels (the most one-hot columns per text column) must be 0"),
        ({"max_levels": -2}, "or a whole number ≥ 2; got -2"),
        ({"max_levels": 2.5}, "got 2.5"),
        ({"center": "yes"}, "center must be True or False; got 'yes'"),
        ({"standardize": None}, "standardize must be True or False; got None"),
        ({"log1p_columns": ["region"]}, "column 'region' holds text; log(1 + x) applies to numeric columns only"),
    ],
)
def test_bad_preparation_options_are_data_errors(options: dict, message: str) -> None:
    with pytest.raises(DataError) as caught:
        from_frame(TABLE, **EVALUATION, target="spend", task="ridge", **options)
    assert message in str(caught.value)
