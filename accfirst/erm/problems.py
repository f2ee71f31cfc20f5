"""The two regularised ERM problems of the paper: ridge and logistic regression.

SPEC §1–§3. A problem touches the data once, when it is built: it validates the
rows, computes what the private algorithms need (sufficient statistics for ridge,
θ* and the Gram matrix for logistic) and keeps it, so that later evaluations of a
hypothesis cost O(p²) (ridge) or one pass over the data (logistic, exact risk only).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from accfirst.errors import AccFirstError, DataError

ROW_NORM_TOLERANCE = 1e-9
LOGISTIC_GRADIENT_TOLERANCE = 1e-10


def validate_regularisation(lam: float) -> float:
    """Return λ as a float if it is a finite positive number, else raise ``AccFirstError``."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer)):
        raise AccFirstError(f"lam must be a positive number; got {lam!r}")
    lam = float(lam)
    if not math.isfinite(lam) or lam <= 0:
        raise AccFirstError(f"lam (the regularisation λ) must be a finite number > 0; got {lam}")
    return lam


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
    """A regularised ERM problem L(θ) on a fixed dataset, with the constants of SPEC §2–§3.

    Subclasses set ``name``, the norm bound M of the feasible set C, the
    excess-risk sensitivity Δ_R and the ℓ1-sensitivity Δ_θ of θ*.
    """

    name: str

    def __init__(self, n: int, p: int, lam: float) -> None:
        self.n = n
        self.p = p
        self.lam = lam

    @property
    @abstractmethod
    def norm_bound(self) -> float:
        """M, the radius of the feasible set C = {‖θ‖₂ ≤ M}."""

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
        """Proj_C: rescale θ to norm M when ‖θ‖₂ > M (SPEC §3, post-processing)."""
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
    """Ridge regression L(θ) = (1/2n)‖y − Xθ‖² + (λ/2)‖θ‖² (SPEC §2).

    Keeps only the sufficient statistics A = XᵀX, b = Xᵀy, c = yᵀy; every loss is
    evaluated from them in O(p²).

    Parameters
    ----------
    X : (n, p) array with every row ‖x_i‖₁ ≤ 1.
    y : (n,) array with |y_i| ≤ 1.
    lam : λ > 0.
    """

    name = "ridge"

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float) -> None:
        lam = validate_regularisation(lam)
        X = _validate_features(X)
        y = _validate_target(y, X.shape[0])
        worst = int(np.argmax(np.abs(y)))
        if abs(y[worst]) > 1 + ROW_NORM_TOLERANCE:
            raise DataError(
                f"ridge targets must satisfy |y| ≤ 1 (SPEC §1); y[{worst}] = {y[worst]:.6g}. "
                "Scale the target (SPEC §11) first"
            )
        super().__init__(X.shape[0], X.shape[1], lam)
        A = X.T @ X
        self.A = _readonly((A + A.T) / 2)
        self.b = _readonly(X.T @ y)
        self.c = float(y @ y)
        # Q = A/n + λI is the Hessian of L: R(θ) = ½(θ−θ*)ᵀQ(θ−θ*) exactly.
        self.hessian = _readonly(self.A / self.n + lam * np.eye(self.p))
        self._theta_star = _readonly(np.linalg.solve(self.hessian, self.b / self.n))

    @property
    def norm_bound(self) -> float:
        """M = 1/√λ (Lemma A.4)."""
        return 1.0 / math.sqrt(self.lam)

    @property
    def query_sensitivity(self) -> float:
        """Δ_R = (M + 1)²/n (Claim A.5)."""
        return (self.norm_bound + 1.0) ** 2 / self.n

    @property
    def theta_sensitivity(self) -> float:
        """Δ_θ = 2(M + 1)√p/(nλ): the squared loss is (M+1)-Lipschitz on C (SPEC §3)."""
        return 2.0 * (self.norm_bound + 1.0) * math.sqrt(self.p) / (self.n * self.lam)

    @property
    def theta_star(self) -> NDArray[np.float64]:
        return self._theta_star

    @cached_property
    def hessian_min_eigenvalue(self) -> float:
        """λ_min(A/n + λI) ≥ λ: the strong-convexity constant used by lower bounds."""
        return max(float(np.linalg.eigvalsh(self.hessian)[0]), self.lam)

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
        values = 0.5 * np.einsum("ki,ij,kj->k", delta, self.hessian, delta)
        return float(values[0]) if single else values

    def excess_risk_lower_bound(self, theta: NDArray[np.float64]) -> float:
        """Exact for ridge: R is the quadratic form ½δᵀQδ."""
        return self.excess_risk(theta)

    def boundary_risk_lower_bound(self) -> float:
        """Lower bound on R over the sphere ‖θ‖ = M: ½λ_min(Q)(M − ‖θ*‖)² (strong convexity).

        Shrunk by a relative 1e-9 so that it stays below R for solutions whose norm
        is M only up to rounding.
        """
        gap = self.norm_bound - float(np.linalg.norm(self._theta_star))
        return 0.5 * self.hessian_min_eigenvalue * max(gap, 0.0) ** 2 * (1 - 1e-9)


class LogisticProblem(Problem):
    """Regularised logistic regression without intercept (SPEC §2).

    L(θ) = (1/n) Σ log(1 + exp(−y_i θᵀx_i)) + (λ/2)‖θ‖², labels ±1. θ* is solved by
    Newton's method to a gradient norm ≤ 1e−10.

    Parameters
    ----------
    X : (n, p) array with every row ‖x_i‖₁ ≤ 1.
    y : (n,) array of labels in {−1, +1}.
    lam : λ > 0.
    """

    name = "logistic"

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float) -> None:
        lam = validate_regularisation(lam)
        X = _validate_features(X)
        y = _validate_target(y, X.shape[0])
        if not np.all((y == 1.0) | (y == -1.0)):
            found = np.unique(y[(y != 1.0) & (y != -1.0)])[:5]
            raise DataError(f"logistic labels must be −1 or +1 (SPEC §1); found {found.tolist()}")
        super().__init__(X.shape[0], X.shape[1], lam)
        self._yX = _readonly(X * y[:, None])
        self.gram = _readonly(X.T @ X / self.n)
        self._theta_star = _readonly(self._solve_theta_star())
        self._loss_star = float(self.loss(self._theta_star))
        # Largest margin |x_iᵀθ*| bounds the curvature along any segment from θ*.
        self.max_margin_star = float(np.max(np.abs(self._yX @ self._theta_star)))

    @property
    def norm_bound(self) -> float:
        """M = √(2 log 2 / λ) (Claim A.11)."""
        return math.sqrt(2 * math.log(2) / self.lam)

    @property
    def query_sensitivity(self) -> float:
        """Δ_R = 2M/n (Claim A.12)."""
        return 2 * self.norm_bound / self.n

    @property
    def theta_sensitivity(self) -> float:
        """Δ_θ = 2√p/(nλ) (Lemma A.10)."""
        return 2 * math.sqrt(self.p) / (self.n * self.lam)

    @property
    def theta_star(self) -> NDArray[np.float64]:
        return self._theta_star

    def _gradient_hessian(self, theta: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        margins = self._yX @ theta
        weights = expit(-margins)
        gradient = -(self._yX.T @ weights) / self.n + self.lam * theta
        curvature = weights * (1 - weights)
        hessian = (self._yX.T * curvature) @ self._yX / self.n + self.lam * np.eye(self.p)
        return gradient, hessian

    def _solve_theta_star(self) -> NDArray[np.float64]:
        theta = np.zeros(self.p)
        for _ in range(100):
            gradient, hessian = self._gradient_hessian(theta)
            self._gradient_norm_star = float(np.linalg.norm(gradient))
            if self._gradient_norm_star <= LOGISTIC_GRADIENT_TOLERANCE:
                return theta
            step = np.linalg.solve(hessian, gradient)
            current = self.loss(theta)
            scale = 1.0
            # Armijo backtracking keeps Newton globally convergent on this convex loss;
            # near the optimum loss differences drown in rounding, and the full step
            # (quadratically convergent there) is taken.
            while self.loss(theta - scale * step) > current - 1e-4 * scale * gradient @ step and scale > 1e-6:
                scale /= 2
            theta = theta - (scale if scale > 1e-6 else 1.0) * step
        raise AccFirstError("Newton's method did not reach gradient norm 1e-10 for the logistic θ*")

    def loss(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        thetas, single = self._as_thetas(theta)
        margins = self._yX @ thetas.T
        # log(1 + e^{−m}) = logaddexp(0, −m), stable for both signs of m.
        values = np.logaddexp(0.0, -margins).mean(axis=0) + self.lam / 2 * np.einsum("ki,ki->k", thetas, thetas)
        return float(values[0]) if single else values

    def excess_risk(self, theta: ArrayLike) -> float | NDArray[np.float64]:
        values = np.maximum(np.asarray(self.loss(theta)) - self._loss_star, 0.0)
        return float(values) if values.ndim == 0 else values

    def excess_risk_lower_bound(self, theta: NDArray[np.float64]) -> float:
        """½δᵀ(σ'(m)G + λI)δ − ‖∇L(θ*)‖‖δ‖ with δ = θ − θ*, G = XᵀX/n, m = max_i|x_iᵀθ*| + ‖δ‖∞.

        On the segment from θ* to θ every margin is at most m in absolute value
        (|x_iᵀδ| ≤ ‖x_i‖₁‖δ‖∞ ≤ ‖δ‖∞), so the Hessian there is ⪰ σ'(m)G + λI and the
        integral form of Taylor's theorem gives the bound; the computed θ* leaves a
        gradient of norm ≤ 1e−10, whose first-order term is subtracted.
        """
        delta = theta - self._theta_star
        m = self.max_margin_star + float(np.max(np.abs(delta)))
        sigma = expit(-m)
        curvature = sigma * (1 - sigma)
        quadratic = 0.5 * (curvature * float(delta @ self.gram @ delta) + self.lam * float(delta @ delta))
        return max(quadratic * (1 - 1e-12) - self._gradient_norm_star * float(np.linalg.norm(delta)), 0.0)


# The problem class of each task, as a prepared dataset names it (``PreparedData.task``).
PROBLEMS: dict[str, type[Problem]] = {"ridge": RidgeProblem, "logistic": LogisticProblem}


def _readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    array.flags.writeable = False
    return array
