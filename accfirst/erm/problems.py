"""The two regularised ERM problems of the paper: ridge and logistic regression.

SPEC §1–§3, §13. A problem touches the data once, when it is built: it validates the
rows, computes what the private algorithms need (sufficient statistics for ridge,
θ* and the Gram matrix for logistic) and keeps it, so that later evaluations of a
hypothesis cost O(p²) (ridge) or one pass over the data (logistic, exact risk only).

The feasible set is C = {‖θ‖₂ ≤ R}: R = M, the bound that λ implies, unless the user
states a public radius R ≤ M (SPEC §13). Then θ* is the minimiser over C, and the
sensitivities, projections and trust-region radius all use R.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from accfirst.erm.trust_region import solve_trust_region
from accfirst.errors import AccFirstError, DataError
from accfirst.validation import validate_positive

ROW_NORM_TOLERANCE = 1e-9
LOGISTIC_GRADIENT_TOLERANCE = 1e-10
NEWTON_ITERATIONS = 100


def validate_regularisation(lam: float) -> float:
    """Return λ as a float if it is a finite positive number, else raise ``AccFirstError``."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer)):
        raise AccFirstError(f"lam must be a positive number; got {lam!r}")
    lam = float(lam)
    if not math.isfinite(lam) or lam <= 0:
        raise AccFirstError(f"lam (the regularisation λ) must be a finite number > 0; got {lam}")
    return lam


def validate_radius(radius: float | None, max_norm: float) -> float | None:
    """A public radius R in (0, M], or ``None`` (SPEC §13); else ``AccFirstError`` naming both."""
    if radius is None:
        return None
    radius = validate_positive("radius (a public bound on ‖θ‖)", radius)
    if radius > max_norm:
        raise AccFirstError(
            f"radius R = {radius:.6g} exceeds M = {max_norm:.6g}, the bound on ‖θ*‖ that λ already implies "
            "(SPEC §13); give a radius ≤ M, or none"
        )
    return radius


def _validate_features(X: ArrayLike) -> NDArray[np.float64]:
    """SPEC §1: a finite n × p float array whose rows have ‖x_i‖₁ ≤ 1."""
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
            f"every row of X must have ℓ1 norm ≤ 1 (SPEC §1); row {worst} has "
            f"{row_norms[worst]:.6g}. Scale the features (SPEC §11) before building the problem"
        )
    return X


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
    """A regularised ERM problem L(θ) on a fixed dataset, with the constants of SPEC §2–§3, §13.

    Subclasses set ``name``, the norm bound M that λ implies, the excess-risk
    sensitivity Δ_R and the ℓ1-sensitivity Δ_θ of θ*, all over the feasible set
    C = {‖θ‖₂ ≤ R} (R = ``norm_bound``: the public ``radius`` if given, else M).
    """

    name: str

    def __init__(self, n: int, p: int, lam: float, radius: float | None) -> None:
        self.n = n
        self.p = p
        self.lam = lam
        self.radius = validate_radius(radius, self.max_norm)

    @staticmethod
    @abstractmethod
    def implied_norm_bound(lam: float) -> float:
        """M at λ, before any data: the largest public radius this problem accepts (Lemma A.4, Claim A.11)."""

    @property
    def max_norm(self) -> float:
        """M, the bound on ‖θ*‖ that λ implies (Lemma A.4, Claim A.11)."""
        return self.implied_norm_bound(self.lam)

    @property
    def norm_bound(self) -> float:
        """R, the radius of the feasible set C = {‖θ‖₂ ≤ R}: the public radius if given, else M (SPEC §13)."""
        return self.max_norm if self.radius is None else self.radius

    @property
    @abstractmethod
    def unconstrained_norm(self) -> float:
        """‖argmin L‖ over all θ: evaluation only (it reads the data), for saying that a radius was too small."""

    @property
    def radius_binds(self) -> bool:
        """Whether the data's unconstrained optimum lies outside C (evaluation only, SPEC §13)."""
        return self.unconstrained_norm > self.norm_bound

    @property
    @abstractmethod
    def query_sensitivity(self) -> float:
        """Δ_R, the sensitivity of the excess-risk query over θ ∈ C (SPEC §2)."""

    @property
    @abstractmethod
    def theta_sensitivity(self) -> float:
        """Δ_θ, the ℓ1-sensitivity of θ* used by output perturbation (SPEC §3)."""

    @property
    @abstractmethod
    def theta_star(self) -> NDArray[np.float64]:
        """θ* = argmin_C L (read-only)."""

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
        """Proj_C: rescale θ to norm R when ‖θ‖₂ > R (SPEC §3, §13, post-processing)."""
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
    """Ridge regression L(θ) = (1/2n)‖y − Xθ‖² + (λ/2)‖θ‖² (SPEC §2, §13).

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

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float, radius: float | None = None) -> None:
        lam = validate_regularisation(lam)
        X = _validate_features(X)
        y = _validate_target(y, X.shape[0])
        worst = int(np.argmax(np.abs(y)))
        if abs(y[worst]) > 1 + ROW_NORM_TOLERANCE:
            raise DataError(
                f"ridge targets must satisfy |y| ≤ 1 (SPEC §1); y[{worst}] = {y[worst]:.6g}. "
                "Scale the target (SPEC §11) first"
            )
        super().__init__(X.shape[0], X.shape[1], lam, radius)
        A = X.T @ X
        self.A = _readonly((A + A.T) / 2)
        self.b = _readonly(X.T @ y)
        self.c = float(y @ y)
        # Q = A/n + λI is the Hessian of L: R(θ) = ½δᵀQδ + ∇L(θ*)ᵀδ exactly, δ = θ − θ*.
        self.hessian = _readonly(self.A / self.n + lam * np.eye(self.p))
        unconstrained = np.linalg.solve(self.hessian, self.b / self.n)
        self._unconstrained_norm = float(np.linalg.norm(unconstrained))
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

    @property
    def query_sensitivity(self) -> float:
        """Δ_R = (R + 1)²/n (Claim A.5; SPEC §13)."""
        return (self.norm_bound + 1.0) ** 2 / self.n

    @property
    def theta_sensitivity(self) -> float:
        """Δ_θ = 2(R + 1)√p/(nλ): the squared loss is (R+1)-Lipschitz on C (SPEC §3, §13)."""
        return 2.0 * (self.norm_bound + 1.0) * math.sqrt(self.p) / (self.n * self.lam)

    @property
    def theta_star(self) -> NDArray[np.float64]:
        return self._theta_star

    @property
    def unconstrained_norm(self) -> float:
        return self._unconstrained_norm

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
        return self.excess_risk(theta)

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


class LogisticProblem(Problem):
    """Regularised logistic regression without intercept (SPEC §2, §13).

    L(θ) = (1/n) Σ log(1 + exp(−y_i θᵀx_i)) + (λ/2)‖θ‖², labels ±1. θ* is solved by
    Newton's method to a gradient norm ≤ 1e−10; when a radius R is given and the
    unconstrained optimum lies outside C, by Newton steps onto the ball (each an exact
    trust-region solve of the quadratic model over C) to a KKT residual
    ‖∇L(θ*) + μθ*‖ ≤ 1e−10 with μ ≥ 0 and ‖θ*‖ = R.

    Parameters
    ----------
    X : (n, p) array with every row ‖x_i‖₁ ≤ 1.
    y : (n,) array of labels in {−1, +1}.
    lam : λ > 0.
    radius : a public bound R ≤ M = √(2 log 2/λ) on ‖θ‖, from domain knowledge, never
        from this data; ``None`` (default) for M.
    """

    name = "logistic"

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float, radius: float | None = None) -> None:
        lam = validate_regularisation(lam)
        X = _validate_features(X)
        y = _validate_target(y, X.shape[0])
        if not np.all((y == 1.0) | (y == -1.0)):
            found = np.unique(y[(y != 1.0) & (y != -1.0)])[:5]
            raise DataError(f"logistic labels must be −1 or +1 (SPEC §1); found {found.tolist()}")
        super().__init__(X.shape[0], X.shape[1], lam, radius)
        self._yX = _readonly(X * y[:, None])
        self.gram = _readonly(X.T @ X / self.n)
        unconstrained = self._solve_unconstrained()
        self._unconstrained_norm = float(np.linalg.norm(unconstrained))
        # ∇L(θ*) = −μθ* + r: the multiplier μ ≥ 0 of the ball and the solver's residual r.
        self._multiplier = 0.0
        if self._unconstrained_norm <= self.norm_bound:
            theta = unconstrained
        else:
            theta = self._solve_on_ball(unconstrained * (self.norm_bound / self._unconstrained_norm))
        self._theta_star = _readonly(theta)
        self._loss_star = float(self.loss(self._theta_star))
        # Largest margin |x_iᵀθ*| bounds the curvature along any segment from θ*.
        self.max_margin_star = float(np.max(np.abs(self._yX @ self._theta_star)))

    @staticmethod
    def implied_norm_bound(lam: float) -> float:
        """M = √(2 log 2 / λ) (Claim A.11)."""
        return math.sqrt(2 * math.log(2) / lam)

    @property
    def query_sensitivity(self) -> float:
        """Δ_R = 2R/n (Claim A.12; SPEC §13)."""
        return 2 * self.norm_bound / self.n

    @property
    def theta_sensitivity(self) -> float:
        """Δ_θ = 2√p/(nλ) (Lemma A.10; the loss is 1-Lipschitz on any C)."""
        return 2 * math.sqrt(self.p) / (self.n * self.lam)

    @property
    def theta_star(self) -> NDArray[np.float64]:
        return self._theta_star

    @property
    def unconstrained_norm(self) -> float:
        return self._unconstrained_norm

    def _gradient_hessian(self, theta: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        margins = self._yX @ theta
        weights = expit(-margins)
        gradient = -(self._yX.T @ weights) / self.n + self.lam * theta
        curvature = weights * (1 - weights)
        hessian = (self._yX.T * curvature) @ self._yX / self.n + self.lam * np.eye(self.p)
        return gradient, hessian

    def _armijo_step(self, theta: NDArray[np.float64], step: NDArray[np.float64], slope: float) -> NDArray[np.float64]:
        """θ + t·step with Armijo backtracking (slope = ∇Lᵀstep < 0).

        Keeps Newton globally convergent on this convex loss; near the optimum loss
        differences drown in rounding, and the full step (quadratically convergent
        there) is taken.
        """
        current = self.loss(theta)
        scale = 1.0
        while self.loss(theta + scale * step) > current + 1e-4 * scale * slope and scale > 1e-6:
            scale /= 2
        return theta + (scale if scale > 1e-6 else 1.0) * step

    def _solve_unconstrained(self) -> NDArray[np.float64]:
        theta = np.zeros(self.p)
        for _ in range(NEWTON_ITERATIONS):
            gradient, hessian = self._gradient_hessian(theta)
            self._residual_norm = float(np.linalg.norm(gradient))
            if self._residual_norm <= LOGISTIC_GRADIENT_TOLERANCE:
                return theta
            step = -np.linalg.solve(hessian, gradient)
            theta = self._armijo_step(theta, step, float(gradient @ step))
        raise AccFirstError("Newton's method did not reach gradient norm 1e-10 for the logistic θ*")

    def _solve_on_ball(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """argmin_C L when the unconstrained optimum lies outside C, from a feasible start.

        Each step moves towards the exact minimiser over C of the quadratic model at θ
        (``solve_trust_region``); the segment stays in C because C is convex.
        """
        radius = self.norm_bound
        for _ in range(NEWTON_ITERATIONS):
            gradient, hessian = self._gradient_hessian(theta)
            self._multiplier = max(-float(gradient @ theta) / radius**2, 0.0)
            self._residual_norm = float(np.linalg.norm(gradient + self._multiplier * theta))
            on_sphere = abs(float(np.linalg.norm(theta)) - radius) <= 1e-12 * radius
            if on_sphere and self._residual_norm <= LOGISTIC_GRADIENT_TOLERANCE:
                return theta
            target = solve_trust_region(hessian, hessian @ theta - gradient, radius)
            step = target - theta
            theta = self._armijo_step(theta, step, float(gradient @ step))
        raise AccFirstError(
            "Newton's method did not reach a KKT residual of 1e-10 for the logistic θ* on the ball of radius "
            f"{radius:g}"
        )

    def loss(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        thetas, single = self._as_thetas(theta)
        margins = self._yX @ thetas.T
        # log(1 + e^{−m}) = logaddexp(0, −m), stable for both signs of m.
        values = np.logaddexp(0.0, -margins).mean(axis=0) + self.lam / 2 * np.einsum("ki,ki->k", thetas, thetas)
        return float(values[0]) if single else values

    def loss_and_gradient(self, thetas: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """L(θ) and ∇L(θ) for a (k, p) batch, in one pass over the data for all k (Langevin samplers)."""
        margins = self._yX @ thetas.T
        # One exponential serves both: log(1 + e^{−m}) = max(−m, 0) + log1p(e^{−|m|}) and
        # σ(−m) = e^{−|m|}/(1 + e^{−|m|}) for m ≥ 0, 1/(1 + e^{−|m|}) otherwise (stable for both signs).
        small = np.exp(-np.abs(margins))
        losses = (np.maximum(-margins, 0.0) + np.log1p(small)).mean(axis=0)
        weights = np.where(margins >= 0, small, 1.0) / (1.0 + small)
        gradients = -(weights.T @ self._yX) / self.n + self.lam * thetas
        return losses + self.lam / 2 * np.einsum("ki,ki->k", thetas, thetas), gradients

    def hessian_at(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇²L(θ) = (1/n) Σ σ(m_i)(1 − σ(m_i)) x_i x_iᵀ + λI, m_i = y_i θᵀx_i."""
        return self._gradient_hessian(theta)[1]

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
        sigma = expit(-m)
        curvature = sigma * (1 - sigma)
        squared = float(delta @ delta)
        quadratic = 0.5 * (curvature * float(delta @ self.gram @ delta) + (self.lam + self._multiplier) * squared)
        outside = min(float(self._theta_star @ self._theta_star) - float(theta @ theta), 0.0)
        first_order = 0.5 * self._multiplier * outside - self._residual_norm * math.sqrt(squared)
        return max(quadratic * (1 - 1e-12) + first_order, 0.0)


# The problem class of each task, as a prepared dataset names it (``PreparedData.task``).
PROBLEMS: dict[str, type[Problem]] = {"ridge": RidgeProblem, "logistic": LogisticProblem}


def _readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    array.flags.writeable = False
    return array
