"""The theory approach: invert a utility theorem to pick one ε up front (docs/mathematics.md#the-theory-approach,
docs/mathematics.md#a-public-norm-bound).

It promises only *expected* excess risk α, never a high-probability bound.
"""

from __future__ import annotations

import math

from accfirst.erm.generators import CovariancePerturbation, HypothesisGenerator, generator_class
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.validation import checked, validate_alpha


@checked(alpha=validate_alpha)
def theory_epsilon(
    problem: Problem | ProblemShape, alpha: float, generator: str | HypothesisGenerator | None = None
) -> float:
    """E: the ε at which the utility theorem's expected excess risk equals α (docs/mathematics.md#the-theory-approach,
    docs/mathematics.md#a-public-norm-bound).

    It reads only public constants, so a ``ProblemShape`` will do. With R the radius of the
    feasible set (M unless a public radius is given):
    covariance (ridge, Thm 3.1 with M → R): E = 4√2(2√p·R + p·R²)/(nα);
    output (logistic, Thm 3.3): the positive root of 2√2p/(nλε) + 4p²/(n²λε²) = α;
    output (ridge): see ``ridge_output_epsilon``.
    """
    n, p, lam, R = problem.n, problem.p, problem.lam, problem.norm_bound
    if generator_class(problem, generator) is CovariancePerturbation:
        return 4 * math.sqrt(2) * (2 * math.sqrt(p) * R + p * R**2) / (n * alpha)
    if problem.name == LogisticProblem.name:
        # a·u² + b·u − α = 0 in u = 1/ε.
        return 1 / _positive_root(4 * p**2 / (n**2 * lam), 2 * math.sqrt(2) * p / (n * lam), alpha)
    return ridge_output_epsilon(problem, alpha)


def ridge_output_epsilon(problem: Problem | ProblemShape, alpha: float) -> float:
    """E for ridge with output perturbation: ε = Δ_θ/b for the noise scale b below
    (docs/mathematics.md#the-theory-approach, docs/mathematics.md#a-public-norm-bound).

    Without a radius (R = M), docs/mathematics.md#the-theory-approach (corrected): E[R] ≤ b²(1 + 5pλ), E = Δ_θ√((1 +
    5pλ)/α). With a radius R, the smaller ε of two bounds on E[R], each valid alone [derived]:

    - if R > M/2: ‖θ*‖ ≤ M/2 (so θ* is the unconstrained optimum) and the argument of
      docs/mathematics.md#the-theory-approach with P(projected) ≤ P(‖ξ‖ > R − M/2) ≤ 2pb²/(R − M/2)² gives b²(1 + pλ +
      p/(R − M/2)²), which is that section's bound at R = M;
    - for any R: projection onto C does not move θ' = Proj(θ* + ξ) further from θ*, so
      R(θ') ≤ ½(1 + λ)‖ξ‖² + ∇L(θ*)ᵀ(θ' − θ*), and with ∇L(θ*) = −μθ*,
      μ ≤ 1 + λ + 1/R, the last term is at most (μ/2)‖ξ‖² + μR(−θ*ᵀξ/R)₊; in expectation
      (2 + 2λ + 1/R)pb² + ((1 + λ)R + 1)b/√2.
    """
    p, lam, R, M = problem.p, problem.lam, problem.norm_bound, problem.max_norm
    scales = []
    if R > M / 2:
        scales.append(math.sqrt(alpha / (1 + p * lam + p / (R - M / 2) ** 2)))
    if problem.radius is not None:
        scales.append(_positive_root((2 + 2 * lam + 1 / R) * p, ((1 + lam) * R + 1) / math.sqrt(2), alpha))
    return problem.theta_sensitivity / max(scales)


def _positive_root(a: float, b: float, c: float) -> float:
    """The positive root u of a·u² + b·u = c (a, b ≥ 0, c > 0), rationalised against cancellation."""
    return 2 * c / (b + math.sqrt(b * b + 4 * a * c))
