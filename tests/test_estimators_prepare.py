"""The estimators' private preparation (docs/mathematics.md#preparing-the-data-privately): ``prepare=`` on a mixed
DataFrame, end to end.

Every fit here fixes both its noises (``noise_seed`` of the preparation, ``random_state`` of the
search), so each test is deterministic: no false failures. The fits state the excess risk α = 0.05: the mixed table is too noisy for the default target (R² ≥ 0.8).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from accfirst.errors import AccFirstError, DataError
from accfirst.estimators import AccuracyFirstLogistic, AccuracyFirstRidge, RepeatableRunWarning

SCHEMA = {"columns": {"id": {"read": False}}}
PREPARE = {"schema": SCHEMA, "noise_seed": 3}
# A logistic fit declares its two classes (reading them from y would read the data).
CLASSES = {"columns": {"id": {"read": False}, "label": {"levels": ["no", "yes"]}}, "positive_class": "yes"}


def mixed_table(seed: int = 0, n: int = 5_000) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Numbers with 5% gaps, a heavy-tailed column, text levels (one rare) with gaps, and a text id not to read."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["paris", "lyon", "nice", "rare"], size=n, p=[0.5, 0.3, 0.19, 0.01]).astype(object)
    age = rng.normal(40, 12, n)
    income = np.exp(rng.normal(3, 1, n))
    price = 0.05 * age + np.where(city == "paris", 2.0, 0.0) + 0.02 * income + rng.normal(0, 0.5, n)
    age[rng.random(n) < 0.05] = np.nan
    city[rng.random(n) < 0.05] = None
    X = pd.DataFrame({"age": age, "city": city, "income": income, "id": [f"row-{i}" for i in range(n)]})
    label = pd.Series(np.where(price > np.median(price), "yes", "no"), name="label")
    return X, pd.Series(price, name="price"), label


NEW_ROWS = pd.DataFrame({"age": [30.0, np.nan, 30.0], "city": ["tokyo", "paris", None], "income": [10.0, 20.0, 10.0]})


def fitted(model, X, y):
    with pytest.warns(RepeatableRunWarning):
        return model.fit(X, y)


def test_ridge_prepares_a_mixed_table_and_reports_epsilon_end_to_end() -> None:
    X, price, _ = mixed_table()
    model = fitted(AccuracyFirstRidge(excess_risk=0.05, prepare=PREPARE, random_state=0), X, price)
    assert model.epsilon_prep_ > 0 and model.epsilon_prep_ == model.preparation_.epsilon
    assert model.epsilon_ == pytest.approx(
        model.epsilon_prep_ + model.epsilon_radius_ + model.epsilon_test_ + model.epsilon_hypothesis_
    )
    assert model.run_.eps_prep == model.epsilon_prep_
    assert model.delta_prep_ > 0 and model.delta_ >= model.delta_prep_  # the level selection's δ
    assert "id" not in {step.column for step in model.preparation_.steps}  # declared 'do not read'
    assert model.prepared_.names == ("age", "city=lyon", "city=nice", "city=paris", "income")
    assert len(model.coef_) == len(model.prepared_.names)
    assert model.feature_names_in_.tolist() == ["age", "city", "income", "id"]
    # In the price's own units; a model that meets α = 0.05 on this table scores 0.35–0.71 over seeds 0–5.
    assert model.run_.success and model.score(X, price) > 0.3


def test_predict_uses_the_released_plans_alone_row_by_row() -> None:
    X, price, _ = mixed_table()
    model = fitted(AccuracyFirstRidge(excess_risk=0.05, prepare=PREPARE, random_state=0), X, price)
    predicted = model.predict(NEW_ROWS)  # no 'id' column needed: it was never read
    assert predicted.shape == (3,) and np.isfinite(predicted).all()
    # An unseen level gives the same features as a gap; each row alone is predicted as in a batch.
    assert predicted[0] == pytest.approx(predicted[2])
    alone = [model.predict(NEW_ROWS.iloc[[i]])[0] for i in range(3)]
    np.testing.assert_allclose(alone, predicted)
    # A row whose value is far beyond the released range is clipped to it, not read as a statistic.
    extreme = NEW_ROWS.assign(income=[1e12, 20.0, 10.0])
    np.testing.assert_allclose(model.predict(extreme)[1:], predicted[1:])


def test_logistic_takes_its_classes_from_the_schema() -> None:
    X, _, label = mixed_table()
    prepare = {"schema": CLASSES, "noise_seed": 3, "prep_epsilon": 0.2}
    model = fitted(AccuracyFirstLogistic(excess_risk=0.05, prepare=prepare, random_state=0), X, label)
    assert model.classes_.tolist() == ["no", "yes"]
    assert model.epsilon_prep_ == pytest.approx(0.2) and model.epsilon_ > model.epsilon_prep_
    assert set(model.predict(NEW_ROWS)) <= {"no", "yes"}
    assert model.score(X, label) > 0.7
    np.testing.assert_allclose(model.predict_proba(NEW_ROWS).sum(axis=1), 1.0)


def test_default_stays_numeric_arrays_with_no_preparation() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.2, 0.2, size=(500, 3))
    model = AccuracyFirstRidge(excess_risk=0.2).fit(X, np.clip(X.sum(axis=1), -1, 1))
    assert model.prepare is None and model.prepared_ is None and model.preparation_ is None
    assert model.epsilon_prep_ == 0 and model.delta_prep_ == 0
    assert model.epsilon_ == pytest.approx(model.epsilon_radius_ + model.epsilon_test_ + model.epsilon_hypothesis_)


def test_clone_and_get_params_keep_the_preparation_options() -> None:
    X, price, _ = mixed_table(n=500)
    model = AccuracyFirstRidge(excess_risk=0.05, prepare=PREPARE, random_state=0)
    copy = clone(model)
    assert copy.get_params()["prepare"] == PREPARE and copy.get_params()["prepare"] is not PREPARE
    assert clone(fitted(model, X, price)).get_params() == model.get_params()
    assert not hasattr(clone(model), "prepared_")
    copy.set_params(prepare="private")
    assert copy.get_params()["prepare"] == "private"


@pytest.mark.parametrize(
    ("model", "X", "y", "error", "message"),
    [
        (
            AccuracyFirstRidge(excess_risk=0.05, prepare="private"),
            np.ones((30, 2)),
            np.ones(30),
            DataError,
            "must be a pandas DataFrame",
        ),
        (
            AccuracyFirstRidge(excess_risk=0.05, prepare="evaluation"),
            None,
            None,
            DataError,
            "evaluation-only one reads the data",
        ),
        (
            AccuracyFirstRidge(excess_risk=0.05, prepare={"test_size": 0.2}),
            None,
            None,
            DataError,
            "trains on every row",
        ),
        (
            AccuracyFirstRidge(excess_risk=0.05, prepare="private", feature_bound=5.0),
            None,
            None,
            AccFirstError,
            "among its options",
        ),
        (
            AccuracyFirstRidge(excess_risk=0.05, prepare={"schema": {"columns": {"price": {"read": False}}}}),
            None,
            None,
            DataError,
            "a target is always read",
        ),
        (AccuracyFirstRidge(excess_risk=0.05, prepare="private"), None, np.ones(7), DataError, "one value per row"),
        (
            AccuracyFirstLogistic(excess_risk=0.05, prepare={"positive_class": "yes"}),
            None,
            "label",
            DataError,
            "two classes declared",
        ),
    ],
)
def test_bad_input_gives_a_typed_error(model, X, y, error, message) -> None:
    table, price, label = mixed_table(n=200)
    X = table if X is None else X
    y = label if isinstance(y, str) else price if y is None else y
    with pytest.raises(error, match=message):
        model.fit(X, y)


def test_predict_needs_the_columns_it_was_fitted_on() -> None:
    X, price, _ = mixed_table(n=500)
    model = fitted(AccuracyFirstRidge(excess_risk=0.05, prepare=PREPARE, random_state=0), X, price)
    with pytest.raises(DataError, match="lacks the column"):
        model.predict(NEW_ROWS.drop(columns="city"))
    with pytest.raises(DataError, match="pandas DataFrame"):
        model.predict(NEW_ROWS.to_numpy())


def test_a_fresh_release_without_seeds_warns_of_nothing() -> None:
    X, price, _ = mixed_table(n=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RepeatableRunWarning)
        model = AccuracyFirstRidge(excess_risk=0.2, prepare={"schema": SCHEMA}).fit(X, price)
    assert model.preparation_.noise_seed is None and math.isfinite(model.epsilon_prep_)


def test_an_identifier_named_column_is_not_a_feature_of_the_estimator() -> None:
    """The shared preparation's rule (tests/datasets/test_identifiers.py): left out by name, no value read."""
    X, price, _ = mixed_table(n=2_000)
    X = X.drop(columns="id").assign(customer_id=np.arange(len(X)) + 5_000)
    model = fitted(AccuracyFirstRidge(excess_risk=0.05, prepare={"noise_seed": 3}, random_state=0), X, price)
    assert model.prepared_.names == ("age", "city=lyon", "city=nice", "city=paris", "income")
    assert "customer_id" not in {step.column for step in model.preparation_.steps}
    assert any("'customer_id' as identifier(s)" in step.note for step in model.preparation_.steps)
    assert np.isfinite(model.predict(NEW_ROWS)).all()  # new rows need no identifier
    kept = fitted(
        AccuracyFirstRidge(excess_risk=0.05, prepare={"noise_seed": 3, "schema": {"columns": {"customer_id": {}}}}),
        X,
        price,
    )
    assert "customer_id" in kept.prepared_.names


def test_score_leaves_out_held_out_rows_without_a_target() -> None:
    """``fit`` trains on a row without a target as a zero row, so held-out targets may have gaps too: ``score`` failed
    with "Input contains NaN". It compares the rows whose target is there (a ridge word is a gap, as in ``fit``)."""
    X, price, label = mixed_table()
    train, test = slice(0, 4_000), slice(4_000, None)
    ridge = fitted(AccuracyFirstRidge(excess_risk=0.05, prepare=PREPARE, random_state=0), X[train], price[train])
    held_out = price[test].astype(object).copy()
    held_out.iloc[::7], held_out.iloc[3] = np.nan, "n/a"
    there = held_out.notna().to_numpy() & (held_out != "n/a").to_numpy()
    assert ridge.score(X[test], held_out) == pytest.approx(ridge.score(X[test][there], price[test][there]))
    prepare = {"schema": CLASSES, "noise_seed": 3}
    logistic = fitted(AccuracyFirstLogistic(excess_risk=0.05, prepare=prepare, random_state=0), X[train], label[train])
    labels = label[test].astype(object).copy()
    labels.iloc[::5] = None
    kept = labels.notna().to_numpy()
    assert logistic.score(X[test], labels) == pytest.approx(logistic.score(X[test][kept], label[test][kept]))
    with pytest.raises(DataError, match="every target given to score is missing"):
        ridge.score(X[test], pd.Series(np.nan, index=X[test].index))
