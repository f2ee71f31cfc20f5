"""Accuracy-first logistic regression (two classes), a scikit-learn classifier
(docs/mathematics.md#the-two-learning-problems).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.utils import Tags
from sklearn.utils.multiclass import check_classification_targets

from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.quality import Accuracy
from accfirst.errors import DataError
from accfirst.estimators.base import _AccuracyFirst
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import DEFAULT_CALIBRATION
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import DEFAULT_TEST_BUDGET, SearchOptions


class AccuracyFirstLogistic(ClassifierMixin, _AccuracyFirst):
    """Logistic regression (two classes) that meets an accuracy or excess-risk target at the least ex-post privacy loss.

    L(θ) = (1/n) Σ log(1 + exp(−y_i θᵀx_i)) + (λ/2)‖θ‖², no intercept (docs/mathematics.md#the-two-learning-problems),
    on rows with ‖x‖₁ ≤ 1. Any two labels: ``classes_[1]`` is the +1 class. Parameters as for the shared base
    (``excess_risk``, ``failure_prob``, ``lam``, ``method``, ``generator``, ``calibration``, ``noise``, ``delta``,
    ``radius``, ``radius_mode``, ``T``, ``ceiling``, ``feature_bound``, ``random_state``, ``prepare``), and

    accuracy : a target in the units people read, a in (0, 1): the released model's sign classifies at least a share a
        of the training rows correctly, with probability ≥ 1 − γ (docs/mathematics.md#a-target-in-the-units-people-read);
        noise reduction only, λ chosen privately unless ``lam`` is a number. ``None`` (default): 0.9, the default
        target, unless ``excess_risk`` or ``kappa`` is given.

    With ``prepare`` the classes are declared, not read from y: the schema lists the target's two levels and the
    positive class (``classes_`` is (the other, the positive)).

    Attributes
    ----------
    coef_ : (1, p) the released θ (scikit-learn's binary layout), on the scaled rows.
    classes_ : the two labels, sorted.
    quality_ : with a target in accuracy (the default), the released model's accuracy on the training rows, exact:
        evaluation only; NaN with ``excess_risk`` or ``kappa``.
    alpha_, epsilon_, epsilon_radius_, epsilon_scale_, epsilon_test_, epsilon_hypothesis_, delta_, run_, lam_,
    n_features_in_, feature_names_in_ : as for ``AccuracyFirstRidge``.
    """

    _problem_class = LogisticProblem
    _quality_parameter = "accuracy"
    _quality_class = Accuracy

    def __init__(
        self,
        excess_risk: float | None = None,
        failure_prob: float = 0.1,
        kappa: float | None = None,
        test_budget: float = DEFAULT_TEST_BUDGET,
        lam: float | str | None = None,
        method: str = NoiseReduction.key,
        generator: str | None = None,
        calibration: str = DEFAULT_CALIBRATION,
        noise: str = "laplace",
        delta: float = DEFAULT_DELTA,
        radius: float | None = None,
        radius_mode: str = SearchOptions.radius_mode,
        T: int = SearchOptions.T,
        ceiling: float = SearchOptions.ceiling,
        feature_bound: float | None = None,
        random_state: int | np.random.Generator | None = None,
        prepare: str | dict[str, object] | None = None,
        accuracy: float | None = None,
    ) -> None:
        super().__init__(
            excess_risk=excess_risk,
            failure_prob=failure_prob,
            kappa=kappa,
            test_budget=test_budget,
            lam=lam,
            method=method,
            generator=generator,
            calibration=calibration,
            noise=noise,
            delta=delta,
            radius=radius,
            radius_mode=radius_mode,
            T=T,
            ceiling=ceiling,
            feature_bound=feature_bound,
            random_state=random_state,
            prepare=prepare,
        )
        self.accuracy = accuracy

    def fit(self, X: ArrayLike, y: ArrayLike) -> AccuracyFirstLogistic:
        """Run the accuracy-first search on (X, y); refuses other than two classes, and (without a bound) ‖x‖₁ > 1;
        refuses an accuracy target no data of this size could meet before anything is prepared (``TargetRefused``)."""
        request = self._request()
        X, y = self._prepared(X, y, "logistic", request)
        if self.prepared_ is not None:
            classes = self.prepared_.classes
            assert classes is not None  # a logistic preparation declares its classes
            self.classes_ = classes
            self.coef_ = self._run_search(X, y, request)[None, :]
            return self
        check_classification_targets(y)
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise DataError(
                "Only binary classification is supported: AccuracyFirstLogistic needs exactly two classes; y has "
                f"{len(self.classes_)} class{'' if len(self.classes_) == 1 else 'es'}: {self.classes_[:5].tolist()}"
            )
        self.coef_ = self._run_search(X, np.where(index == 1, 1.0, -1.0), request)[None, :]
        return self

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """θᵀx on the scaled rows: positive for ``classes_[1]``."""
        scores: NDArray[np.float64] = self._rows(X) @ self.coef_[0]
        return scores

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The label of the sign of θᵀx (``classes_[1]`` when positive)."""
        positive = self.decision_function(X) > 0
        labels: NDArray[Any] = self.classes_[positive.astype(int)]
        return labels

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """(P(classes_[0]), P(classes_[1])) = (σ(−θᵀx), σ(θᵀx)) under the logistic model."""
        scores = self.decision_function(X)
        return np.column_stack([expit(-scores), expit(scores)])

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """The share of rows ``predict(X)`` labels right, on the rows whose label is there (a gap has nothing to compare
        with)."""
        return float(super().score(*self._with_target(X, y, sample_weight)))

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.classifier_tags.multi_class = False
        return tags
