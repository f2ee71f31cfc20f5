"""scikit-learn estimators: accuracy-first ridge and logistic regression, and a public-bound scaler.

docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
docs/mathematics.md#private-hypothesis-generators (the problems), docs/mathematics.md#noise-reduction,
docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#the-doubling-method,
docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#what-a-run-reports (the search and what a run reports),
docs/data-preparation.md#scaling-into-the-unit-ball (scaling), docs/mathematics.md#a-public-norm-bound (public radius),
docs/mathematics.md#brownian-noise-reduction (Gaussian noise), docs/mathematics.md#the-gibbs-posterior (Gibbs
posterior). ``fit`` builds the ERM problem of the training rows and runs one accuracy-first search (``search`` with
``SearchOptions``): the released coefficients meet the excess risk α with probability ≥ 1 − γ, and the estimator reports
the ex-post ε it paid (``epsilon_``, split into ``epsilon_radius_`` (a private radius,
docs/mathematics.md#a-private-radius), ``epsilon_test_`` and ``epsilon_hypothesis_``, with the ``delta_`` of an (ε, δ)
guarantee) and keeps the whole ``RunResult`` (``run_``). With ``random_state=s`` a fit is the run that ``python -m
accfirst run --seed s`` makes on the same (scaled) rows. When no model passes the test, nothing is released: ``fit``
raises ``NoModelReleased`` (an ``AccFirstError``, so a ``ValueError``) with the run's record and the ε it was charged,
and leaves the estimator unfitted, as scikit-learn leaves an estimator whose ``fit`` failed
(docs/mathematics.md#what-a-failed-run-releases); the exact, non-private minimiser is never released.

The models have no intercept (the paper's). The problems need rows with ‖x‖₁ ≤ 1 and ridge
targets with |y| ≤ 1 (docs/mathematics.md#setting-and-notation). Without stated bounds ``fit`` refuses other rows rather
than clip them silently. With public bounds — stated without looking at the data — rows are divided by them and clipped
into the unit ball (the privacy-safe scaling of docs/data-preparation.md#scaling-into-the-unit-ball), in one of two
places: ``PublicBoundScaler(feature_bound)`` before the estimator in a ``Pipeline``, or the estimator's own
``feature_bound``; a ridge target by the estimator's ``target_bound`` (predictions come back in y's units; a
``Pipeline`` step cannot transform y). The excess risk α is that of the scaled problem. Only data-independent steps may
precede the estimator in a pipeline: a ``StandardScaler`` reads the data and is not private.

``prepare="private"`` (or a mapping of ``from_frame``'s options: ``schema``, ``prep_epsilon``,
``positive_class``, …) takes a DataFrame with numbers, text and gaps instead and prepares it
privately in ``fit`` (docs/mathematics.md#preparing-the-data-privately; docs/mathematics.md, "Preparing the data
privately"): every statistic is declared or released by a charged mechanism, ``epsilon_`` includes the preparation's
``epsilon_prep_`` (and ``delta_`` its δ), and ``predict`` prepares new rows with the released column plans alone.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
from sklearn.utils import Tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from accfirst.datasets.prepare.fitted import FittedPreparation, prepare_fit
from accfirst.datasets.preprocess import scale_rows, scale_target
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError, DataError
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import DEFAULT_CALIBRATION
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import method_keys
from accfirst.result import RunResult
from accfirst.search.experiments import search, trial_rng
from accfirst.validation import REPEATABLE, validate_count, validate_positive, validate_probability

# The theory approach is left out: it promises only an expected excess risk (docs/mathematics.md#the-theory-approach),
# not R ≤ α with probability 1 − γ, which is what these estimators' parameters state.
SCALING_ADVICE = (
    "state public bounds, found without looking at the data: the estimator's feature_bound (on ‖x‖₁) and "
    "target_bound (on |y|), or PublicBoundScaler(feature_bound) before the estimator in a Pipeline"
)

# The estimators' parameters that are ``SearchOptions`` of the same name, passed on as they are.
_SEARCH_PARAMETERS = ("T", "generator", "calibration", "noise", "delta", "radius_mode")


class NoModelReleased(AccFirstError):
    """A fit whose accuracy test never passed: no model was released (docs/mathematics.md#what-a-failed-run-releases).

    The search read the data and is charged its declared top ε all the same; ``run`` is its record (a ``RunResult``
    with ``nothing_released`` true and that ε). The estimator is left unfitted, as before ``fit``.
    """

    def __init__(self, message: str, run: RunResult) -> None:
        super().__init__(message)
        self.run = run


class RepeatableRunWarning(UserWarning):
    """A fit whose noise came from a seed the caller gave: repeatable, and so not a private release."""


class PublicBoundScaler(TransformerMixin, BaseEstimator):
    """Divide rows by a public bound on their ℓ1 norm, then clip them into ‖x‖₁ ≤ 1
    (docs/data-preparation.md#scaling-into-the-unit-ball, privacy-safe).

    The bound is stated without looking at the data (domain knowledge, the units' ranges),
    so this step reads nothing private; a row beyond it is scaled back onto the unit ℓ1
    sphere. The step for a ``Pipeline`` before ``AccuracyFirstRidge`` or
    ``AccuracyFirstLogistic`` (which can also do it themselves: their ``feature_bound``).

    Parameters
    ----------
    feature_bound : a public upper bound B > 0 on a row's ‖x‖₁.
    """

    def __init__(self, feature_bound: float = 1.0) -> None:
        self.feature_bound = feature_bound

    def fit(self, X: ArrayLike, y: object = None) -> PublicBoundScaler:
        """Check the bound and record the number of columns; reads no values."""
        validate_positive("feature_bound (a public bound on ‖x‖₁)", self.feature_bound)
        validate_data(self, X, dtype=np.float64)
        return self

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """X / B with every row clipped to ‖x‖₁ ≤ 1."""
        check_is_fitted(self)
        return scale_rows(validate_data(self, X, dtype=np.float64, reset=False, copy=True), self.feature_bound)

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """X · B (clipped rows stay clipped)."""
        check_is_fitted(self)
        rows: NDArray[np.float64] = validate_data(self, X, dtype=np.float64, reset=False)
        return rows * float(self.feature_bound)


class _AccuracyFirst(BaseEstimator):
    """What both estimators share: the parameters, one search, and the attributes it sets.

    Parameters
    ----------
    excess_risk : α > 0, the excess risk L(θ) − L(θ*) the released model may have on the
        scaled rows (docs/mathematics.md#the-two-learning-problems). Named so because scikit-learn's ``alpha`` is a
        regularisation strength.
    failure_prob : γ in (0, 1), the probability that the released model misses α.
    lam : λ > 0, the ridge penalty of the ERM problem.
    method : "nr" (noise reduction, the paper's), "doubling" or "gibbs" (the Gibbs
        posterior; (ε, δ) fixed in advance, approximate accuracy for logistic).
    generator : "covariance", "output", or ``None`` for the paper's pairing.
    calibration : the test's calibration (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#exact-calibrations), default the cheapest measured. noise : "laplace" (pure ex-post ε) or
    "gaussian" ((ε, δ)-ex-post; docs/mathematics.md#brownian-noise-reduction, derived). delta : δ of Gaussian noise and
    of the Gibbs posterior (docs/mathematics.md#brownian-noise-reduction, docs/mathematics.md#the-gibbs-posterior).
    radius : a public bound R ≤ M on ‖θ‖, from domain knowledge, never from the data
    (docs/mathematics.md#a-public-norm-bound). radius_mode : the radius the search runs on
    (``SearchOptions.radius_mode``): "private" (a tighter radius
        bought privately below R₀ when it pays, docs/mathematics.md#a-private-radius), "free" (R₀, which reads nothing)
        or "none" (M or ``radius``).
    T : privacy levels on the noise-reduction grid, ≥ 2.
    feature_bound : a public bound on ‖x‖₁: rows are divided by it and clipped
    (docs/data-preparation.md#scaling-into-the-unit-ball),
        in ``fit`` and ``predict``; ``None`` (default): rows must already have ‖x‖₁ ≤ 1.
    prepare : ``None`` (default: X holds numbers, bounded as above), ``"private"``, or a mapping
        of ``from_frame``'s preparation options (``schema``, ``prep_epsilon``, ``prep_delta``,
        ``positive_class``, ``noise_seed``, ``max_levels``, …; not ``test_size``/``seed``: every
        row trains): X is then a DataFrame (numbers, text, gaps) prepared privately in ``fit``
        (docs/mathematics.md#preparing-the-data-privately), and ``predict`` prepares new frames with the released column
        plans alone. Bounds then go among its options (``scaling="clip"``, ``feature_bound``, ``target_bound``).
    random_state : ``None`` (the default: operating-system entropy, a private release), a seed
        (the run of ``accfirst run --seed``) or a ``numpy.random.Generator``. With a seed or a
        generator the fit is a repeatable run, not a private release (anyone with the seed can
        replay its noise): ``fit`` warns (``RepeatableRunWarning``).
    """

    _problem_class: type[RidgeProblem] | type[LogisticProblem]

    def __init__(
        self,
        excess_risk: float = 0.05,
        failure_prob: float = 0.1,
        lam: float = 0.005,
        method: str = NoiseReduction.key,
        generator: str | None = None,
        calibration: str = DEFAULT_CALIBRATION,
        noise: str = "laplace",
        delta: float = DEFAULT_DELTA,
        radius: float | None = None,
        radius_mode: str = SearchOptions.radius_mode,
        T: int = SearchOptions.T,
        feature_bound: float | None = None,
        random_state: int | np.random.Generator | None = None,
        prepare: str | dict[str, object] | None = None,
    ) -> None:
        self.excess_risk = excess_risk
        self.failure_prob = failure_prob
        self.lam = lam
        self.method = method
        self.generator = generator
        self.calibration = calibration
        self.noise = noise
        self.delta = delta
        self.radius = radius
        self.radius_mode = radius_mode
        self.T = T
        self.feature_bound = feature_bound
        self.random_state = random_state
        self.prepare = prepare

    def _features(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The rows the model sees: X, or X scaled by ``feature_bound`` and clipped."""
        return X if self.feature_bound is None else scale_rows(X.copy(), self.feature_bound)

    def _prepared(self, X: ArrayLike, y: ArrayLike, task: str) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """The rows and targets the model sees: X and y as given (``prepare=None``) or prepared privately."""
        self.prepared_: FittedPreparation | None = None
        if self.prepare is None:
            given: tuple[NDArray[np.float64], NDArray[Any]] = validate_data(
                self, X, y, dtype=np.float64, y_numeric=task == "ridge"
            )
            return given
        if self.feature_bound is not None or getattr(self, "target_bound", None) is not None:
            raise AccFirstError(
                "with prepare, state public bounds among its options (scaling='clip', feature_bound, target_bound); "
                "the estimator's own feature_bound and target_bound apply to numeric arrays (prepare=None)"
            )
        self.prepared_, X_prepared, y_prepared = prepare_fit(X, y, task, self.prepare)
        assert isinstance(X, pd.DataFrame)  # prepare_fit takes a DataFrame only
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = np.asarray([str(name) for name in X.columns], dtype=object)
        if self.prepared_.preparation.noise_seed is not None:
            warnings.warn(f"prepare's noise_seed is set: {REPEATABLE}", RepeatableRunWarning, stacklevel=3)
        return X_prepared, y_prepared

    def _rows(self, X: ArrayLike) -> NDArray[np.float64]:
        """The rows ``predict`` scores: prepared by the released plans, or as in ``fit`` (scaled by the bound)."""
        check_is_fitted(self)
        if self.prepared_ is not None:
            return self.prepared_.transform(X)
        return self._features(validate_data(self, X, dtype=np.float64, reset=False))

    def _run_search(self, X: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        """Build the problem, run the search, set the fitted attributes; returns the released θ."""
        alpha = validate_positive("excess_risk (the target α)", self.excess_risk)
        gamma = validate_probability("failure_prob (γ)", self.failure_prob)
        choices = method_keys(high_probability=True)
        if self.method not in choices:
            raise AccFirstError(
                f"method must be one of {choices}; got {self.method!r} (an estimator needs a method that meets the "
                "target with probability 1 − γ; the theory approach promises only an expected excess risk: use "
                "accfirst.theory_run for it)"
            )
        options = SearchOptions(**{name: getattr(self, name) for name in _SEARCH_PARAMETERS})
        try:
            problem: Problem = self._problem_class(self._features(X), y, self.lam, self.radius)
        except DataError as exc:
            raise DataError(f"{exc}; or {SCALING_ADVICE}") from None
        preparation = None if self.prepared_ is None else self.prepared_.preparation
        if preparation is not None:
            problem = problem.with_preparation(preparation.epsilon, preparation.delta)
        run = search(problem, self.method, alpha, gamma, self._rng(alpha), options)
        if run.theta is None:
            self._forget_fit()
            raise NoModelReleased(
                f"no model passed the accuracy test at excess_risk = {alpha:g}: nothing was released, and the search "
                f"was charged its declared ε = {run.eps_total:.3g} all the same; raise excess_risk, or fit on more "
                "rows",
                run,
            )
        self.run_ = run
        self.preparation_ = preparation
        self.epsilon_ = run.eps_total
        self.epsilon_radius_ = run.eps_radius
        self.epsilon_prep_ = run.eps_prep
        self.delta_prep_ = 0.0 if preparation is None else preparation.delta
        self.epsilon_test_ = run.eps_test
        self.epsilon_hypothesis_ = run.eps_hypothesis
        self.delta_ = run.delta
        return run.theta

    def _forget_fit(self) -> None:
        """Remove what this fit set so far (the preparation's plans, the columns seen): the estimator is unfitted."""
        for name in [name for name in vars(self) if name.endswith("_") and not name.startswith("__")]:
            delattr(self, name)

    def _rng(self, alpha: float) -> np.random.Generator:
        if self.random_state is None:
            return np.random.default_rng()
        warnings.warn(f"random_state is set: {REPEATABLE}", RepeatableRunWarning, stacklevel=4)
        if isinstance(self.random_state, np.random.Generator):
            return self.random_state
        seed = validate_count("random_state (a seed, a numpy Generator or None)", self.random_state, 0)
        return trial_rng(seed, self.method, alpha, 0)


class AccuracyFirstRidge(RegressorMixin, _AccuracyFirst):
    """Ridge regression that meets an excess-risk target at the least ex-post privacy loss.

    L(θ) = (1/2n)‖y − Xθ‖² + (λ/2)‖θ‖², no intercept (docs/mathematics.md#the-two-learning-problems), on rows with ‖x‖₁
    ≤ 1 and |y| ≤ 1 (docs/mathematics.md#setting-and-notation). Parameters as for the shared base (``excess_risk``,
    ``failure_prob``, ``lam``, ``method``, ``generator``, ``calibration``, ``noise``, ``delta``, ``radius``,
    ``radius_mode``, ``T``, ``feature_bound``, ``random_state``, ``prepare``), and

    target_bound : a public bound on |y|: the target is divided by it and clipped to
        [−1, 1] in ``fit``, and predictions are multiplied by it; ``None`` (default): |y| ≤ 1 already.
        With ``prepare`` the preparation scales the target, and predictions come back in its units.

    Attributes
    ----------
    coef_ : (p,) the released θ, on the scaled rows: ``predict(X)`` is
        ``target_bound · scaled(X) @ coef_`` (X @ coef_ without bounds).
    epsilon_ : the ex-post ε end to end: ``epsilon_prep_ + epsilon_radius_ + epsilon_test_ +
        epsilon_hypothesis_``.
    epsilon_prep_, delta_prep_ : what the private preparation spent (0 without ``prepare``).
    epsilon_radius_, epsilon_test_, epsilon_hypothesis_ : the private radius's part and the search's two parts.
    delta_ : δ of the guarantee, the preparation's included (0 for pure ex-post ε).
    preparation_ : the ``Preparation`` (every step, its mechanism and cost; ``to_frame()``), or ``None``.
    prepared_ : the ``FittedPreparation`` ``predict`` uses (its ``names`` label ``coef_``), or ``None``.
    run_ : the ``RunResult`` (its ``excess_risk`` reads the data: evaluation only).
    n_features_in_, feature_names_in_ : as in scikit-learn.
    """

    _problem_class = RidgeProblem

    def __init__(
        self,
        excess_risk: float = 0.05,
        failure_prob: float = 0.1,
        lam: float = 0.005,
        method: str = NoiseReduction.key,
        generator: str | None = None,
        calibration: str = DEFAULT_CALIBRATION,
        noise: str = "laplace",
        delta: float = DEFAULT_DELTA,
        radius: float | None = None,
        radius_mode: str = SearchOptions.radius_mode,
        T: int = SearchOptions.T,
        feature_bound: float | None = None,
        target_bound: float | None = None,
        random_state: int | np.random.Generator | None = None,
        prepare: str | dict[str, object] | None = None,
    ) -> None:
        super().__init__(
            excess_risk=excess_risk,
            failure_prob=failure_prob,
            lam=lam,
            method=method,
            generator=generator,
            calibration=calibration,
            noise=noise,
            delta=delta,
            radius=radius,
            radius_mode=radius_mode,
            T=T,
            feature_bound=feature_bound,
            random_state=random_state,
            prepare=prepare,
        )
        self.target_bound = target_bound

    def fit(self, X: ArrayLike, y: ArrayLike) -> AccuracyFirstRidge:
        """Run the accuracy-first search on (X, y); without bounds, refuses rows outside ‖x‖₁ ≤ 1, |y| ≤ 1."""
        X, y = self._prepared(X, y, "ridge")
        if self.target_bound is not None:
            y = scale_target(np.array(y, dtype=np.float64), self.target_bound)
        self.coef_ = self._run_search(X, y)
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predictions in y's units (post-processing of the released θ: any rows)."""
        scores = self._rows(X) @ self.coef_
        if self.prepared_ is not None:
            return self.prepared_.to_target_units(scores)
        return scores if self.target_bound is None else scores * float(self.target_bound)

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        # A private model trades accuracy for privacy by design.
        tags.regressor_tags.poor_score = True
        return tags


class AccuracyFirstLogistic(ClassifierMixin, _AccuracyFirst):
    """Logistic regression (two classes) that meets an excess-risk target at the least ex-post privacy loss.

    L(θ) = (1/n) Σ log(1 + exp(−y_i θᵀx_i)) + (λ/2)‖θ‖², no intercept (docs/mathematics.md#the-two-learning-problems),
    on rows with ‖x‖₁ ≤ 1. Any two labels: ``classes_[1]`` is the +1 class. Parameters as for the shared base
    (``excess_risk``, ``failure_prob``, ``lam``, ``method``, ``generator``, ``calibration``, ``noise``, ``delta``,
    ``radius``, ``radius_mode``, ``T``, ``feature_bound``, ``random_state``, ``prepare``). With ``prepare`` the classes
    are declared, not read from y: the schema lists the target's two levels and the positive class (``classes_`` is (the
    other, the positive)).

    Attributes
    ----------
    coef_ : (1, p) the released θ (scikit-learn's binary layout), on the scaled rows.
    classes_ : the two labels, sorted.
    epsilon_, epsilon_radius_, epsilon_test_, epsilon_hypothesis_, delta_, run_, n_features_in_,
    feature_names_in_ : as for ``AccuracyFirstRidge``.
    """

    _problem_class = LogisticProblem

    def fit(self, X: ArrayLike, y: ArrayLike) -> AccuracyFirstLogistic:
        """Run the accuracy-first search on (X, y); refuses other than two classes, and (without a bound) ‖x‖₁ > 1."""
        X, y = self._prepared(X, y, "logistic")
        if self.prepared_ is not None:
            classes = self.prepared_.classes
            assert classes is not None  # a logistic preparation declares its classes
            self.classes_ = classes
            self.coef_ = self._run_search(X, y)[None, :]
            return self
        check_classification_targets(y)
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise DataError(
                "Only binary classification is supported: AccuracyFirstLogistic needs exactly two classes; y has "
                f"{len(self.classes_)} class{'' if len(self.classes_) == 1 else 'es'}: {self.classes_[:5].tolist()}"
            )
        self.coef_ = self._run_search(X, np.where(index == 1, 1.0, -1.0))[None, :]
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

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.classifier_tags.multi_class = False
        return tags
