"""Accuracy-first ridge regression, a scikit-learn regressor (docs/mathematics.md#the-two-learning-problems)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import RegressorMixin
from sklearn.utils import Tags

from accfirst.datasets.preprocess import scale_target
from accfirst.erm.quality import VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.estimators.base import _AccuracyFirst
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import DEFAULT_CALIBRATION
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import DEFAULT_TEST_BUDGET, SearchOptions


class AccuracyFirstRidge(RegressorMixin, _AccuracyFirst):
    """Ridge regression that meets an R² or excess-risk target at the least ex-post privacy loss.

    L(θ) = (1/2n)‖y − Xθ‖² + (λ/2)‖θ‖², no intercept (docs/mathematics.md#the-two-learning-problems), on rows with ‖x‖₁
    ≤ 1 and |y| ≤ 1 (docs/mathematics.md#setting-and-notation). Parameters as for the shared base (``excess_risk``,
    ``failure_prob``, ``lam``, ``method``, ``generator``, ``calibration``, ``noise``, ``delta``, ``radius``,
    ``radius_mode``, ``T``, ``ceiling``, ``feature_bound``, ``random_state``, ``prepare``), and

    target_bound : a public bound on |y|: the target is divided by it and clipped to
        [−1, 1] in ``fit``, and predictions are multiplied by it; ``None`` (default): |y| ≤ 1 already.
        With ``prepare`` the preparation scales the target, and predictions come back in its units.
    r2 : a target in the units people read, r in (0, 1): the released model's predictions, clipped to [−1, 1], explain
        at least a share r of the (scaled) training targets' variance, with probability ≥ 1 − γ
        (docs/mathematics.md#a-target-in-the-units-people-read); noise reduction only, λ chosen privately unless
        ``lam`` is a number. ``None`` (default): 0.8, the default target, unless ``excess_risk`` or ``kappa`` is given.

    Attributes
    ----------
    coef_ : (p,) the released θ, on the scaled rows: ``predict(X)`` is
        ``target_bound · scaled(X) @ coef_`` (X @ coef_ without bounds).
    alpha_ : the excess risk α the search ran at: ``excess_risk``, or with ``kappa`` the α = κ·Ŝ the fit released (NaN
        with a target in R²).
    epsilon_ : the ex-post ε end to end (a float): ``epsilon_prep_ + epsilon_radius_ + epsilon_scale_ + epsilon_test_ +
        epsilon_hypothesis_``.
    epsilon_scale_ : what bounding R(0) (``kappa``) or the targets' variance (R²) cost; 0 with ``excess_risk``.
    epsilon_prep_, delta_prep_ : what the private preparation spent (0 without ``prepare``).
    epsilon_radius_, epsilon_test_, epsilon_hypothesis_ : the private radius's part and the search's two parts.
    delta_ : δ of the guarantee, the preparation's included (0 for pure ex-post ε).
    preparation_ : the ``Preparation`` (every step, its mechanism and cost; ``to_frame()``), or ``None``.
    prepared_ : the ``FittedPreparation`` ``predict`` uses (its ``names`` label ``coef_``), or ``None``.
    run_ : the ``RunResult`` (its ``excess_risk`` reads the data: evaluation only).
    lam_ : the λ of the released model (chosen privately with a target in R² and ``lam="auto"``, the default).
    quality_ : with a target in R² (the default), the released model's R² on the training rows, exact: evaluation only
        (it reads the data without noise; what is certified is R² ≥ r); NaN with ``excess_risk`` or ``kappa``.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    """

    _problem_class = RidgeProblem
    _quality_parameter = "r2"
    _quality_class = VarianceExplained

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
        target_bound: float | None = None,
        random_state: int | np.random.Generator | None = None,
        prepare: str | dict[str, object] | None = None,
        r2: float | None = None,
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
        self.target_bound = target_bound
        self.r2 = r2

    def fit(self, X: ArrayLike, y: ArrayLike) -> AccuracyFirstRidge:
        """Run the accuracy-first search on (X, y); without bounds, refuses rows outside ‖x‖₁ ≤ 1, |y| ≤ 1; refuses an
        R² target no data of this size could meet before anything is prepared (``TargetRefused``)."""
        request = self._request()
        X, y = self._prepared(X, y, "ridge", request)
        if self.target_bound is not None:
            y = scale_target(np.array(y, dtype=np.float64), self.target_bound)
        self.coef_ = self._run_search(X, y, request)
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predictions in y's units (post-processing of the released θ: any rows)."""
        scores = self._rows(X) @ self.coef_
        if self.prepared_ is not None:
            return self.prepared_.to_target_units(scores)
        return scores if self.target_bound is None else scores * float(self.target_bound)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """R² of ``predict(X)`` against y, on the rows whose target is there (a gap has nothing to compare with)."""
        return float(super().score(*self._with_target(X, y, sample_weight)))

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        # A private model trades accuracy for privacy by design.
        tags.regressor_tags.poor_score = True
        return tags
