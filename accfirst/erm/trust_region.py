"""Exact solution of the trust-region subproblem behind covariance perturbation.

docs/mathematics.md#private-hypothesis-generators: minimise ½θᵀHθ − gᵀθ subject to ‖θ‖₂ ≤ r, with H symmetric and
possibly indefinite. Through the eigendecomposition H = V diag(λ) Vᵀ the optimum is θ(μ) = V (Vᵀg)/(λ + μ) for the
smallest μ ≥ max(0, −λ_min) that makes ‖θ(μ)‖ ≤ r, with equality whenever μ > 0 (Moré & Sorensen's characterisation).
The "hard case" (g orthogonal to the bottom eigenspace) adds a multiple of the bottom eigenvector to reach the boundary.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import lapack
from scipy.optimize import brentq

# Eigenvalues within this (relative) distance of λ_min belong to the bottom eigenspace.
EIGENVALUE_TOLERANCE = 1e-12
# Components of g along the bottom eigenspace below this (relative) size count as zero.
HARD_CASE_TOLERANCE = 1e-10


def trust_region_objective(H: NDArray[np.float64], g: NDArray[np.float64], theta: NDArray[np.float64]) -> float:
    """½θᵀHθ − gᵀθ."""
    return float(0.5 * theta @ H @ theta - g @ theta)


def interior_solution(
    H: NDArray[np.float64], g: NDArray[np.float64], radius: float
) -> tuple[bool, NDArray[np.float64] | None]:
    """(H ≻ 0, H⁻¹g if that lies in the ball else ``None``), by one Cholesky factorisation.

    H⁻¹g is the exact optimum whenever it exists; when H ≻ 0 but ‖H⁻¹g‖ > r the
    optimum lies on the sphere. Much cheaper than an eigendecomposition.
    """
    factor, info = lapack.dpotrf(H, lower=False, clean=False, overwrite_a=False)
    if info != 0:
        return False, None
    theta, info = lapack.dpotrs(factor, g, lower=False)
    if info != 0 or not np.all(np.isfinite(theta)):
        return False, None
    return True, (theta if float(np.linalg.norm(theta)) <= radius else None)


def has_negative_minor(H: NDArray[np.float64]) -> bool:
    """A negative diagonal entry or 2×2 principal minor: proof that λ_min(H) < 0."""
    diagonal = np.diag(H)
    return bool(np.any(diagonal < 0) or np.any(np.outer(diagonal, diagonal) - H * H < 0))


def shifted_cholesky_fails(H: NDArray[np.float64]) -> bool:
    """Cholesky of H + τI fails, τ = 1e-9‖H‖_F: proof that λ_min(H) < 0.

    Cholesky succeeds on any matrix whose smallest eigenvalue exceeds its rounding
    error, which is far below τ; so a failure means λ_min(H) ≤ −τ.
    """
    shift = 1e-9 * float(np.linalg.norm(H))
    _, info = lapack.dpotrf(H + shift * np.eye(H.shape[0]), lower=False, clean=False)
    return int(info) != 0


def solve_trust_region(H: NDArray[np.float64], g: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """argmin_{‖θ‖ ≤ radius} ½θᵀHθ − gᵀθ, exactly (docs/mathematics.md#private-hypothesis-generators).

    Parameters
    ----------
    H : (p, p) symmetric matrix, any inertia.
    g : (p,) vector.
    radius : r > 0.
    """
    _, theta = interior_solution(H, g, radius)
    if theta is not None:
        return theta
    eigenvalues, V = np.linalg.eigh(H)
    a = V.T @ g
    lam_min = float(eigenvalues[0])
    scale = max(1.0, float(np.max(np.abs(eigenvalues))))
    bottom = eigenvalues - lam_min <= EIGENVALUE_TOLERANCE * scale
    g_norm = float(np.linalg.norm(a))
    mu_low = max(0.0, -lam_min)

    if lam_min > 0 and np.all(np.isfinite(a / eigenvalues)) and np.linalg.norm(a / eigenvalues) <= radius:
        # Cholesky can fail on a barely definite H that eigh still resolves.
        inside: NDArray[np.float64] = V @ (a / eigenvalues)
        return inside

    # Work with the gaps λ_i + μ_low ≥ 0 and the shift ν = μ − μ_low ≥ 0: the pole of
    # the bottom eigenvalue then sits exactly at ν = 0, so a root within an ulp of
    # −λ_min (g nearly orthogonal to the bottom eigenvector) is still resolved.
    gaps = eigenvalues + mu_low
    bottom_weight = float(np.linalg.norm(a[bottom]))
    if bottom_weight <= HARD_CASE_TOLERANCE * max(g_norm, 1e-300):
        rest = ~bottom
        coefficients = np.zeros_like(a)
        coefficients[rest] = a[rest] / gaps[rest]
        rest_norm = float(np.linalg.norm(coefficients))
        if rest_norm <= radius:
            # Hard case: μ = −λ_min, fill the remaining length along the bottom eigenvector.
            index = int(np.flatnonzero(bottom)[0])
            sign = 1.0 if a[index] >= 0 else -1.0
            coefficients[index] = sign * math.sqrt(max(radius**2 - rest_norm**2, 0.0))
            return V @ coefficients

    def coefficients_at(nu: float) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.divide(a, gaps + nu, out=np.zeros_like(a), where=a != 0)

    def secular(nu: float) -> float:
        # 1/‖θ(ν)‖ − 1/r is nearly linear in ν: a well-conditioned root find.
        norm = float(np.linalg.norm(coefficients_at(nu)))
        return (1.0 / norm if norm > 0 else math.inf) - 1.0 / radius

    if secular(0.0) >= 0:
        # μ = μ_low = 0 with ‖H⁺g‖ ≤ r: a (positive semi-definite) interior optimum.
        return V @ coefficients_at(0.0)
    # At ν = ‖g‖/r every |a_i|/(gap_i + ν) ≤ |a_i|/ν, so ‖θ(ν)‖ ≤ r: a bracket, widened
    # while rounding still leaves the norm a hair above r.
    nu_high = g_norm / radius
    while secular(nu_high) < 0:
        nu_high *= 1 + 1e-8
    nu = brentq(secular, 0.0, nu_high, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    theta = V @ coefficients_at(nu)
    # μ > 0: the optimum lies on the sphere; remove the root finder's last rounding.
    return theta * (radius / float(np.linalg.norm(theta)))
