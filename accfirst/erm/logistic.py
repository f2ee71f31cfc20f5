"""Regularised logistic regression without intercept, its rows visited in blocks
(docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound).

Data larger than memory (``accfirst.scale``) reaches it as ``RowBlocks``, rows visited block by block, every pass a
sum over blocks. In memory the rows are one block (``InMemoryRows``) and the arithmetic is that of a single array.
"""

from __future__ import annotations

import copy
import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq
from scipy.special import expit

from accfirst.erm.problem import Problem, readonly, validate_features, validate_regularisation, validate_target
from accfirst.erm.trust_region import solve_trust_region
from accfirst.errors import AccFirstError, DataError
from accfirst.validation import validate_count

LOGISTIC_GRADIENT_TOLERANCE = 1e-10
NEWTON_ITERATIONS = 100
# A Newton step whose predicted decrease is below this share of the loss is taken whole:
# there the loss's own rounding decides a line search, and Newton converges quadratically.
NEWTON_ROUNDING = 1e-12
# max_m |σ''(m)| = 1/(6√3): how fast the logistic loss's curvature σ'(m) = σ(m)(1 − σ(m)) changes.
CURVATURE_LIPSCHITZ = 1 / (6 * math.sqrt(3))
# max_{z} z/(1 + e^z) = W(1/e) = 0.278464542761…, attained at z = 1 + W(1/e) (docs/mathematics.md#the-free-radius): at
# the maximum 1 + e^z = z·e^z, so z/(1 + e^z) = e^{−z} = z − 1, and w = z − 1 solves w·e^w = 1/e.
LOGISTIC_FREE_RADIUS_CONSTANT = 0.2784645427610738
# The logistic gradient gap's maximum is found by a root search; rounding it up by this share keeps the last digit of
# the search from understating it.
GRADIENT_GAP_ROUNDING = 1e-12


@functools.lru_cache(maxsize=4096)
def _logistic_gradient_gap(radius: float) -> float:
    """S(R) = max_c 2√(1 − c²)·σ(Rc) (``LogisticProblem.gradient_gap``).

    The logarithm ½ln(1 − c²) + ln σ(Rc) is concave on [0, 1), so the maximiser is the root of its derivative
    −c/(1 − c²) + R·σ(−Rc), negative at 0 and positive where c/(1 − c²) = R.
    """
    top = (math.sqrt(1.0 + 4.0 * radius * radius) - 1.0) / (2.0 * radius)
    best = brentq(lambda c: c / (1.0 - c * c) - radius * float(expit(-radius * c)), 0.0, top, xtol=1e-16)
    return 2.0 * math.sqrt(1.0 - best * best) * float(expit(radius * best)) * (1.0 + GRADIENT_GAP_ROUNDING)


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
        self.yX = readonly(yX)
        self.n, self.p = yX.shape

    def reduce(
        self, statistic: Callable[[NDArray[np.float64]], Statistics], combine: Sequence[np.ufunc] | None = None
    ) -> Statistics:
        return statistic(self.yX)


def _largest_norm(yX: NDArray[np.float64]) -> Statistics:
    """The largest Euclidean norm of a block's rows (0 for an empty block)."""
    return (np.array(np.sqrt(np.einsum("ij,ij->i", yX, yX)).max(initial=0.0)),)


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
    loss_curvature = 0.25
    _residual_norm: float  # ‖∇L‖ (or its certified bound) at the last θ that Newton's method reached

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float, radius: float | None = None) -> None:
        lam = validate_regularisation(lam)
        X = validate_features(X)
        y = validate_target(y, X.shape[0])
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
        self.gram = readonly(4 * start.curvature)
        unconstrained, terms = self._solve_unconstrained(start, certify)
        self._unconstrained = readonly(unconstrained), terms, self._residual_norm
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
        self._theta_star = readonly(theta)
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

    @property
    def rows(self) -> RowBlocks:
        """The rows y_i·x_i the problem reads (an accuracy target reads them too)."""
        return self._rows

    def _at_lambda(self, lam: float) -> LogisticProblem:
        return LogisticProblem.from_rows(self._rows, lam)

    def with_radius(self, radius: float | None) -> LogisticProblem:
        problem = copy.copy(self)
        Problem.__init__(problem, self.n, self.p, self.lam, radius)
        problem.__dict__.pop("zero_risk", None)
        problem._solve_constrained()
        return problem

    @property
    def largest_row_norm(self) -> float:
        """max ‖x_i‖₂ = max ‖y_i x_i‖₂, one pass over the rows (evaluation only)."""
        (largest,) = self.rows.reduce(_largest_norm, (np.maximum,))
        return float(largest)

    @staticmethod
    def gradient_gap(radius: float) -> float:
        """S(R) = max_c 2√(1 − c²)·σ(Rc), below 2 (docs/mathematics.md#the-gradient-gap). [derived]

        A row's logistic-loss gradient at θ is −σ(−yxᵀθ)·yx; over unit rows these points form a curve whose every
        point lies within S(R)/2 of the point (c*σ(Rc*), 0) in the plane of θ, c* the maximiser; so two of them are at
        most S(R) apart, and shorter rows do no better. c* solves c/(1 − c²) = R·σ(−Rc), found by a root search to
        machine precision; the maximum is then rounded up by 10⁻¹² of itself, so that the search's last digit cannot
        understate it.
        """
        return _logistic_gradient_gap(radius)

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

    def reduce_rows(
        self, statistic: Callable[[NDArray[np.float64]], Statistics], combine: Sequence[np.ufunc] | None = None
    ) -> Statistics:
        """A statistic of the rows y_i·x_i in one pass (``RowBlocks.reduce``): how a sampler evaluates its own sums."""
        return self._rows.reduce(statistic, combine)

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
