"""What the accuracy-first estimators share: their parameters, the request a fit checks before it reads the data, one
search and the attributes it sets, and the errors and warning a fit raises.

The search and what it reports: docs/mathematics.md#what-a-run-reports; a target in the units people read:
docs/mathematics.md#a-target-in-the-units-people-read; a fit that releases nothing:
docs/mathematics.md#what-a-failed-run-releases.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from accfirst.datasets.prepare.fitted import FittedPreparation, prepare_fit
from accfirst.datasets.preprocess import scale_rows
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.quality import DEFAULT_TARGETS, Accuracy, QualityTarget, VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError, DataError
from accfirst.interpret.certified import target_text
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import DEFAULT_CALIBRATION
from accfirst.methods.certified import NOISE_REDUCTION, refusal_before_reading
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import AUTO_LAM, DEFAULT_LAM, DEFAULT_TEST_BUDGET, SearchOptions
from accfirst.methods.pipeline import GRID_RADIUS, check_certified
from accfirst.methods.registry import method_keys
from accfirst.methods.relative import NoSignal, RelativeTarget
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
_SEARCH_PARAMETERS = ("T", "generator", "calibration", "noise", "delta", "radius_mode", "ceiling", "test_budget")


class NoModelReleased(AccFirstError):
    """A fit whose accuracy test never passed: no model was released (docs/mathematics.md#what-a-failed-run-releases).

    The search read the data and is charged its declared top ε all the same; ``run`` is its record (a ``RunResult``
    with ``nothing_released`` true and that ε). The estimator is left unfitted, as before ``fit``.
    """

    def __init__(self, message: str, run: RunResult) -> None:
        super().__init__(message)
        self.run = run


class TargetRefused(AccFirstError):
    """A target in R² or accuracy that no data of this size could meet within the ceiling: refused before anything was
    prepared, read or spent (docs/mathematics.md#refusals-that-spend-nothing). The message is the sentence every entry
    point says; the estimator is left unfitted."""


class _Request(NamedTuple):
    """What a fit asks, checked before the data are read: the target, γ, the λ the problem is built at, the options."""

    target: float | QualityTarget | RelativeTarget
    gamma: float
    lam: float
    options: SearchOptions


class RepeatableRunWarning(UserWarning):
    """A fit whose noise came from a seed the caller gave: repeatable, and so not a private release."""


class _AccuracyFirst(BaseEstimator):
    """What both estimators share: the parameters, one search, and the attributes it sets.

    Parameters
    ----------
    excess_risk : ``None`` (default), or α > 0: the excess risk L(θ) − L(θ*) the released model may have on the
        scaled rows (docs/mathematics.md#the-two-learning-problems), at a fixed λ. Named so because scikit-learn's
        ``alpha`` is a regularisation strength. With no target given (no ``excess_risk``, ``kappa``, ``r2`` or
        ``accuracy``) the fit certifies the task's default target, the command line's and the app's: R² ≥ 0.8 (ridge)
        or accuracy ≥ 0.9 (logistic) (``DEFAULT_TARGETS``), by noise reduction with λ chosen privately.
    failure_prob : γ in (0, 1), the probability that the released model misses its target.
    kappa : ``None`` (default), or the share-of-gain target κ in (0, 1): keep at least 1 − κ of what the best model
        gains over predicting nothing, R(θ) ≤ κ·R(0) with probability ≥ 1 − γ
        (docs/mathematics.md#a-relative-accuracy-target; the app's "share of the gain to keep" is 1 − κ, the command
        line's ``--kappa``). The fit releases a private lower bound on R(0) and runs at α = κ times it (``alpha_``);
        one target only: not with ``excess_risk``, ``r2`` or ``accuracy``.
    test_budget : with ``kappa``: the most ε the private test may be predicted to cost at the released α; data whose
        bound on R(0) makes it cost more show no signal a private model could keep, and the fit releases nothing.
    lam : λ > 0, the ridge penalty of the ERM problem; ``"auto"``: chosen privately, under the accuracy test, from a
        public grid (docs/mathematics.md#choosing-λ-under-the-guarantee), with a target in R² or accuracy (the default
        one included); ``None`` (default): ``"auto"`` with such a target, 0.005 with ``excess_risk`` or ``kappa``.
    method : "nr" (noise reduction, the paper's), "doubling" or "gibbs" (the Gibbs
        posterior; (ε, δ) fixed in advance, approximate accuracy for logistic); a target in R² or accuracy (the default
        one included) is certified by noise reduction alone: give ``excess_risk`` or ``kappa`` for the others.
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
    ceiling : with a target in R² or accuracy, the most the search may spend beyond the preparation, > 0 (default 4);
        a target no data of X's size could meet within it is refused before anything is prepared or spent
        (``TargetRefused``, docs/mathematics.md#refusals-that-spend-nothing).
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
    # The parameter that names a target in the units people read (``r2``, ``accuracy``), and its class.
    _quality_parameter: str
    _quality_class: type[VarianceExplained] | type[Accuracy]

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
    ) -> None:
        self.excess_risk = excess_risk
        self.failure_prob = failure_prob
        self.kappa = kappa
        self.test_budget = test_budget
        self.lam = lam
        self.method = method
        self.generator = generator
        self.calibration = calibration
        self.noise = noise
        self.delta = delta
        self.radius = radius
        self.radius_mode = radius_mode
        self.T = T
        self.ceiling = ceiling
        self.feature_bound = feature_bound
        self.random_state = random_state
        self.prepare = prepare

    def _features(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The rows the model sees: X, or X scaled by ``feature_bound`` and clipped."""
        return X if self.feature_bound is None else scale_rows(X.copy(), self.feature_bound)

    def _prepared(
        self, X: ArrayLike, y: ArrayLike, task: str, request: _Request
    ) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """The rows and targets the model sees: X and y as given (``prepare=None``) or prepared privately; a target
        refused from the rows' count alone is refused before anything is prepared (``TargetRefused``)."""
        self.prepared_: FittedPreparation | None = None
        if self.prepare is None:
            given: tuple[NDArray[np.float64], NDArray[Any]] = validate_data(
                self, X, y, dtype=np.float64, y_numeric=task == "ridge"
            )
            self._refuse_before_reading(given[0].shape[0], request)
            return given
        if self.feature_bound is not None or getattr(self, "target_bound", None) is not None:
            raise AccFirstError(
                "with prepare, state public bounds among its options (scaling='clip', feature_bound, target_bound); "
                "the estimator's own feature_bound and target_bound apply to numeric arrays (prepare=None)"
            )
        if isinstance(X, pd.DataFrame):  # prepare_fit refuses anything else
            self._refuse_before_reading(len(X), request)
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

    def _request(self) -> _Request:
        """The target (``r2``/``accuracy``, ``excess_risk`` or ``kappa`` when one is given, else the default target of
        the task, ``DEFAULT_TARGETS``), γ, the λ the problem is built at and the search options (with the grid of λ of a
        target in R² or accuracy), checked before any data are read."""
        gamma = validate_probability("failure_prob (γ)", self.failure_prob)
        choices = method_keys(high_probability=True)
        if self.method not in choices:
            raise AccFirstError(
                f"method must be one of {choices}; got {self.method!r} (an estimator needs a method that meets the "
                "target with probability 1 − γ; the theory approach promises only an expected excess risk: use "
                "accfirst.theory_run for it)"
            )
        options = SearchOptions(**{name: getattr(self, name) for name in _SEARCH_PARAMETERS})
        targets = {
            self._quality_parameter: getattr(self, self._quality_parameter),
            "excess_risk": self.excess_risk,
            "kappa": self.kappa,
        }
        named = {name: value for name, value in targets.items() if value is not None}
        if len(named) > 1:
            raise AccFirstError(f"{' and '.join(named)} are {('two', 'three')[len(named) - 2]} targets: give one")
        auto = isinstance(self.lam, str) and self.lam == AUTO_LAM
        if "excess_risk" in named or "kappa" in named:
            if auto:
                raise AccFirstError(
                    f"lam='{AUTO_LAM}' chooses λ under the private test of a target in {self._quality_class.unit}: "
                    f"give {self._quality_parameter} (or no target, for {target_text(self._default_target())}), or a "
                    "number for lam"
                )
            alpha: float | RelativeTarget = (
                validate_positive("excess_risk (the target α)", self.excess_risk)
                if self.kappa is None
                else RelativeTarget(self.kappa)
            )
            lam = DEFAULT_LAM if self.lam is None else validate_positive("lam (λ)", self.lam)
            return _Request(alpha, gamma, lam, options)
        target = self._default_target() if not named else self._quality_class(named[self._quality_parameter])
        if not named and self.method != NOISE_REDUCTION:
            raise AccFirstError(
                f"method={self.method!r} takes an excess risk α or a relative target κ: give excess_risk or kappa "
                f"(without a target the estimator certifies {target_text(target)}, by noise reduction)"
            )
        check_certified(self.method, target)
        if self.radius is not None:
            raise AccFirstError(f"radius applies with excess_risk or kappa: {GRID_RADIUS}")
        if self.lam is None or auto:
            return _Request(target, gamma, DEFAULT_LAM, dataclasses.replace(options, lambdas=None))
        lam = validate_positive(f"lam (λ, or '{AUTO_LAM}')", self.lam)
        return _Request(target, gamma, lam, dataclasses.replace(options, lambdas=(lam,)))

    def _default_target(self) -> QualityTarget:
        """The target of a fit given none: the task's default, the command line's and the app's."""
        return DEFAULT_TARGETS[self._problem_class.name]

    def _refuse_before_reading(self, n: int, request: _Request) -> None:
        """``TargetRefused`` when no data of n rows could meet a target in R² or accuracy within the ceiling: public
        numbers only (docs/mathematics.md#refusals-that-spend-nothing)."""
        if not isinstance(request.target, (VarianceExplained, Accuracy)):
            return
        kind = self._problem_class
        reason = refusal_before_reading(kind, n, request.target, request.gamma, request.options, Problem.target_range)
        if reason is not None:
            self._forget_fit()
            raise TargetRefused(reason)

    def _run_search(self, X: NDArray[np.float64], y: NDArray[np.float64], request: _Request) -> NDArray[np.float64]:
        """Build the problem, run the search, set the fitted attributes; returns the released θ."""
        try:
            problem: Problem = self._problem_class(self._features(X), y, request.lam, self.radius)
        except DataError as exc:
            raise DataError(f"{exc}; or {SCALING_ADVICE}") from None
        preparation = None if self.prepared_ is None else self.prepared_.preparation
        if preparation is not None:
            problem = problem.with_preparation(preparation.epsilon, preparation.delta)
        target = request.target
        run = search(problem, self.method, target, request.gamma, self._rng(target), request.options)
        if run.theta is None or isinstance(run, NoSignal):  # θ = 0 after no signal is no model
            self._forget_fit()
            if run.refused:
                raise TargetRefused(run.stopped)
            raise NoModelReleased(self._nothing_message(target, run), run)
        self.run_ = run
        self.preparation_ = preparation
        # Plain floats: the run's fields may be numpy scalars, which print as np.float64(…).
        self.alpha_ = float(run.alpha)
        self.epsilon_ = float(run.eps_total)
        self.epsilon_radius_ = float(run.eps_radius)
        self.epsilon_scale_ = float(run.eps_scale)
        self.epsilon_prep_ = float(run.eps_prep)
        self.delta_prep_ = 0.0 if preparation is None else float(preparation.delta)
        self.epsilon_test_ = float(run.eps_test)
        self.epsilon_hypothesis_ = float(run.eps_hypothesis)
        self.delta_ = float(run.delta)
        self.lam_ = float(run.lam)
        self.quality_ = float(run.quality)
        return run.theta

    def _nothing_message(self, target: float | QualityTarget | RelativeTarget, run: RunResult) -> str:
        """Why a fit released nothing, what it was charged, and what to change."""
        if isinstance(run, NoSignal):
            return f"{run.message} Nothing was released: raise kappa or test_budget, or fit on more rows"
        if isinstance(target, RelativeTarget):
            return (
                f"no model passed the accuracy test at the released α = {run.alpha:.3g} (kappa = {target.kappa:g}): "
                f"nothing was released, and the search was charged its declared ε = {run.eps_total:.3g} all the "
                "same; raise kappa, or fit on more rows"
            )
        if isinstance(target, (VarianceExplained, Accuracy)):
            return (
                f"{run.stopped} at {self._quality_parameter} = {target.goal:g}: nothing was released, and the search "
                f"was charged ε = {run.eps_total:.3g} all the same; lower {self._quality_parameter}, or fit on more "
                "rows"
            )
        return (
            f"no model passed the accuracy test at excess_risk = {target:g}: nothing was released, and the search "
            f"was charged its declared ε = {run.eps_total:.3g} all the same; raise excess_risk, or fit on more rows"
        )

    def _forget_fit(self) -> None:
        """Remove what this fit set so far (the preparation's plans, the columns seen): the estimator is unfitted."""
        for name in [name for name in vars(self) if name.endswith("_") and not name.startswith("__")]:
            delattr(self, name)

    def _with_target(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None
    ) -> tuple[ArrayLike, ArrayLike, ArrayLike | None]:
        """The rows a score compares: after a private preparation, those whose target is there (``fit`` trained on a
        row without one as a zero row; a score has nothing to compare it with)."""
        check_is_fitted(self)
        if self.prepared_ is None:
            return X, y, sample_weight
        keep = self.prepared_.target_present(y)
        if not keep.any():
            raise DataError("every target given to score is missing: there is nothing to compare the predictions with")
        rows = X.iloc[keep] if isinstance(X, pd.DataFrame) else np.asarray(X)[keep]
        weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return rows, np.asarray(y)[keep], weights

    def _rng(self, target: float | QualityTarget | RelativeTarget) -> np.random.Generator:
        if self.random_state is None:
            return np.random.default_rng()
        warnings.warn(f"random_state is set: {REPEATABLE}", RepeatableRunWarning, stacklevel=4)
        if isinstance(self.random_state, np.random.Generator):
            return self.random_state
        seed = validate_count("random_state (a seed, a numpy Generator or None)", self.random_state, 0)
        return trial_rng(seed, self.method, target, 0)
