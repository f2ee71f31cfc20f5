"""The regularised ERM problem that ridge and logistic regression share: its constants and its validation.

docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
docs/mathematics.md#a-public-norm-bound. A problem touches the data once, when it is built: it validates the rows,
computes what the private algorithms need (sufficient statistics for ridge, θ* and the Gram matrix for logistic) and
keeps it, so that later evaluations of a hypothesis cost O(p²) (ridge) or one pass over the data (logistic, exact risk
only).

The feasible set is C = {‖θ‖₂ ≤ R}: R = M, the bound that λ implies, unless the user
states a public radius R ≤ M (docs/mathematics.md#a-public-norm-bound). Then θ* is the minimiser over C, and the
sensitivities, projections and trust-region radius all use R. The sensitivity classmethods here are the formulas for
rows of Euclidean norm at most 1; a problem's own sensitivities go through its ``shape``, which applies the public row
bound ρ (docs/mathematics.md#rows-of-small-euclidean-norm). The two problems live in ``ridge`` and ``logistic``;
``shape`` holds what is known of a problem before its rows are read.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.datasets.prepare.scaling import clip_rows
from accfirst.datasets.prepared import EVALUATION_MODE, PRIVATE_MODE, PUBLIC_MODE
from accfirst.erm.shape import ProblemShape, validate_radius, validate_row_bound
from accfirst.errors import AccFirstError, DataError
from accfirst.validation import validate_nonnegative, validate_probability

# Rows above the bound by at most this share are float excess, clipped onto the bound; above it they are refused.
ROW_NORM_TOLERANCE = 1e-9


def validate_regularisation(lam: float) -> float:
    """Return λ as a float if it is a finite positive number, else raise ``AccFirstError``."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer)):
        raise AccFirstError(f"lam must be a positive number; got {lam!r}")
    lam = float(lam)
    if not math.isfinite(lam) or lam <= 0:
        raise AccFirstError(f"lam (the regularisation λ) must be a finite number > 0; got {lam}")
    return lam


# How a problem's rows were prepared (``Problem.prep_mode``).
PREP_MODES = ("given", PUBLIC_MODE, PRIVATE_MODE, EVALUATION_MODE)


def validate_features(X: ArrayLike) -> NDArray[np.float64]:
    """docs/mathematics.md#setting-and-notation: a finite n × p float array whose rows have ‖x_i‖₁ ≤ 1.

    A row above 1 by at most ``ROW_NORM_TOLERANCE`` (float excess) is scaled back inside the ball, on a copy:
    every sensitivity assumes ‖x‖₁ ≤ 1, so the rows the mechanisms see satisfy it. Further above, it is refused.
    """
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"X must be a numeric matrix; {exc}") from None
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"X must be a non-empty 2-D matrix (n rows × p features); got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        bad = int(np.count_nonzero(~np.isfinite(X).all(axis=1)))
        raise DataError(f"X has {bad} row(s) with NaN or infinite values; drop or impute them first")
    row_norms = np.abs(X).sum(axis=1)
    worst = int(np.argmax(row_norms))
    if row_norms[worst] > 1 + ROW_NORM_TOLERANCE:
        raise DataError(
            f"every row of X must have ℓ1 norm ≤ 1; row {worst} has "
            f"{row_norms[worst]:.6g}. Scale the features (docs/data-preparation.md) before building the problem"
        )
    over = row_norms > 1
    if over.any():
        X = X.copy()
        rows = X[over]
        clip_rows(rows)
        X[over] = rows
    return X


def validate_statistics(
    A: ArrayLike, b: ArrayLike, c: float, n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Ridge statistics (XᵀX, Xᵀy, yᵀy) that rows with ‖x_i‖₁ ≤ 1 and |y_i| ≤ 1 can have
    (docs/mathematics.md#setting-and-notation).

    Such rows have ‖x_i‖₂² ≤ 1, so trace A ≤ n, c ≤ n, and |(Xᵀy)_j| ≤ Σ_i |x_ij| gives ‖b‖₁ ≤ n.
    """
    try:
        A = np.array(A, dtype=np.float64)
        b = np.array(b, dtype=np.float64)
        c = float(c)
    except (TypeError, ValueError) as exc:
        raise DataError(f"the ridge statistics must be numeric; {exc}") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise DataError(f"A = XᵀX must be a non-empty square matrix; got shape {A.shape}")
    if b.shape != (A.shape[0],):
        raise DataError(f"b = Xᵀy must have one entry per row of A ({A.shape[0]}); got shape {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b)) and math.isfinite(c)):
        raise DataError("the ridge statistics have NaN or infinite entries; drop or impute those rows first")
    limit = n * (1 + ROW_NORM_TOLERANCE)
    for name, value in (("trace(XᵀX)", float(np.trace(A))), ("yᵀy", c), ("‖Xᵀy‖₁", float(np.abs(b).sum()))):
        if value > limit:
            raise DataError(
                f"{name} = {value:.6g} exceeds n = {n}: these statistics cannot come from rows with ‖x‖₁ ≤ 1 and "
                "|y| ≤ 1; divide the rows by public bounds and clip them before summing"
            )
    if np.any(np.diag(A) < 0) or c < 0:
        raise DataError("XᵀX has a negative diagonal entry or yᵀy < 0: these are not sums of squares")
    return A, b, c


def validate_target(y: ArrayLike, n: int) -> NDArray[np.float64]:
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"y must be numeric; {exc}") from None
    if y.ndim != 1 or y.shape[0] != n:
        raise DataError(f"y must be a vector with one entry per row of X ({n}); got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise DataError(f"y has {int(np.count_nonzero(~np.isfinite(y)))} NaN or infinite value(s)")
    return y


class Problem(ABC):
    """A regularised ERM problem L(θ) on a fixed dataset, with the constants of
    docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#private-hypothesis-generators,
    docs/mathematics.md#a-public-norm-bound.

    Subclasses set ``name``, the norm bound M that λ implies, and the unit-row formulas of the excess-risk
    sensitivity Δ_R, the gradient gap and the rest, over a ball ‖θ‖₂ ≤ R; the problem's own sensitivities
    (``query_sensitivity``, ``test_sensitivity``, ``theta_sensitivity``, ``zero_risk_sensitivity``) are its ``shape``'s,
    on C = {‖θ‖₂ ≤ R} (R = ``norm_bound``: the public ``radius`` if given, else M) with the row bound ρ. Their
    constructors solve for θ* and the unconstrained optimum's norm.
    """

    name: str
    #: The (ε, δ) already spent preparing the rows (docs/mathematics.md#preparing-the-data-privately): charged once per
    #: prepared table, carried here so that every run on the rows can report its whole bill. ``prep_mode`` says how
    #: they were prepared: "given" (rows passed in as they are: the caller's business), "public" (generated from public
    #: parameters), "private" (declared metadata and charged mechanisms) or "evaluation" (read without noise: no ε
    #: covers it, and every figure must say that it excludes the preparation).
    prep_epsilon: float = 0.0
    prep_delta: float = 0.0
    prep_mode: str = "given"
    #: ρ, a public bound on a row's Euclidean norm (docs/mathematics.md#rows-of-small-euclidean-norm): 1 (what
    #: ‖x‖₁ ≤ 1 gives) unless the preparation states a smaller one (``with_row_bound``). Every sensitivity uses it.
    row_bound: float = 1.0
    #: The public range of the targets (ridge): [−1, 1] unless the preparation states a narrower one.
    target_range: tuple[float, float] = (-1.0, 1.0)
    #: ρ that a Gaussian release made on these rows before the run, on the same Brownian clock as a Gaussian run's
    #: privacy loss (a private radius, docs/mathematics.md#a-private-radius): such a run's loss continues from it. 0
    #: otherwise.
    spent_rho: float = 0.0
    #: How M depends on λ, and Δ_R on the radius ``{R}`` and n, for messages ("1/√λ", "({R}+1)²/n"); and the
    #: test's Δ_R(α) where clipping at α gives less, by each of the ``clipped_test_bounds``.
    bound_formula: str
    sensitivity_formula: str
    clipped_formula: str = "√(2α/λ)·S({R})/n"
    #: The largest second derivative of one row's loss in its margin xᵀθ (squared loss 1, logistic ¼).
    loss_curvature: float
    _theta_star: NDArray[np.float64]
    _unconstrained_norm: float

    def __init__(self, n: int, p: int, lam: float, radius: float | None) -> None:
        self.n = n
        self.p = p
        self.lam = lam
        self.radius = validate_radius(radius, self.max_norm)

    @staticmethod
    @abstractmethod
    def implied_norm_bound(lam: float) -> float:
        """M at λ, before any data: the largest public radius this problem accepts (Lemma A.4, Claim A.11)."""

    @staticmethod
    @abstractmethod
    def free_radius(lam: float) -> float:
        """R₀ at λ: a bound on ‖θ*‖ that holds for every dataset and reads none (docs/mathematics.md#the-free-radius),
        R₀ < M."""

    @staticmethod
    @abstractmethod
    def gradient_gap(radius: float) -> float:
        """S(R): the most two rows' loss gradients can differ at one θ of the ball ‖θ‖ ≤ ``radius``,
        sup ‖∇ℓ(θ; z) − ∇ℓ(θ; z′)‖₂ over rows and θ (docs/mathematics.md#the-gradient-gap). [derived]"""

    @classmethod
    def risk_change_within(cls, radius: float, reach: float) -> float:
        """An upper bound on |h(θ) − h(θ′)|, h = ℓ(·; z) − ℓ(·; z′), over rows and θ, θ′ in the ball ‖θ‖ ≤ ``radius``
        at most ``reach`` apart, that does not decrease in ``reach`` and grows by at most S(R) per unit of it
        (docs/mathematics.md#the-clipped-test): S(R)·min(reach, 2R) here, since θ and θ′ lie within 2R."""
        return cls.gradient_gap(radius) * min(reach, 2.0 * radius)

    @classmethod
    def risk_change_formula(cls, radius: float, reach: float) -> str:
        """How ``risk_change_within`` reads for a message at reach √(2α/λ), the radius named ``{R}``."""
        return "S({R})·min(√(2α/λ), 2{R})"

    @staticmethod
    @abstractmethod
    def risk_sensitivity(radius: float, n: float) -> float:
        """Δ_R of the excess-risk query over the ball ‖θ‖ ≤ ``radius`` on ``n`` rows
        (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound)."""

    @staticmethod
    @abstractmethod
    def zero_risk_width(radius: float, lam: float) -> float:
        """W: the width of the per-row range of ℓ(0; z) − ℓ(θ; z) over rows and θ that matter
        (docs/mathematics.md#a-relative-accuracy-target).

        The θ that matter lie in the ball of ``radius`` and in the free ball of docs/mathematics.md#the-free-radius,
        which holds the maximiser of L(0) − L(θ) over C for every dataset. Reads no data.
        """

    @classmethod
    def clipped_test_bounds(cls, radius: float, n: float, lam: float, alpha: float) -> tuple[float, float]:
        """The two bounds on the sensitivity of the clipped query −min(R(θ), α) over the ball ‖θ‖ ≤ ``radius``
        (docs/mathematics.md#the-clipped-test). [derived]

        With d = √(2α/λ), S = S(R) (``gradient_gap``) and B = ``risk_change_within``: (S·d/n, B(d)/n + S²/(2n²λ)).
        Both hold for every pair of neighbours; the first is the smaller where B gains nothing on S·d.
        """
        reach = math.sqrt(2.0 * alpha / lam)
        gap = cls.gradient_gap(radius)
        return gap * reach / n, cls.risk_change_within(radius, reach) / n + gap**2 / (2.0 * n * n * lam)

    @classmethod
    def test_sensitivity_on(cls, radius: float, n: float, lam: float, alpha: float, *, clipped: bool) -> float:
        """Δ_R(α): the sensitivity of the test's query over the ball ‖θ‖ ≤ ``radius``
        (docs/mathematics.md#a-public-norm-bound, docs/mathematics.md#the-clipped-test). [derived]

        ``clipped`` says which query the test asks, and has no default: a test priced with the clipped Δ_R(α) must
        clip its query at α. Not clipped (the paper's calibrations): Δ_R itself (``risk_sensitivity``). Clipped at α:
        the smallest of Δ_R and the two ``clipped_test_bounds``. Why they hold: where R_D(θ) ≤ α, λ-strong convexity
        puts θ within d = √(2α/λ) of θ*_D, and one replaced row changes R(θ) by at most [h(θ) − h(θ*_D)]/n, h the
        difference of the two rows' losses, whose gradient is at most S(R) (``gradient_gap``); where both risks
        exceed α the clipped query does not move. Clipping at α leaves the test's worst case, R just above α, as it
        was, so every calibration keeps its failure probability. Reads no data.
        """
        whole = cls.risk_sensitivity(radius, n)
        if not clipped:
            return whole
        return min(whole, *cls.clipped_test_bounds(radius, n, lam, alpha))

    @classmethod
    def test_sensitivity_formula(
        cls, bound: str, radius: float, n: float, lam: float, alpha: float, *, clipped: bool
    ) -> str:
        """How ``test_sensitivity_on`` reads for a message, the radius named ``bound``: the formula that gives it."""
        lipschitz, chord = cls.clipped_test_bounds(radius, n, lam, alpha)
        if not clipped or cls.risk_sensitivity(radius, n) <= min(lipschitz, chord):
            return cls.sensitivity_formula.format(R=bound)
        if lipschitz <= chord:
            formula = cls.clipped_formula
        else:
            formula = cls.risk_change_formula(radius, math.sqrt(2.0 * alpha / lam)) + "/n + S({R})²/(2n²λ)"
        return formula.format(R=bound) + " (the test clipped at α; derived)"

    @classmethod
    def minimiser_sensitivity(cls, radius: float, n: float, lam: float) -> float:
        """S(R)/(nλ): how far one replaced row moves the minimiser over the ball ‖θ‖ ≤ ``radius``, in ℓ2 norm
        (docs/mathematics.md#the-gradient-gap). [derived]

        λ-strong convexity and the optimality of both minimisers give λ‖θ*_D − θ*_D′‖² ≤ h′ᵀ(θ*_D′ − θ*_D)/n, h′ the
        gap between the replaced rows' gradients at θ*_D′, at most S(R) (``gradient_gap``).
        """
        return cls.gradient_gap(radius) / (n * lam)

    @classmethod
    def output_sensitivity(cls, radius: float, n: float, p: int, lam: float) -> float:
        """Δ_θ = √p·S(R)/(nλ), the ℓ1-sensitivity of the minimiser over the ball: √p times ``minimiser_sensitivity``
        (docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#a-public-norm-bound,
        docs/mathematics.md#the-gradient-gap)."""
        return math.sqrt(p) * cls.minimiser_sensitivity(radius, n, lam)

    @property
    def max_norm(self) -> float:
        """M, the bound on ‖θ*‖ that λ implies (Lemma A.4, Claim A.11)."""
        return self.implied_norm_bound(self.lam)

    @property
    def norm_bound(self) -> float:
        """R, the radius of the feasible set C = {‖θ‖₂ ≤ R}: the public radius if given, else M
        (docs/mathematics.md#a-public-norm-bound)."""
        return self.max_norm if self.radius is None else self.radius

    @abstractmethod
    def with_radius(self, radius: float | None) -> Problem:
        """The same rows and λ on the feasible set ‖θ‖ ≤ ``radius`` (``None``: M), θ* solved anew where it moves.

        ``radius`` must be public: a stated bound, the free radius R₀ or a privately released one.
        The preparation cost is kept.
        """

    def at_lambda(self, lam: float) -> Problem:
        """The same rows at another λ, on the bound M that λ implies (no public radius), with the preparation's record
        and the row bound: one problem per λ of a grid (docs/mathematics.md#choosing-λ-under-the-guarantee)."""
        problem = self._at_lambda(validate_regularisation(lam))
        problem.prep_epsilon, problem.prep_delta, problem.prep_mode = self.prep_epsilon, self.prep_delta, self.prep_mode
        problem.row_bound, problem.target_range = self.row_bound, self.target_range
        return problem

    @abstractmethod
    def _at_lambda(self, lam: float) -> Problem:
        """The problem of the same rows at ``lam`` (a valid λ), on M."""

    def with_preparation(self, epsilon: float, delta: float, mode: str = "private") -> Problem:
        """The same problem carrying what its rows' preparation spent, (ε, δ), and how it was done
        (docs/mathematics.md#preparing-the-data-privately)."""
        if mode not in PREP_MODES:
            raise AccFirstError(f"mode must be one of {PREP_MODES}; got {mode!r}")
        problem = copy.copy(self)
        problem.prep_epsilon = validate_nonnegative("prep_epsilon", epsilon)
        problem.prep_delta = validate_probability("prep_delta", delta, zero=True)
        problem.prep_mode = mode
        return problem

    def with_spent_rho(self, rho: float) -> Problem:
        """The same problem carrying the ρ a Gaussian release spent on the rows before the run
        (docs/mathematics.md#a-private-radius)."""
        problem = copy.copy(self)
        problem.spent_rho = validate_nonnegative("spent_rho", rho)
        return problem

    def with_row_bound(self, row_bound: float) -> Problem:
        """The same problem with the public bound ρ on every row's Euclidean norm
        (docs/mathematics.md#rows-of-small-euclidean-norm), which every sensitivity then uses.

        ρ must be public and must hold for every row of every neighbouring dataset: a preparation that clips every row
        to ‖x‖₂ ≤ ρ gives one (the private preparation's rows lie a few ulps inside). Rows above it, by however little,
        are refused (``DataError``), where the problem can see them.
        """
        row_bound = validate_row_bound(row_bound)
        largest = self.largest_row_norm if row_bound < 1 else None  # ‖x‖₁ ≤ 1 already gives ρ = 1
        if largest is not None and largest > row_bound:  # no float slack: ρ itself prices every sensitivity
            raise DataError(
                f"a row has Euclidean norm {largest:.6g}, above the stated row bound ρ = {row_bound:.6g}: clip the rows "
                "to ‖x‖₂ ≤ ρ before building the problem, or state a larger ρ"
            )
        problem = copy.copy(self)
        problem.row_bound = row_bound
        return problem

    @property
    @abstractmethod
    def largest_row_norm(self) -> float | None:
        """The largest ‖x_i‖₂ of the rows, or ``None`` if the problem keeps only statistics that do not show it: for
        checking a stated row bound (evaluation only)."""

    @property
    def shape(self) -> ProblemShape:
        """Its public constants (kind, n, p, λ, stated radius, row bound ρ): what a prediction may read
        (docs/mathematics.md#a-private-radius), and where every sensitivity is read
        (docs/mathematics.md#rows-of-small-euclidean-norm)."""
        return ProblemShape(type(self), self.n, self.p, self.lam, self.radius, self.row_bound)

    @cached_property
    def zero_risk(self) -> float:
        """R(0) = L(0) − L(θ*): the excess risk of predicting nothing. Reads the data: evaluation only."""
        return float(self.excess_risk(np.zeros(self.p)))

    @property
    def unconstrained_norm(self) -> float:
        """‖argmin L‖ over all θ: evaluation only (it reads the data), for saying that a radius was too small."""
        return self._unconstrained_norm

    @property
    def radius_binds(self) -> bool:
        """Whether the data's unconstrained optimum lies outside C (evaluation only,
        docs/mathematics.md#a-public-norm-bound)."""
        return self.unconstrained_norm > self.norm_bound

    @property
    def zero_risk_sensitivity(self) -> float:
        """Δ_S = W/n, the sensitivity of R(0) = max_{θ∈C}(L(0) − L(θ)) on the radius in force
        (docs/mathematics.md#a-relative-accuracy-target).

        Each L(0) − L(θ) moves by at most W/n when one row is replaced, and so does their maximum.
        """
        return self.shape.zero_risk_sensitivity

    @property
    def query_sensitivity(self) -> float:
        """Δ_R, the sensitivity of the excess-risk query over θ ∈ C (docs/mathematics.md#the-two-learning-problems)."""
        return self.shape.query_sensitivity

    def test_sensitivity(self, alpha: float, *, clipped: bool) -> float:
        """Δ_R(α), the sensitivity of the test's query over θ ∈ C, clipped at α or not (``test_sensitivity_on``)."""
        return self.shape.test_sensitivity(alpha, clipped=clipped)

    @property
    def theta_sensitivity(self) -> float:
        """Δ_θ, the ℓ1-sensitivity of θ* used by output perturbation
        (docs/mathematics.md#private-hypothesis-generators)."""
        return self.shape.theta_sensitivity

    @property
    def theta_star(self) -> NDArray[np.float64]:
        """θ* = argmin_C L (read-only)."""
        return self._theta_star

    @abstractmethod
    def loss(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        """L(θ); a (k, p) batch gives k losses."""

    @abstractmethod
    def excess_risk(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        """R(θ) = L(θ) − L(θ*) ≥ 0; a (k, p) batch gives k values."""

    @abstractmethod
    def excess_risk_lower_bound(self, theta: NDArray[np.float64]) -> float:
        """A certified lower bound on R(θ) that costs O(p²), never a pass over the data."""

    def _as_thetas(self, theta: ArrayLike) -> tuple[NDArray[np.float64], bool]:
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape[-1:] != (self.p,) or theta.ndim not in (1, 2):
            raise AccFirstError(f"theta must have shape ({self.p},) or (k, {self.p}); got {theta.shape}")
        return np.atleast_2d(theta), theta.ndim == 1

    def project(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Proj_C: rescale θ to norm R when ‖θ‖₂ > R (docs/mathematics.md#private-hypothesis-generators,
        docs/mathematics.md#a-public-norm-bound, post-processing)."""
        largest = float(np.max(np.abs(theta)))
        if largest == 0:
            return theta
        # Scaled by the largest entry first: very noisy θ (entries ~1e160) must not
        # overflow the norm.
        scaled = theta / largest
        scaled_norm = float(np.linalg.norm(scaled))
        if largest * scaled_norm > self.norm_bound:
            return scaled * (self.norm_bound / scaled_norm)
        return theta


def readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    array.flags.writeable = False
    return array
