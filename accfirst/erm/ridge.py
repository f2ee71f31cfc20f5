"""Ridge regression: L(θ) = ‖y − Xθ‖²/(2n) + (λ/2)‖θ‖² from its sufficient statistics
(docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound).

Data larger than memory (``accfirst.scale``) reaches it through ``RidgeProblem.from_statistics``.
"""

from __future__ import annotations

import copy
import math
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.erm.problem import (
    ROW_NORM_TOLERANCE,
    Problem,
    readonly,
    validate_features,
    validate_regularisation,
    validate_statistics,
    validate_target,
)
from accfirst.erm.trust_region import solve_trust_region
from accfirst.errors import DataError
from accfirst.validation import validate_count


def clip_target(y: NDArray[np.float64]) -> NDArray[np.float64]:
    """A ridge target with |y_i| ≤ 1: values above 1 by at most ``ROW_NORM_TOLERANCE`` (float excess) clipped to ±1
    on a copy, further above refused (docs/mathematics.md#setting-and-notation)."""
    worst = int(np.argmax(np.abs(y)))
    if abs(y[worst]) > 1 + ROW_NORM_TOLERANCE:
        raise DataError(
            f"ridge targets must satisfy |y| ≤ 1; y[{worst}] = {y[worst]:.6g}. "
            "Scale the target (docs/data-preparation.md) first"
        )
    return np.clip(y, -1.0, 1.0) if abs(y[worst]) > 1 else y


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
    loss_curvature = 1.0
    #: The rows (X, y) when the problem was built from them (an R² target reads them), ``None`` from statistics.
    rows: tuple[NDArray[np.float64], NDArray[np.float64]] | None

    def __init__(self, X: ArrayLike, y: ArrayLike, lam: float, radius: float | None = None) -> None:
        lam = validate_regularisation(lam)
        X = validate_features(X)
        y = clip_target(validate_target(y, X.shape[0]))
        self._solve(X.T @ X, X.T @ y, float(y @ y), X.shape[0], lam, radius)
        self.rows = (readonly(X.view()), readonly(y.view()))

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
        A, b, c = validate_statistics(A, b, c, n)
        problem = cls.__new__(cls)
        problem._solve(A, b, c, n, lam, radius)
        problem.rows = None
        return problem

    @property
    def largest_row_norm(self) -> float | None:
        """max ‖x_i‖₂ when the problem keeps its rows; ``None`` from statistics (evaluation only)."""
        return None if self.rows is None else float(np.linalg.norm(self.rows[0], axis=1).max())

    def _solve(
        self, A: NDArray[np.float64], b: NDArray[np.float64], c: float, n: int, lam: float, radius: float | None
    ) -> None:
        """Keep the statistics and solve θ*: the constructors' shared path."""
        super().__init__(n, A.shape[0], lam, radius)
        self.A = readonly((A + A.T) / 2)
        self.b = readonly(np.asarray(b, dtype=np.float64))
        self.c = float(c)
        # Q = A/n + λI is the Hessian of L: R(θ) = ½δᵀQδ + ∇L(θ*)ᵀδ exactly, δ = θ − θ*.
        self.hessian = readonly(self.A / self.n + lam * np.eye(self.p))
        self._unconstrained = readonly(np.asarray(np.linalg.solve(self.hessian, self.b / self.n), dtype=np.float64))
        self._unconstrained_norm = float(np.linalg.norm(self._unconstrained))
        self._solve_on_ball()

    def _solve_on_ball(self) -> None:
        """θ* over C from the unconstrained minimiser: itself when it lies in C, else a trust-region solve."""
        unconstrained = self._unconstrained
        if self._unconstrained_norm <= self.norm_bound:
            self._theta_star = readonly(unconstrained)
            self._gradient_star = np.zeros(self.p)
        else:
            self._theta_star = readonly(solve_trust_region(self.hessian, self.b / self.n, self.norm_bound))
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

    def _at_lambda(self, lam: float) -> RidgeProblem:
        problem = RidgeProblem.from_statistics(self.A, self.b, self.c, self.n, lam)
        problem.rows = self.rows
        return problem

    def with_radius(self, radius: float | None) -> RidgeProblem:
        problem = copy.copy(self)
        Problem.__init__(problem, self.n, self.p, self.lam, radius)
        problem.__dict__.pop("zero_risk", None)
        problem.__dict__.pop("_sphere_risk", None)
        problem._solve_on_ball()
        return problem

    @staticmethod
    def gradient_gap(radius: float) -> float:
        """S(R) = max_φ [R sin φ + 2 cos(φ/2)] = 2√(1 − s²)(Rs + 1), s = sin(φ/2) = 2R/(1 + √(1 + 8R²)), between R + √2
        and R + 2 (docs/mathematics.md#the-gradient-gap). [derived]

        Two rows' squared-loss gradients differ at θ by (xxᵀ − x′x′ᵀ)θ − (yx − y′x′): for unit rows at angle φ the
        matrix has norm sin φ and the vector at most 2 max(cos(φ/2), sin(φ/2)); shorter rows do no better.
        """
        s = 2.0 * radius / (1.0 + math.sqrt(1.0 + 8.0 * radius * radius))
        return 2.0 * math.sqrt(1.0 - s * s) * (radius * s + 1.0)

    @classmethod
    def risk_change_within(cls, radius: float, reach: float) -> float:
        """B(d) = d·S(√(R² − d²/4)) for d = ``reach`` ≤ √2·R, min(d, 2R)·S(R/√2) beyond
        (docs/mathematics.md#the-clipped-test). [derived]

        The loss gap h between two rows is quadratic, so h(θ) − h(θ′) is its gradient at the midpoint m times θ − θ′,
        and ‖m‖² ≤ R² − ‖θ − θ′‖²/4 when both lie in the ball. B increases up to √2·R (there S(r) > (R² − r²)/r
        outweighs the midpoint's pull towards the centre) and is at most min(d, 2R)·S(R/√2) past it.
        """
        if reach <= math.sqrt(2.0) * radius:
            return reach * cls.gradient_gap(math.sqrt(radius * radius - reach * reach / 4.0))
        return min(reach, 2.0 * radius) * cls.gradient_gap(radius / math.sqrt(2.0))

    @classmethod
    def risk_change_formula(cls, radius: float, reach: float) -> str:
        if reach <= math.sqrt(2.0) * radius:
            return "√(2α/λ)·S(√({R}² − α/(2λ)))"
        return "min(√(2α/λ), 2{R})·S({R}/√2)"

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
