"""The two regularised ERM problems of the paper: ridge and logistic regression.

docs/mathematics.md#setting-and-notation, docs/mathematics.md#private-hypothesis-generators,
docs/mathematics.md#a-public-norm-bound. A problem touches the data once, when it is built: it validates the rows,
computes what the private algorithms need (sufficient statistics for ridge, θ* and the Gram matrix for logistic) and
keeps it, so that later evaluations of a hypothesis cost O(p²) (ridge) or one pass over the data (logistic, exact risk
only).

The feasible set is C = {‖θ‖₂ ≤ R}: R = M, the bound that λ implies, unless the user
states a public radius R ≤ M (docs/mathematics.md#a-public-norm-bound). Then θ* is the minimiser over C, and the
sensitivities, projections and trust-region radius all use R.

Data larger than memory (``accfirst.scale``) reaches the same classes: a ridge problem
from its sufficient statistics (``RidgeProblem.from_statistics``), a logistic problem
from ``RowBlocks``, rows visited block by block, every pass a sum over blocks. In memory
the rows are one block (``InMemoryRows``) and the arithmetic is that of a single array.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any, NamedTuple, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from accfirst.datasets.prepared import EVALUATION_MODE, PRIVATE_MODE, PUBLIC_MODE, PreparedData
from accfirst.erm.trust_region import solve_trust_region
from accfirst.errors import AccFirstError, DataError
from accfirst.validation import validate_count, validate_nonnegative, validate_positive, validate_probability

ROW_NORM_TOLERANCE = 1e-9
LOGISTIC_GRADIENT_TOLERANCE = 1e-10
NEWTON_ITERATIONS = 100
# A Newton step whose predicted decrease is below this share of the loss is taken whole:
# there the loss's own rounding decides a line search, and Newton converges quadratically.
NEWTON_ROUNDING = 1e-12
# max_m |σ''(m)| = 1/(6√3): how fast the logistic loss's curvature σ'(m) = σ(m)(1 − σ(m)) changes.
CURVATURE_LIPSCHITZ = 1 / (6 * math.sqrt(3))


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
# A radius far below M makes every model ~0 and the solvers' arithmetic underflow; refuse it.
MIN_RADIUS_SHARE = 1e-6
# max_{z} z/(1 + e^z) = W(1/e) = 0.278464542761…, attained at z = 1 + W(1/e) (docs/mathematics.md#the-free-radius): at
# the maximum 1 + e^z = z·e^z, so z/(1 + e^z) = e^{−z} = z − 1, and w = z − 1 solves w·e^w = 1/e.
LOGISTIC_FREE_RADIUS_CONSTANT = 0.2784645427610738


def validate_radius(radius: float | None, max_norm: float) -> float | None:
    """A public radius R in (0, M], or ``None`` (docs/mathematics.md#a-public-norm-bound); else ``AccFirstError`` naming
    both."""
    if radius is None:
        return None
    radius = validate_positive("radius (a public bound on ‖θ‖)", radius)
    if radius < MIN_RADIUS_SHARE * max_norm:
        raise AccFirstError(
            f"radius R = {radius:.6g} is below {MIN_RADIUS_SHARE:g}·M = {MIN_RADIUS_SHARE * max_norm:.3g}: a model "
            "that small predicts nothing; give a radius from domain knowledge, or none"
        )
    if radius > max_norm:
        raise AccFirstError(
            f"radius R = {radius:.6g} exceeds M = {max_norm:.6g}, the bound on ‖θ*‖ that λ already implies "
            "(docs/mathematics.md, “A public norm bound”); give a radius ≤ M, or none"
        )
    return radius


def _validate_features(X: ArrayLike) -> NDArray[np.float64]:
    """docs/mathematics.md#setting-and-notation: a finite n × p float array whose rows have ‖x_i‖₁ ≤ 1."""
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
    return X


def _validate_statistics(
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


def _validate_target(y: ArrayLike, n: int) -> NDArray[np.float64]:
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

    Subclasses set ``name``, the norm bound M that λ implies, the excess-risk
    sensitivity Δ_R and the ℓ1-sensitivity Δ_θ of θ*, all over the feasible set
    C = {‖θ‖₂ ≤ R} (R = ``norm_bound``: the public ``radius`` if given, else M);
    their constructors solve for θ* and the unconstrained optimum's norm.
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
    #: ρ that a Gaussian release made on these rows before the run, on the same Brownian clock as a Gaussian run's
    #: privacy loss (a private radius, docs/mathematics.md#a-private-radius): such a run's loss continues from it. 0
    #: otherwise.
    spent_rho: float = 0.0
    #: How M depends on λ, and Δ_R on the radius ``{R}`` and n, for messages ("1/√λ", "({R}+1)²/n"); and the
    #: test's Δ_R(α) where clipping at α gives less (``test_sensitivity_on``).
    bound_formula: str
    sensitivity_formula: str
    clipped_formula: str
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
    def lipschitz_on(radius: float) -> float:
        """G, the per-row Lipschitz constant of the loss on the ball ‖θ‖ ≤ ``radius``
        (docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#a-public-norm-bound)."""

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
    def test_sensitivity_on(cls, radius: float, n: float, lam: float, alpha: float, clipped: bool = True) -> float:
        """Δ_R(α): the sensitivity of the test's query −min(R(θ), α) over the ball ‖θ‖ ≤ ``radius``
        (docs/mathematics.md#a-public-norm-bound). [derived]

        Δ_R itself for a test that does not clip (``clipped`` false: the paper's calibrations). Else the
        smaller of Δ_R (the query's whole range, ``risk_sensitivity``) and 2G(√(2α/λ) + 2G/(nλ))/n. Why the second: where R_D(θ) ≤ α, λ-strong convexity puts θ within d = √(2α/λ) of θ*_D; one
        replaced row changes R(θ) by at most [ℓ(θ; z) − ℓ(θ*; z) − ℓ(θ; z′) + ℓ(θ*; z′)]/n ≤ 2G·d/n
        on one side and 2G·(d + ‖θ*_D − θ*_D′‖)/n on the other, with ‖θ*_D − θ*_D′‖ ≤ 2G/(nλ)
        (G the per-row Lipschitz constant on the ball); where both risks exceed α the clipped query
        does not move. Clipping at α leaves the test's worst case, R just above α, as it was, so
        every calibration keeps its failure probability. Reads no data. docs/mathematics.md,
        "The clipped test".
        """
        whole = cls.risk_sensitivity(radius, n)
        if not clipped:
            return whole
        lipschitz = cls.lipschitz_on(radius)
        return min(whole, 2.0 * lipschitz * (math.sqrt(2.0 * alpha / lam) + 2.0 * lipschitz / (n * lam)) / n)

    @classmethod
    def test_sensitivity_formula(
        cls, bound: str, radius: float, n: float, lam: float, alpha: float, clipped: bool = True
    ) -> str:
        """How ``test_sensitivity_on`` reads for a message, the radius named ``bound``: the formula that gives it."""
        if cls.test_sensitivity_on(radius, n, lam, alpha, clipped) < cls.risk_sensitivity(radius, n):
            return cls.clipped_formula.format(R=bound) + " (the test clipped at α; derived)"
        return cls.sensitivity_formula.format(R=bound)

    @classmethod
    def output_sensitivity(cls, radius: float, n: float, p: int, lam: float) -> float:
        """Δ_θ = 2G√p/(nλ), the ℓ1-sensitivity of the minimiser over the ball (Lemma A.10;
        docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#a-public-norm-bound)."""
        return 2.0 * cls.lipschitz_on(radius) * math.sqrt(p) / (n * lam)

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

    @property
    def shape(self) -> ProblemShape:
        """Its public constants (kind, n, p, λ, stated radius): what a prediction may read
        (docs/mathematics.md#a-private-radius)."""
        return ProblemShape(type(self), self.n, self.p, self.lam, self.radius)

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
        return self.zero_risk_width(self.norm_bound, self.lam) / self.n

    @property
    def query_sensitivity(self) -> float:
        """Δ_R, the sensitivity of the excess-risk query over θ ∈ C (docs/mathematics.md#the-two-learning-problems)."""
        return self.risk_sensitivity(self.norm_bound, self.n)

    def test_sensitivity(self, alpha: float, clipped: bool = True) -> float:
        """Δ_R(α), the sensitivity of the test's query clipped at α over θ ∈ C (``test_sensitivity_on``)."""
        return self.test_sensitivity_on(self.norm_bound, self.n, self.lam, alpha, clipped)

    @property
    def theta_sensitivity(self) -> float:
        """Δ_θ, the ℓ1-sensitivity of θ* used by output perturbation
        (docs/mathematics.md#private-hypothesis-generators)."""
        return self.output_sensitivity(self.norm_bound, self.n, self.p, self.lam)

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


class RidgeProblem(Problem):
    """Ridge regression L(θ) = (1/2n)‖y − Xθ‖² + (λ/2)‖θ‖² (docs/mathematics.md#the-two-learning-problems,
    docs/mathematics.md#a-public-norm-bound).

    Keeps only the sufficient statistics A = XᵀX, b = Xᵀy, c = yᵀy; every loss is
    evaluated from them in O(p²). With a radius R that the unconstrained optimum
    exceeds, θ* is the exact minimiser over C (a trust-region solve).

    Parameters
    ----------
    X : (n, p) array with every row ‖x_i‖₁ ≤ 1.
    y : (n,) array with |y_i| ≤ 1.
    lam : λ > 0.
    radius : a public bound R ≤ M = 1/√λ on ‖θ‖, from domain knowledge, never from
        this data; ``None`` (default) for M.
    """

    name = "ridge"
    bound_formula = "1/√λ"
    sensitivity_formula = "({R}+1)²/n"
    clipped_formula = "2({R}+1)(√(2α/λ) + 2({R}+1)/(nλ))/n"
    loss_curvature = 1.0

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float, radius: float | None = None) -> None:
        lam = validate_regularisation(lam)
        X = _validate_features(X)
        y = _validate_target(y, X.shape[0])
        worst = int(np.argmax(np.abs(y)))
        if abs(y[worst]) > 1 + ROW_NORM_TOLERANCE:
            raise DataError(
                f"ridge targets must satisfy |y| ≤ 1; y[{worst}] = {y[worst]:.6g}. "
                "Scale the target (docs/data-preparation.md) first"
            )
        self._solve(X.T @ X, X.T @ y, float(y @ y), X.shape[0], lam, radius)

    @classmethod
    def from_statistics(
        cls, A: ArrayLike, b: ArrayLike, c: float, n: int, lam: float, radius: float | None = None
    ) -> RidgeProblem:
        """The ridge problem of rows known only through A = XᵀX, b = Xᵀy, c = yᵀy and n
        (docs/mathematics.md#the-two-learning-problems).

        For data summed elsewhere (``accfirst.scale`` sums them over Parquet files block by
        block); the same problem as ``RidgeProblem(X, y, lam, radius)`` on those rows. The rows
        must satisfy docs/mathematics.md#setting-and-notation; statistics that no such rows can have (trace A > n, c >
        n, ‖b‖₁ > n, a negative diagonal) are refused with a ``DataError``.

        Parameters
        ----------
        A : (p, p) XᵀX (symmetrised: only its symmetric part enters the loss).
        b : (p,) Xᵀy.
        c : yᵀy.
        n : the number of rows, ≥ 1.
        lam, radius : as for the constructor.
        """
        lam = validate_regularisation(lam)
        n = validate_count("n (rows)", n, 1)
        A, b, c = _validate_statistics(A, b, c, n)
        problem = cls.__new__(cls)
        problem._solve(A, b, c, n, lam, radius)
        return problem

    def _solve(
        self, A: NDArray[np.float64], b: NDArray[np.float64], c: float, n: int, lam: float, radius: float | None
    ) -> None:
        """Keep the statistics and solve θ*: the constructors' shared path."""
        super().__init__(n, A.shape[0], lam, radius)
        self.A = _readonly((A + A.T) / 2)
        self.b = _readonly(np.asarray(b, dtype=np.float64))
        self.c = float(c)
        # Q = A/n + λI is the Hessian of L: R(θ) = ½δᵀQδ + ∇L(θ*)ᵀδ exactly, δ = θ − θ*.
        self.hessian = _readonly(self.A / self.n + lam * np.eye(self.p))
        self._unconstrained = _readonly(np.asarray(np.linalg.solve(self.hessian, self.b / self.n), dtype=np.float64))
        self._unconstrained_norm = float(np.linalg.norm(self._unconstrained))
        self._solve_on_ball()

    def _solve_on_ball(self) -> None:
        """θ* over C from the unconstrained minimiser: itself when it lies in C, else a trust-region solve."""
        unconstrained = self._unconstrained
        if self._unconstrained_norm <= self.norm_bound:
            self._theta_star = _readonly(unconstrained)
            self._gradient_star = np.zeros(self.p)
        else:
            self._theta_star = _readonly(solve_trust_region(self.hessian, self.b / self.n, self.norm_bound))
            # On the sphere ∇L(θ*) = −μθ*, μ > 0: R keeps its first-order term.
            self._gradient_star = self.hessian @ self._theta_star - self.b / self.n

    @staticmethod
    def implied_norm_bound(lam: float) -> float:
        """M = 1/√λ (Lemma A.4)."""
        return 1.0 / math.sqrt(lam)

    @staticmethod
    def free_radius(lam: float) -> float:
        """R₀ = M/2 = 1/(2√λ): λ‖θ*‖² = (1/n)Σ(y_i u_i − u_i²) ≤ max_u(|u| − u²) = ¼
        (docs/mathematics.md#the-free-radius)."""
        return 0.5 / math.sqrt(lam)

    def with_radius(self, radius: float | None) -> RidgeProblem:
        problem = copy.copy(self)
        Problem.__init__(problem, self.n, self.p, self.lam, radius)
        problem.__dict__.pop("zero_risk", None)
        problem.__dict__.pop("_sphere_risk", None)
        problem._solve_on_ball()
        return problem

    @staticmethod
    def lipschitz_on(radius: float) -> float:
        """G = R + 1: the squared loss is (R + 1)-Lipschitz on C for ‖x‖₂ ≤ 1, |y| ≤ 1
        (docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#a-public-norm-bound)."""
        return radius + 1.0

    @staticmethod
    def risk_sensitivity(radius: float, n: float) -> float:
        """Δ_R = (R + 1)²/n (Claim A.5; docs/mathematics.md#a-public-norm-bound)."""
        return (radius + 1.0) ** 2 / n

    @classmethod
    def zero_risk_width(cls, radius: float, lam: float) -> float:
        """W = (r + 1)²/2, r = min(R, R₀): ℓ(0) − ℓ(θ) = y·t − t²/2 with |t| ≤ r, |y| ≤ 1
        (docs/mathematics.md#a-relative-accuracy-target)."""
        return (min(radius, cls.free_radius(lam)) + 1.0) ** 2 / 2

    def loss(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        thetas, single = self._as_thetas(theta)
        quad = np.einsum("ki,ij,kj->k", thetas, self.A, thetas)
        values = (quad - 2 * thetas @ self.b + self.c) / (2 * self.n) + self.lam / 2 * np.einsum(
            "ki,ki->k", thetas, thetas
        )
        return float(values[0]) if single else values

    def excess_risk(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        thetas, single = self._as_thetas(theta)
        delta = thetas - self._theta_star
        # ∇L(θ*)ᵀδ ≥ 0 on C; it vanishes unless the radius binds.
        quadratic = 0.5 * np.einsum("ki,ij,kj->k", delta, self.hessian, delta)
        values = np.maximum(quadratic + delta @ self._gradient_star, 0.0)
        return float(values[0]) if single else values

    def excess_risk_lower_bound(self, theta: NDArray[np.float64]) -> float:
        """Exact for ridge: R is the quadratic ½δᵀQδ + ∇L(θ*)ᵀδ."""
        return float(self.excess_risk(theta))

    @cached_property
    def _sphere_risk(self) -> float:
        """min R(θ) over the sphere ‖θ‖ = R, solved once.

        On the sphere ½θᵀ(Q − σI)θ differs from ½θᵀQθ by a constant, and with σ = 1 + 2λ
        > λ_max(Q) (rows have ‖x_i‖₂ ≤ 1) the shifted objective is concave, so its minimiser
        over the ball lies on the sphere: one exact trust-region solve.
        """
        if self.radius_binds:
            return 0.0  # θ* itself lies on the sphere
        shifted = self.hessian - (1 + 2 * self.lam) * np.eye(self.p)
        return float(self.excess_risk(solve_trust_region(shifted, self.hessian @ self._theta_star, self.norm_bound)))

    def boundary_risk_lower_bound(self) -> float:
        """A lower bound on R over the sphere ‖θ‖ = R: its exact minimum there (0 when θ* lies on it).

        Shrunk by a relative 1e-9 so that it stays below R for solutions whose norm is R
        only up to rounding (the computed minimiser is stationary, so its own error is of
        second order).
        """
        return self._sphere_risk * (1 - 1e-9)


# One pass's statistic: a tuple of sums (arrays or numbers) that blocks combine entry by entry.
Statistics: TypeAlias = tuple[Any, ...]


class RowBlocks(ABC):
    """The rows y_i·x_i of a logistic problem, visited in blocks (docs/mathematics.md#setting-and-notation,
    docs/mathematics.md#the-two-learning-problems).

    Every use of the data by ``LogisticProblem`` is one pass: a ``statistic`` maps a
    block of rows (an array, rows × p) to a tuple of arrays, and ``reduce`` combines the
    blocks' tuples entry by entry (``combine``: one binary ufunc per entry, ``np.add``
    for all when ``None``). The rows must satisfy ‖x_i‖₁ ≤ 1 and y_i ∈ {−1, +1}.
    """

    n: int
    p: int

    @abstractmethod
    def reduce(
        self, statistic: Callable[[NDArray[np.float64]], Statistics], combine: Sequence[np.ufunc] | None = None
    ) -> Statistics:
        """The statistic of all rows: one pass over the data."""


def combine_statistics(first: Statistics, second: Statistics, combine: Sequence[np.ufunc] | None = None) -> Statistics:
    """Two blocks' statistics combined entry by entry, as ``RowBlocks.reduce`` does."""
    ufuncs = (np.add,) * len(first) if combine is None else combine
    return tuple(ufunc(a, b) for ufunc, a, b in zip(ufuncs, first, second, strict=True))


class InMemoryRows(RowBlocks):
    """Rows held in memory: one block, so a pass is the statistic of one array."""

    def __init__(self, yX: NDArray[np.float64]) -> None:
        self.yX = _readonly(yX)
        self.n, self.p = yX.shape

    def reduce(
        self, statistic: Callable[[NDArray[np.float64]], Statistics], combine: Sequence[np.ufunc] | None = None
    ) -> Statistics:
        return statistic(self.yX)


def _margins(yX: NDArray[np.float64], thetas: NDArray[np.float64]) -> NDArray[np.float64]:
    """m_i = y_i x_iᵀθ for each θ of a (k, p) batch: (rows, k)."""
    return yX @ thetas.T


def _log_loss_sum(margins: NDArray[np.float64]) -> NDArray[np.float64]:
    """Σ_i log(1 + e^{−m_i}) per column; logaddexp(0, −m) is stable for both signs of m."""
    sums: NDArray[np.float64] = np.logaddexp(0.0, -margins).sum(axis=0)
    return sums


def loss_sums(yX: NDArray[np.float64], thetas: NDArray[np.float64]) -> tuple[NDArray[np.float64]]:
    """Over a block: Σ log(1 + e^{−m_i}) for each θ of a (k, p) batch."""
    return (_log_loss_sum(_margins(yX, thetas)),)


def loss_gradient_sums(
    yX: NDArray[np.float64], thetas: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Over a block: Σ log(1 + e^{−m_i}) (k,) and Σ σ(−m_i)·y_i x_i (k, p) for a (k, p) batch."""
    margins = _margins(yX, thetas)
    # One exponential serves both: log(1 + e^{−m}) = max(−m, 0) + log1p(e^{−|m|}) and
    # σ(−m) = e^{−|m|}/(1 + e^{−|m|}) for m ≥ 0, 1/(1 + e^{−|m|}) otherwise (stable for both signs).
    small = np.exp(-np.abs(margins))
    losses = (np.maximum(-margins, 0.0) + np.log1p(small)).sum(axis=0)
    weights = np.where(margins >= 0, small, 1.0) / (1.0 + small)
    return losses, weights.T @ yX


def newton_sums(
    yX: NDArray[np.float64], theta: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float]:
    """Over a block, at one θ: Σ log(1 + e^{−m_i}), Σ σ(−m_i)·y_i x_i, Σ σ'(m_i) x_i x_iᵀ and max |m_i|.

    Combined with ``NEWTON_COMBINE``; everything a Newton step needs, in one pass.
    """
    margins = _margins(yX, theta[None, :])
    weights = expit(-margins[:, 0])
    curvature = weights * (1 - weights)
    return _log_loss_sum(margins), yX.T @ weights, (yX.T * curvature) @ yX, np.max(np.abs(margins), initial=0.0)


NEWTON_COMBINE = (np.add, np.add, np.add, np.maximum)


def moment_sums(yX: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Over a block: Σ y_i x_i and Σ x_i x_iᵀ (y_i² = 1); at θ = 0 they are all the Newton terms need."""
    return yX.sum(axis=0), yX.T @ yX


class _NewtonTerms(NamedTuple):
    """L(θ), ∇L(θ), the data part of ∇²L(θ) (without λI), ∇²L(θ), and max_i |x_iᵀθ|."""

    loss: float
    gradient: NDArray[np.float64]
    curvature: NDArray[np.float64]
    hessian: NDArray[np.float64]
    max_margin: float


class LogisticProblem(Problem):
    """Regularised logistic regression without intercept (docs/mathematics.md#the-two-learning-problems,
    docs/mathematics.md#a-public-norm-bound).

    L(θ) = (1/n) Σ log(1 + exp(−y_i θᵀx_i)) + (λ/2)‖θ‖², labels ±1. θ* is solved by
    Newton's method to a gradient norm ≤ 1e−10; when a radius R is given and the
    unconstrained optimum lies outside C, by Newton steps onto the ball (each an exact
    trust-region solve of the quadratic model over C) to a KKT residual
    ‖∇L(θ*) + μθ*‖ ≤ 1e−10 with μ ≥ 0 and ‖θ*‖ = R. Each Newton iteration is one pass
    over the data (loss, gradient and Hessian together); so is each exact loss of a
    batch of hypotheses.

    Parameters
    ----------
    X : (n, p) array with every row ‖x_i‖₁ ≤ 1.
    y : (n,) array of labels in {−1, +1}.
    lam : λ > 0.
    radius : a public bound R ≤ M = √(2 log 2/λ) on ‖θ‖, from domain knowledge, never
        from this data; ``None`` (default) for M.
    """

    name = "logistic"
    bound_formula = "√(2 ln 2/λ)"
    sensitivity_formula = "2{R}/n"
    clipped_formula = "2(√(2α/λ) + 2/(nλ))/n"
    loss_curvature = 0.25
    _residual_norm: float  # ‖∇L‖ (or its certified bound) at the last θ that Newton's method reached

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float, radius: float | None = None) -> None:
        lam = validate_regularisation(lam)
        X = _validate_features(X)
        y = _validate_target(y, X.shape[0])
        if not np.all((y == 1.0) | (y == -1.0)):
            found = np.unique(y[(y != 1.0) & (y != -1.0)])[:5]
            raise DataError(f"logistic labels must be −1 or +1; found {found.tolist()}")
        self._solve(InMemoryRows(X * y[:, None]), lam, radius)

    @classmethod
    def from_rows(
        cls, rows: RowBlocks, lam: float, radius: float | None = None, certify: bool = False
    ) -> LogisticProblem:
        """The logistic problem of rows read in blocks (docs/mathematics.md#the-two-learning-problems): the data may be
        larger than memory.

        ``accfirst.scale`` builds ``rows`` from Parquet files; the rows must satisfy
        docs/mathematics.md#setting-and-notation (they are not checked here: that would be a pass of its own). ``lam``
        and ``radius`` as for the constructor. ``certify`` saves passes where each costs much (files): the first gathers
        only the moments Σ y_i x_i and Σ x_i x_iᵀ (the Newton terms at θ = 0, whose step is a ridge solution), and the
        last Newton step is certified without a pass of its own (``_certified_step``): θ*'s loss then comes from the
        quadratic model (less a bound on its error) and its largest margin is an upper bound.
        """
        if not isinstance(rows, RowBlocks):
            raise AccFirstError(f"rows must be a RowBlocks; got {type(rows).__name__}")
        lam = validate_regularisation(lam)
        validate_count("n (rows)", rows.n, 1)
        validate_count("p (features)", rows.p, 1)
        problem = cls.__new__(cls)
        problem._solve(rows, lam, radius, certify)
        return problem

    def _solve(self, rows: RowBlocks, lam: float, radius: float | None, certify: bool = False) -> None:
        """Solve θ* and keep what the lower bound needs: the constructors' shared path."""
        super().__init__(rows.n, rows.p, lam, radius)
        self._rows = rows
        start = self._moment_terms() if certify else self._newton_terms(np.zeros(self.p))
        # σ'(0) = ¼ and y_i² = 1, so the first Newton pass (at θ = 0) also gives G = XᵀX/n.
        self.gram = _readonly(4 * start.curvature)
        unconstrained, terms = self._solve_unconstrained(start, certify)
        self._unconstrained = _readonly(unconstrained), terms, self._residual_norm
        self._unconstrained_norm = float(np.linalg.norm(unconstrained))
        self._solve_constrained()

    def _solve_constrained(self) -> None:
        """θ* over C from the unconstrained minimiser: itself when it lies in C, else Newton steps onto the ball."""
        unconstrained, terms, self._residual_norm = self._unconstrained
        # ∇L(θ*) = −μθ* + r: the multiplier μ ≥ 0 of the ball and the solver's residual r.
        self._multiplier = 0.0
        if self._unconstrained_norm <= self.norm_bound:
            theta = unconstrained
        else:
            theta, terms = self._solve_on_ball(unconstrained * (self.norm_bound / self._unconstrained_norm))
        self._theta_star = _readonly(theta)
        self._loss_star = terms.loss
        # Largest margin |x_iᵀθ*| (or a bound on it) bounds the curvature along any segment from θ*.
        self.max_margin_star = terms.max_margin

    @staticmethod
    def implied_norm_bound(lam: float) -> float:
        """M = √(2 log 2 / λ) (Claim A.11)."""
        return math.sqrt(2 * math.log(2) / lam)

    @staticmethod
    def free_radius(lam: float) -> float:
        """R₀ = √(0.27846/λ) ≈ 0.448·M: λ‖θ*‖² = (1/n)Σ z_i/(1 + e^{z_i}) ≤ max_z z/(1 + e^z)
        (docs/mathematics.md#the-free-radius)."""
        return math.sqrt(LOGISTIC_FREE_RADIUS_CONSTANT / lam)

    def with_radius(self, radius: float | None) -> LogisticProblem:
        problem = copy.copy(self)
        Problem.__init__(problem, self.n, self.p, self.lam, radius)
        problem.__dict__.pop("zero_risk", None)
        problem._solve_constrained()
        return problem

    @staticmethod
    def lipschitz_on(radius: float) -> float:
        """G = 1: the logistic loss is 1-Lipschitz on any C for ‖x‖₂ ≤ 1 (Lemma A.10)."""
        return 1.0

    @staticmethod
    def risk_sensitivity(radius: float, n: float) -> float:
        """Δ_R = 2R/n (Claim A.12; docs/mathematics.md#a-public-norm-bound)."""
        return 2 * radius / n

    @classmethod
    def zero_risk_width(cls, radius: float, lam: float) -> float:
        """W = r, r = min(R, R₀): ℓ(0) = ln 2 and ℓ(θ) ∈ [ln(1 + e^{−r}), ln(1 + e^{r})]
        (docs/mathematics.md#a-relative-accuracy-target).

        docs/mathematics.md#a-relative-accuracy-target states W = R; the maximiser lies in the free ball of
        docs/mathematics.md#the-free-radius (as for ridge), so r = min(R, R₀).
        """
        return min(radius, cls.free_radius(lam))

    def _regularised(self, sums: NDArray[np.float64], thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        """L(θ) of a (k, p) batch from its summed log-losses."""
        losses: NDArray[np.float64] = sums / self.n + self.lam / 2 * np.einsum("ki,ki->k", thetas, thetas)
        return losses

    def _newton_terms(self, theta: NDArray[np.float64]) -> _NewtonTerms:
        """L, ∇L and ∇²L at θ, and max_i |x_iᵀθ|: one pass over the data."""
        loss, weighted, curvature, max_margin = self._rows.reduce(partial(newton_sums, theta=theta), NEWTON_COMBINE)
        curvature = curvature / self.n
        return _NewtonTerms(
            loss=float(self._regularised(loss, theta[None, :])[0]),
            gradient=-weighted / self.n + self.lam * theta,
            curvature=curvature,
            hessian=curvature + self.lam * np.eye(self.p),
            max_margin=float(max_margin),
        )

    def _moment_terms(self) -> _NewtonTerms:
        """The Newton terms at θ = 0 from one pass of ``moment_sums``: σ(0) = ½, σ'(0) = ¼, every margin 0."""
        first, second = self._rows.reduce(moment_sums)
        curvature = second / (4 * self.n)
        return _NewtonTerms(
            loss=math.log(2),
            gradient=-first / (2 * self.n),
            curvature=curvature,
            hessian=curvature + self.lam * np.eye(self.p),
            max_margin=0.0,
        )

    def _certified_step(
        self, theta: NDArray[np.float64], terms: _NewtonTerms, step: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], _NewtonTerms] | None:
        """θ + s and its terms without a pass, when ‖∇L(θ + s)‖ ≤ 1e−10 is certain; else ``None``.

        docs/mathematics.md, “The two learning problems”.
        ∇L(θ + s) = ∇L(θ) + ∇²L(θ)s + ∫₀¹ (∇²L(θ + ts) − ∇²L(θ))s dt. Along the segment every
        margin moves by at most t‖s‖∞ (‖x_i‖₁ ≤ 1), each curvature σ'(m_i) by at most κt‖s‖∞
        (κ = max|σ''| = 1/(6√3)), so ‖∇²L(θ + ts) − ∇²L(θ)‖ ≤ κt‖s‖∞‖G‖ and
        ‖∇L(θ + s)‖ ≤ ‖∇L(θ) + ∇²L(θ)s‖ + (κ/2)‖s‖∞‖G‖‖s‖: that bound is the residual the
        lower bound allows for. The third-order term of L along s is at most (κ/6)‖s‖∞·sᵀGs
        in size, so L(θ + s) ≥ the quadratic model less that; the largest margin at most the
        last one plus ‖s‖∞.
        """
        reach = float(np.max(np.abs(step)))
        model_gradient = terms.gradient + terms.hessian @ step
        spread = CURVATURE_LIPSCHITZ * reach * float(np.linalg.eigvalsh(self.gram)[-1])
        bound = float(np.linalg.norm(model_gradient)) + spread / 2 * float(np.linalg.norm(step))
        if bound > LOGISTIC_GRADIENT_TOLERANCE:
            return None
        self._residual_norm = bound
        model_loss = terms.loss + float(terms.gradient @ step) + 0.5 * float(step @ terms.hessian @ step)
        loss = model_loss - spread / 6 * float(step @ self.gram @ step)
        return theta + step, terms._replace(loss=loss, gradient=model_gradient, max_margin=terms.max_margin + reach)

    def _armijo_step(
        self, theta: NDArray[np.float64], terms: _NewtonTerms, step: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], _NewtonTerms]:
        """θ + t·step with Armijo backtracking, and the Newton terms there (∇L(θ)ᵀstep < 0).

        Keeps Newton globally convergent on this convex loss. The terms of each trial point
        come from one pass, so an accepted step costs no further pass. Near the optimum loss
        differences drown in rounding, and the full step (quadratically convergent there)
        is taken.
        """
        slope = float(terms.gradient @ step)
        full = self._newton_terms(theta + step)
        if -slope <= NEWTON_ROUNDING * terms.loss:
            return theta + step, full
        scale, trial = 1.0, full
        while trial.loss > terms.loss + 1e-4 * scale * slope:
            scale /= 2
            if scale <= 1e-6:
                return theta + step, full
            trial = self._newton_terms(theta + scale * step)
        return theta + scale * step, trial

    def _solve_unconstrained(
        self, terms: _NewtonTerms, certify: bool = False
    ) -> tuple[NDArray[np.float64], _NewtonTerms]:
        """argmin L over all θ by Newton from θ = 0, whose ``terms`` are given; ``certify``: see ``from_rows``."""
        theta = np.zeros(self.p)
        for _ in range(NEWTON_ITERATIONS):
            self._residual_norm = float(np.linalg.norm(terms.gradient))
            if self._residual_norm <= LOGISTIC_GRADIENT_TOLERANCE:
                return theta, terms
            step = -np.asarray(np.linalg.solve(terms.hessian, terms.gradient), dtype=np.float64)
            if certify and (certified := self._certified_step(theta, terms, step)) is not None:
                return certified
            theta, terms = self._armijo_step(theta, terms, step)
        raise AccFirstError("Newton's method did not reach gradient norm 1e-10 for the logistic θ*")

    def _solve_on_ball(self, theta: NDArray[np.float64]) -> tuple[NDArray[np.float64], _NewtonTerms]:
        """argmin_C L when the unconstrained optimum lies outside C, from a feasible start.

        Each step moves towards the exact minimiser over C of the quadratic model at θ
        (``solve_trust_region``); the segment stays in C because C is convex.
        """
        radius = self.norm_bound
        terms = self._newton_terms(theta)
        for _ in range(NEWTON_ITERATIONS):
            gradient, hessian = terms.gradient, terms.hessian
            self._multiplier = max(-float(gradient @ theta) / radius**2, 0.0)
            self._residual_norm = float(np.linalg.norm(gradient + self._multiplier * theta))
            on_sphere = abs(float(np.linalg.norm(theta)) - radius) <= 1e-12 * radius
            if on_sphere and self._residual_norm <= LOGISTIC_GRADIENT_TOLERANCE:
                return theta, terms
            target = solve_trust_region(hessian, hessian @ theta - gradient, radius)
            theta, terms = self._armijo_step(theta, terms, target - theta)
        raise AccFirstError(
            "Newton's method did not reach a KKT residual of 1e-10 for the logistic θ* on the ball of radius "
            f"{radius:g}"
        )

    def loss(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        """L(θ); a (k, p) batch gives k losses in one pass over the data."""
        thetas, single = self._as_thetas(theta)
        (sums,) = self._rows.reduce(partial(loss_sums, thetas=thetas))
        values = self._regularised(sums, thetas)
        return float(values[0]) if single else values

    def loss_and_gradient(self, thetas: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """L(θ) and ∇L(θ) for a (k, p) batch, in one pass over the data for all k (Langevin samplers)."""
        sums, weighted = self._rows.reduce(partial(loss_gradient_sums, thetas=thetas))
        return self._regularised(sums, thetas), -weighted / self.n + self.lam * thetas

    def hessian_at(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇²L(θ) = (1/n) Σ σ(m_i)(1 − σ(m_i)) x_i x_iᵀ + λI, m_i = y_i θᵀx_i."""
        return self._newton_terms(np.asarray(theta, dtype=np.float64)).hessian

    def excess_risk(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        values = np.maximum(np.asarray(self.loss(theta)) - self._loss_star, 0.0)
        return float(values) if values.ndim == 0 else values

    def excess_risk_lower_bound(self, theta: NDArray[np.float64]) -> float:
        """½δᵀ(σ'(m)G + (λ + μ)I)δ + (μ/2)·min(‖θ*‖² − ‖θ‖², 0) − ‖r‖‖δ‖ (δ = θ − θ*).

        G = XᵀX/n, m = max_i|x_iᵀθ*| + ‖δ‖∞. On the segment from θ* to θ every margin is
        at most m in absolute value (|x_iᵀδ| ≤ ‖x_i‖₁‖δ‖∞ ≤ ‖δ‖∞), so the Hessian there is
        ⪰ σ'(m)G + λI, and Taylor's theorem in integral form gives
        R(θ) ≥ ∇L(θ*)ᵀδ + ½δᵀ(σ'(m)G + λI)δ. The computed θ* has ∇L(θ*) = −μθ* + r with
        ‖r‖ ≤ 1e−10 (μ = 0 unless a radius binds), and the identity
        −θ*ᵀδ = ½(‖δ‖² + ‖θ*‖² − ‖θ‖²) turns the first-order term into the rest; for θ in C
        the min(…, 0) is zero up to rounding.
        """
        delta = theta - self._theta_star
        m = self.max_margin_star + float(np.max(np.abs(delta)))
        sigma = float(expit(-m))
        curvature = sigma * (1 - sigma)
        squared = float(delta @ delta)
        quadratic = 0.5 * (curvature * float(delta @ self.gram @ delta) + (self.lam + self._multiplier) * squared)
        outside = min(float(self._theta_star @ self._theta_star) - float(theta @ theta), 0.0)
        first_order = 0.5 * self._multiplier * outside - self._residual_norm * math.sqrt(squared)
        return max(quadratic * (1 - 1e-12) + first_order, 0.0)


@dataclass(frozen=True)
class ProblemShape:
    """A problem's public constants without its rows: kind, n, p, λ and the stated radius
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound,
    docs/mathematics.md#a-private-radius).

    What a choice made before a run may read (the private radius's rule, the guidance): the
    same ``max_norm``, ``norm_bound``, ``query_sensitivity``, ``test_sensitivity`` and ``theta_sensitivity`` as the
    problem, and ``with_radius`` for the constants on another ball, without touching data.
    """

    kind: type[Problem]
    n: int
    p: int
    lam: float
    radius: float | None = None

    @property
    def name(self) -> str:
        return self.kind.name

    @property
    def max_norm(self) -> float:
        return self.kind.implied_norm_bound(self.lam)

    @property
    def norm_bound(self) -> float:
        return self.max_norm if self.radius is None else self.radius

    @property
    def query_sensitivity(self) -> float:
        return self.kind.risk_sensitivity(self.norm_bound, self.n)

    def test_sensitivity(self, alpha: float, clipped: bool = True) -> float:
        return self.kind.test_sensitivity_on(self.norm_bound, self.n, self.lam, alpha, clipped)

    @property
    def theta_sensitivity(self) -> float:
        return self.kind.output_sensitivity(self.norm_bound, self.n, self.p, self.lam)

    def with_radius(self, radius: float | None) -> ProblemShape:
        """The constants on the ball ‖θ‖ ≤ ``radius`` (``None``: M); checked like a problem's radius."""
        return replace(self, radius=validate_radius(radius, self.max_norm))


# The problem class of each task, as a prepared dataset names it (``PreparedData.task``).
PROBLEMS: dict[str, type[RidgeProblem] | type[LogisticProblem]] = {"ridge": RidgeProblem, "logistic": LogisticProblem}


def prepared_problem(data: PreparedData, lam: float, radius: float | None = None) -> Problem:
    """The ERM problem of a prepared table's training rows, carrying what the preparation cost
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#preparing-the-data-privately).

    A private preparation's (ε, δ) goes into every run's total; an evaluation-only one (it read the
    data without noise) is carried as such, for every figure to say that it excludes the preparation.
    """
    preparation = data.preparation
    problem = PROBLEMS[data.task](data.X_train, data.y_train, lam, radius)
    if preparation.mode == EVALUATION_MODE:
        return problem.with_preparation(0.0, 0.0, EVALUATION_MODE)
    return problem.with_preparation(preparation.epsilon, preparation.delta, preparation.mode)


def _readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    array.flags.writeable = False
    return array
