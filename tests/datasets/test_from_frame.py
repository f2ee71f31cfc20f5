"""``from_frame`` preprocessing (docs/data-preparation.md#scaling-into-the-unit-ball): scaling, clipping, log(1 + x),
centring, split, report, quality."""

from __future__ import annotations

import builtins
import io

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from accfirst.datasets import PreparedData, PrepReport, UploadLimits, from_frame, read_upload
from accfirst.errors import AccFirstError, DataError
from tests.datasets.dataset_checks import EVALUATION, LEGACY, assert_spec


def _frame(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    counts = np.floor(rng.lognormal(2.0, 1.0, (n, 3)))
    signed = rng.normal(0, 3, n)
    y = counts @ np.array([0.5, -0.2, 0.1]) + signed + rng.normal(0, 0.5, n)
    label = np.where(signed + rng.normal(0, 1, n) > 0, "spam", "ham")
    frame = pd.DataFrame(counts, columns=["c1", "c2", "c3"])
    return frame.assign(s=signed, y=y, label=label)


FRAME = _frame()
FEATURES = ["c1", "c2", "c3", "s"]


def _row_l1(X: np.ndarray) -> np.ndarray:
    return np.abs(X).sum(axis=1)


def _original_training_rows(prepared: PreparedData, frame: pd.DataFrame) -> np.ndarray:
    """The rows of ``frame`` whose scaled version is each training row (matched on all features)."""
    raw = frame[list(prepared.feature_names)].to_numpy()
    recovered = prepared.X_train * prepared.report.feature_scale
    matches = [int(np.argmin(np.abs(raw - row).sum(axis=1))) for row in recovered]
    np.testing.assert_allclose(raw[matches], recovered, rtol=1e-12, atol=1e-9)
    return np.array(matches)


def test_paper_scaling_divides_by_the_largest_training_row_norm() -> None:
    prepared = from_frame(FRAME, target="y", task="ridge", features=FEATURES, **LEGACY)
    assert_spec(prepared)
    rows = _original_training_rows(prepared, FRAME)
    raw = FRAME[FEATURES].to_numpy()
    assert prepared.report.feature_scale == _row_l1(raw[rows]).max()
    assert prepared.report.target_scale == np.abs(FRAME["y"].to_numpy()[rows]).max()
    np.testing.assert_allclose(prepared.y_train * prepared.report.target_scale, FRAME["y"].to_numpy()[rows])
    assert prepared.report.scaling == "paper" and prepared.report.private_scaling is False
    assert any("not private" in step for step in prepared.report.steps)


def test_paper_scaling_clips_test_rows_beyond_the_training_maximum() -> None:
    frame = FRAME.copy()
    frame.loc[:9, "c1"] = 1000.0 + np.arange(10)
    prepared = from_frame(frame, target="y", task="ridge", features=FEATURES, test_size=0.5, **LEGACY)
    raw_norms = _row_l1(frame[FEATURES].to_numpy())
    in_test = np.ones(len(frame), dtype=bool)
    in_test[_original_training_rows(prepared, frame)] = False
    outside = (raw_norms > prepared.report.feature_scale) | (np.abs(frame["y"]) > prepared.report.target_scale)
    expected = int(outside[in_test].sum())
    assert prepared.report.rows_clipped_test == expected > 0
    assert prepared.report.rows_clipped_train == 0
    assert _row_l1(prepared.X_test).max() <= 1.0
    assert any(f"{expected} test row(s) fell outside" in step for step in prepared.report.steps)


def test_clip_scaling_uses_the_stated_bounds_and_clips_rows() -> None:
    bound, target_bound = 20.0, 10.0
    options = {"scaling": "clip", "feature_bound": bound, "target_bound": target_bound}
    prepared = from_frame(FRAME, target="y", task="ridge", features=FEATURES, **options, **LEGACY)
    assert_spec(prepared)
    report = prepared.report
    assert (report.feature_scale, report.target_scale, report.private_scaling) == (bound, target_bound, True)
    scaled = FRAME[FEATURES].to_numpy() / bound
    norms = _row_l1(scaled)
    y = FRAME["y"].to_numpy() / target_bound
    assert report.rows_clipped_train + report.rows_clipped_test == int(((norms > 1) | (np.abs(y) > 1)).sum()) > 0
    # Every prepared row is its source row divided by the bound, rescaled onto ‖x‖₁ = 1 if it fell outside.
    expected = np.where(norms[:, None] > 1, scaled / norms[:, None], scaled)
    X = np.concatenate([prepared.X_train, prepared.X_test])
    matches = [int(np.argmin(np.abs(expected - row).sum(axis=1))) for row in X]
    assert len(set(matches)) == len(FRAME)
    np.testing.assert_allclose(X, expected[matches], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.concatenate([prepared.y_train, prepared.y_test]), np.clip(y, -1, 1)[matches])


def test_clip_scaling_keeps_a_rows_direction() -> None:
    frame = pd.DataFrame({"a": np.r_[np.ones(30), 300.0], "b": np.r_[np.arange(30.0), 100.0], "y": np.arange(31.0)})
    options = {"scaling": "clip", "feature_bound": 50.0, "target_bound": 40.0}
    prepared = from_frame(frame, target="y", task="ridge", **options, **LEGACY)
    X = np.concatenate([prepared.X_train, prepared.X_test])
    np.testing.assert_allclose(X[np.argmax(X[:, 0])], [0.75, 0.25], rtol=1e-12)


def test_clip_scaling_needs_valid_bounds() -> None:
    with pytest.raises(DataError, match="scaling 'clip' with ridge regression needs target_bound"):
        from_frame(FRAME, **EVALUATION, target="y", task="ridge", scaling="clip", feature_bound=10.0)
    with pytest.raises(DataError, match=r"feature_bound must be a finite number > 0; got -1\.0"):
        from_frame(FRAME, **EVALUATION, target="y", task="ridge", scaling="clip", feature_bound=-1.0, target_bound=1.0)
    prepared = from_frame(
        FRAME, **EVALUATION, target="label", task="logistic", scaling="clip", feature_bound=50.0, target_bound=3.0
    )
    assert "target_bound ignored: it applies to ridge regression with 'clip' scaling only" in prepared.report.steps
    assert prepared.report.target_scale is None  # as ignored as the note says: labels have no units to map back to
    with pytest.raises(AccFirstError, match="only a ridge target has units"):
        prepared.report.to_target_units(np.zeros(2))


def test_rows_sit_inside_the_l1_ball_despite_rounding() -> None:
    rng = np.random.default_rng(8)
    frame = pd.DataFrame(rng.uniform(0.1, 0.3, (60, 400)), columns=[f"f{j}" for j in range(400)])
    frame["y"] = rng.normal(size=60)
    for scaling in ("paper", "clip"):
        prepared = from_frame(
            frame, **EVALUATION, target="y", task="ridge", scaling=scaling, feature_bound=1.0, target_bound=1.0
        )
        for X in (prepared.X_train, prepared.X_test):
            assert _row_l1(X).max() <= 1.0
            assert np.abs(X).sum(axis=1, dtype=np.longdouble).max() <= 1.0


def test_log1p_columns_and_target() -> None:
    frame = FRAME.assign(y=np.abs(FRAME["y"]))
    prepared = from_frame(
        frame, target="y", task="ridge", features=FEATURES, log1p_columns=["c1", "c3"], log1p_target=True, **LEGACY
    )
    assert prepared.report.log1p_columns == ("c1", "c3") and prepared.report.log1p_target
    raw = frame[FEATURES].to_numpy().copy()
    raw[:, [0, 2]] = np.log1p(raw[:, [0, 2]])
    scaled = prepared.X_train * prepared.report.feature_scale
    matches = [int(np.argmin(np.abs(raw - row).sum(axis=1))) for row in scaled]
    np.testing.assert_allclose(raw[matches], scaled, atol=1e-9)
    np.testing.assert_allclose(
        prepared.y_train * prepared.report.target_scale, np.log1p(frame["y"].to_numpy()[matches]), atol=1e-9
    )


def test_log1p_is_refused_for_logistic_targets_and_non_features() -> None:
    with pytest.raises(DataError, match=r"log\(1 \+ y\) applies to a ridge target only"):
        from_frame(FRAME, **EVALUATION, target="label", task="logistic", log1p_target=True)
    with pytest.raises(DataError, match=r"log\(1 \+ x\) column\(s\) 'y' are not feature columns"):
        from_frame(FRAME, **EVALUATION, target="label", task="logistic", log1p_columns=["y"], features=FEATURES)
    with pytest.raises(DataError, match="target column 'y' has negative values"):
        from_frame(FRAME, **EVALUATION, target="y", task="ridge", log1p_target=True)


def test_centring_uses_training_means() -> None:
    prepared = from_frame(FRAME, **EVALUATION, target="y", task="ridge", features=FEATURES, center=True)
    np.testing.assert_allclose(prepared.X_train.mean(axis=0), 0.0, atol=1e-12)
    assert prepared.y_train.mean() == pytest.approx(0.0, abs=1e-12)
    assert prepared.report.centered and not prepared.report.private_scaling
    note = "subtracted the training means of the features and of the target"
    assert any(step.startswith(note) for step in prepared.report.steps)


def test_split_is_seeded_and_stratified() -> None:
    a = from_frame(FRAME, **EVALUATION, target="label", task="logistic", seed=4)
    b = from_frame(FRAME, **EVALUATION, target="label", task="logistic", seed=4)
    c = from_frame(FRAME, **EVALUATION, target="label", task="logistic", seed=5)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train, c.X_train)
    share = (FRAME["label"] == "spam").mean()
    assert a.report.n_test == 40 and a.report.n_train == 160
    assert (a.y_test == 1).mean() == pytest.approx(share, abs=1 / 40)
    assert (a.y_train == 1).mean() == pytest.approx(share, abs=1 / 160)


@pytest.mark.parametrize("test_size", [0.0, 1.0, -0.1, "0.2", True])
def test_test_size_must_be_a_share(test_size: object) -> None:
    with pytest.raises(DataError, match="test_size"):
        from_frame(FRAME, **EVALUATION, target="y", task="ridge", test_size=test_size)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task": "lasso"}, "task must be 'ridge' or 'logistic'; got 'lasso'"),
        ({"task": "ridge", "scaling": "minmax"}, "scaling must be 'paper' or 'clip'; got 'minmax'"),
        ({"task": "ridge", "seed": -1}, "seed must be a whole number ≥ 0; got -1"),
        ({"task": "ridge", "features": []}, "choose at least one feature column"),
        ({"task": "ridge", "features": ["c1", "nope"]}, "feature column(s) 'nope' are not in the data"),
        ({"task": "ridge", "features": ["c1", "y"]}, "'y' is the target; remove it from the feature columns"),
        ({"task": "ridge", "features": ["c1", "c1"]}, "feature column(s) 'c1' are chosen more than once"),
    ],
)
def test_bad_options_are_data_errors(options: dict, message: str) -> None:
    with pytest.raises(DataError) as caught:
        from_frame(FRAME, **EVALUATION, target="y", **options)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_legacy_default_features_are_the_numeric_columns_in_order() -> None:
    prepared = from_frame(FRAME, target="y", task="ridge", **LEGACY)
    assert prepared.feature_names == ("c1", "c2", "c3", "s")
    reason = "not numeric (it has values such as 'ham'); encode it as numbers to use it"
    assert prepared.report.dropped_columns == (("label", reason),)


def test_explicit_features_keep_a_sparse_column() -> None:
    frame = FRAME.copy()
    frame.loc[: len(frame) * 3 // 4, "c2"] = np.nan
    default = from_frame(frame, target="y", task="ridge", **LEGACY)
    assert "c2" not in default.feature_names and default.report.rows_dropped_missing == 0
    chosen = from_frame(frame, target="y", task="ridge", features=["c2", "s"], **LEGACY)
    assert chosen.feature_names == ("c2", "s")
    assert chosen.report.rows_dropped_missing == len(frame) * 3 // 4 + 1


def test_shape_limits_apply_to_frames() -> None:
    with pytest.raises(DataError, match="the table has 6 columns; the limit is 5"):
        from_frame(FRAME, **EVALUATION, target="y", task="ridge", limits=UploadLimits(max_columns=5))


def test_report_is_a_frozen_record() -> None:
    report = from_frame(FRAME, **EVALUATION, target="label", task="logistic").report
    assert isinstance(report, PrepReport)
    assert report.positive_class == "spam" and report.target_scale is None
    with pytest.raises(AttributeError):
        report.n_train = 1


def test_ridge_quality_on_the_test_part() -> None:
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (300, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=X @ np.array([1.0, -2.0, 0.5]))
    prepared = from_frame(frame, **EVALUATION, target="y", task="ridge")
    theta = np.linalg.lstsq(prepared.X_train, prepared.y_train, rcond=None)[0]
    quality = prepared.test_quality(theta)
    assert quality["r2"] == pytest.approx(1.0, abs=1e-9) and quality["mse"] == pytest.approx(0.0, abs=1e-12)
    zero = prepared.test_quality(np.zeros(3))
    assert zero["mse"] == pytest.approx(np.mean(prepared.y_test**2))
    assert zero["r2"] < 0


def test_logistic_quality_matches_scikit_learn() -> None:
    prepared = from_frame(FRAME, **EVALUATION, target="label", task="logistic", features=FEATURES)
    theta = np.array([0.0, 0.0, 0.0, 5.0])
    quality = prepared.test_quality(theta)
    score = prepared.X_test @ theta
    assert quality["accuracy"] == np.mean(np.where(score > 0, 1, -1) == prepared.y_test)
    assert quality["auc"] == roc_auc_score(prepared.y_test, score)
    assert quality["accuracy"] > 0.7


def test_quality_with_one_test_class_is_nan_without_error() -> None:
    prepared = from_frame(FRAME, **EVALUATION, target="label", task="logistic")
    one_class = PreparedData(
        prepared.X_train,
        prepared.y_train,
        prepared.X_test,
        np.ones_like(prepared.y_test),
        "logistic",
        prepared.feature_names,
        "label",
        prepared.report,
    )
    quality = one_class.test_quality(np.ones(prepared.p))
    assert np.isnan(quality["auc"]) and 0 <= quality["accuracy"] <= 1


def test_quality_rejects_a_theta_of_the_wrong_length() -> None:
    prepared = from_frame(FRAME, **EVALUATION, target="y", task="ridge", features=FEATURES)
    with pytest.raises(AccFirstError, match=r"theta must be a vector of length 4 .*got shape \(3,\)"):
        prepared.test_quality(np.zeros(3))


def test_uploads_are_never_written_to_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = builtins.open

    def read_only_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        assert not set(mode) & set("wax+"), f"attempted to write {file!r}"
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", read_only_open)
    monkeypatch.setattr(io, "open", read_only_open)
    data = FRAME.to_csv(index=False).encode()
    buffer = io.BytesIO()
    FRAME.to_parquet(buffer)
    for payload, name in [(data, "frame.csv"), (buffer.getvalue(), "frame.parquet")]:
        assert_spec(from_frame(read_upload(payload, name), **EVALUATION, target="label", task="logistic"))


def test_long_column_names_are_cut_short_in_messages_and_steps() -> None:
    """A pasted 5,000-character header is recognisable in a message without filling the screen."""
    long_name = "h" * 5_000
    frame = FRAME.assign(**{long_name: "constant"})
    with pytest.raises(DataError) as error:
        from_frame(frame, **EVALUATION, target=long_name, task="ridge")
    assert len(str(error.value)) < 400 and "…" in str(error.value)
    prepared = from_frame(frame, **EVALUATION, target="y", task="ridge")
    dropped = [step for step in prepared.report.steps if step.startswith("dropped column")]
    assert dropped and all(len(step) < 300 and "…" in step for step in dropped), dropped
