"""The estimators' targets in the units people read: ``r2=``, ``accuracy=``, ``lam="auto"`` and the refusal that spends
nothing (docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee,
docs/mathematics.md#refusals-that-spend-nothing)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.quality import DEFAULT_TARGETS, Accuracy, VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError
from accfirst.estimators import AccuracyFirstLogistic, AccuracyFirstRidge, RepeatableRunWarning, TargetRefused
from accfirst.methods.certified import default_lambdas, refusal_before_reading
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import search, trial_rng

pytestmark = pytest.mark.filterwarnings(f"ignore::{RepeatableRunWarning.__module__}.{RepeatableRunWarning.__name__}")


def rows(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows with ‖x‖₁ ≤ 1 and a target in [−1, 1] that three coefficients explain well (R² ≈ 0.9)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3)) / 3
    return X, np.clip(X @ np.array([2.4, -1.6, 1.0]) + rng.normal(scale=0.1, size=n), -1, 1)


def test_r2_with_lam_auto_is_the_packages_run_and_says_its_lambda_and_quality() -> None:
    X, y = rows(20_000)
    model = AccuracyFirstRidge(r2=0.7, random_state=5).fit(X, y)
    target = VarianceExplained(0.7)
    run = search(RidgeProblem(X, y, 0.005), "nr", target, 0.1, trial_rng(5, "nr", target, 0), SearchOptions())
    assert run.theta is not None
    np.testing.assert_array_equal(model.coef_, run.theta)
    assert model.lam_ == run.lam and model.lam_ in default_lambdas(RidgeProblem, 1.0, shared=True)
    assert model.epsilon_ == run.eps_total and model.run_.target == "r2"
    # quality_ is the exact in-sample R² of the clipped predictions (evaluation only), computed here independently
    clipped = np.clip(X @ model.coef_, -1, 1)
    assert model.quality_ == pytest.approx(1 - np.sum((y - clipped) ** 2) / np.sum((y - y.mean()) ** 2))
    assert model.quality_ >= 0.7


def test_a_number_for_lam_fixes_it() -> None:
    X, y = rows(20_000)
    assert AccuracyFirstRidge(r2=0.5, lam=0.004, random_state=0).fit(X, y).lam_ == 0.004


def test_accuracy_on_the_logistic_estimator() -> None:
    X, _ = rows(20_000, seed=1)
    labels = np.where(X @ np.array([3.0, -2.0, 1.0]) > 0, "spam", "ham")
    model = AccuracyFirstLogistic(accuracy=0.8, random_state=0).fit(X, labels)
    assert model.run_.target == "accuracy" and model.lam_ in default_lambdas(LogisticProblem, 1.0, shared=False)
    assert model.quality_ == pytest.approx(np.mean(model.predict(X) == labels)) and model.quality_ >= 0.8


def test_a_target_no_table_of_this_size_can_meet_is_refused_before_anything_is_prepared(monkeypatch) -> None:
    """The same sentence as the package and the command line; ``prepare_fit`` (a charged preparation) never runs; the
    estimator stays unfitted."""
    monkeypatch.setattr("accfirst.estimators.base.prepare_fit", _must_not_prepare)
    X, y = rows(300)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    sentence = refusal_before_reading(RidgeProblem, 300, VarianceExplained(0.8), 0.1, SearchOptions())
    assert sentence is not None
    for model, features in ((AccuracyFirstRidge(r2=0.8), X), (AccuracyFirstRidge(r2=0.8, prepare="private"), frame)):
        with pytest.raises(TargetRefused) as refused:
            model.fit(features, y)
        assert str(refused.value) == sentence and isinstance(refused.value, AccFirstError)
        with pytest.raises(NotFittedError):
            check_is_fitted(model)
    labels = np.where(X[:, 0] > 0, 1, 0)
    with pytest.raises(TargetRefused) as refused:
        AccuracyFirstLogistic(accuracy=0.99, ceiling=2.0).fit(X, labels)
    options = SearchOptions(ceiling=2.0)
    assert str(refused.value) == refusal_before_reading(LogisticProblem, 300, Accuracy(0.99), 0.1, options)


def test_without_a_target_the_fit_is_the_command_lines_default_run() -> None:
    """No target named: R² ≥ 0.8 (ridge) and accuracy ≥ 0.9 (logistic), λ chosen privately, the default ceiling: the
    run ``accfirst run --seed s`` makes without a target (``DEFAULT_TARGETS``, the same ``trial_rng`` cell). Under the
    excess risk α = 0.05 the fit would have α_ = 0.05 and λ_ = 0.005."""
    X, y = rows(20_000)
    model = AccuracyFirstRidge(random_state=3).fit(X, y)
    target = DEFAULT_TARGETS["ridge"]
    run = search(RidgeProblem(X, y, 0.005), "nr", target, 0.1, trial_rng(3, "nr", target, 0), SearchOptions())
    assert run.theta is not None and model.run_.target == "r2" and model.run_.goal == 0.8
    np.testing.assert_array_equal(model.coef_, run.theta)
    assert model.lam_ == run.lam and model.epsilon_ == run.eps_total and np.isnan(model.alpha_)
    labels = np.where(X @ np.array([3.0, -2.0, 1.0]) > 0, 1, 0)
    logistic = AccuracyFirstLogistic(random_state=3).fit(X, labels)
    assert logistic.run_.target == "accuracy" and logistic.run_.goal == 0.9 and logistic.quality_ >= 0.9
    assert logistic.lam_ in default_lambdas(LogisticProblem, 1.0, shared=False)


def test_the_default_target_is_refused_on_a_small_table_with_the_command_lines_words() -> None:
    X, y = rows(300)
    with pytest.raises(TargetRefused) as refused:
        AccuracyFirstRidge().fit(X, y)
    default = refusal_before_reading(RidgeProblem, 300, DEFAULT_TARGETS["ridge"], 0.1, SearchOptions())
    assert default is not None and str(refused.value) == default


def test_excess_risk_is_the_target_when_given() -> None:
    X, y = rows(20_000)
    model = AccuracyFirstRidge(excess_risk=0.05, random_state=0).fit(X, y)
    assert model.run_.target == "" and model.run_.alpha == 0.05 and model.lam_ == 0.005
    assert np.isnan(model.quality_)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            AccuracyFirstRidge(excess_risk=0.05, lam="auto"),
            r"lam='auto' chooses λ under the private test of a target in R²: give r2 \(or no target, for R² ≥ 0.8\)",
        ),
        (AccuracyFirstLogistic(kappa=0.2, lam="auto"), "target in accuracy: give accuracy"),
        (AccuracyFirstRidge(r2=0.5, excess_risk=0.05), "r2 and excess_risk are two targets: give one"),
        (
            AccuracyFirstRidge(method="doubling"),
            r"method='doubling' takes an excess risk α .*: give excess_risk or kappa \(without a target the estimator "
            r"certifies R² ≥ 0.8",
        ),
        (AccuracyFirstRidge(radius=2.0), "radius applies with excess_risk or kappa"),
        (AccuracyFirstRidge(r2=0.5, method="doubling"), "certified by noise reduction"),
        (AccuracyFirstRidge(r2=0.5, radius=2.0), "radius applies with excess_risk"),
        (AccuracyFirstRidge(r2=1.5), r"r \(the R² target\) must be in \(0, 1\)"),
        (AccuracyFirstRidge(r2=0.5, lam="fast"), "lam"),
        (AccuracyFirstRidge(r2=0.5, ceiling=0), "ceiling must be > 0"),
    ],
)
def test_bad_target_parameters_are_refused_before_the_data_are_read(model, message, monkeypatch) -> None:
    monkeypatch.setattr("accfirst.estimators.base.validate_data", _must_not_prepare)
    with pytest.raises(AccFirstError, match=message):
        model.fit(*rows(50))


def test_the_targets_are_parameters_scikit_learn_can_clone() -> None:
    model = AccuracyFirstRidge(r2=0.6, lam="auto", ceiling=3.0)
    assert clone(model).get_params() == model.get_params()
    assert {"r2", "lam", "ceiling"} <= set(model.get_params()) and "accuracy" in AccuracyFirstLogistic().get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fresh release warns of nothing
        AccuracyFirstRidge(r2=0.5).fit(*rows(20_000))


def _must_not_prepare(*args: object, **kwargs: object) -> None:
    raise AssertionError("a refused target must not read or prepare the data")
