"""The theory approach: invert a utility theorem to pick one ε up front (SPEC §4).

It promises only *expected* excess risk α, never a high-probability bound.
"""

from __future__ import annotations

import math

from accfirst.erm.generators import CovariancePerturbation, HypothesisGenerator, make_generator
from accfirst.erm.problems import LogisticProblem, Problem
from accfirst.validation import validate_alpha


def theory_epsilon(problem: Problem, alpha: float, generator: str | HypothesisGenerator | None = None) -> float:
    """E: the ε at which the utility theorem's expected excess risk equals α (SPEC §4).

    covariance (ridge, Thm 3.1): E = 4√2(2√(p/λ) + p/λ)/(nα);
    output (logistic, Thm 3.3): the positive root of 2√2p/(nλε) + 4p²/(n²λε²) = α;
    output (ridge, from Δ_θ of SPEC §3): E = Δ_θ √(p(1/n + λ)/α).
    """
    alpha = validate_alpha(alpha)
    gen = make_generator(problem, generator)
    n, p, lam = problem.n, problem.p, problem.lam
    if isinstance(gen, CovariancePerturbation):
        return 4 * math.sqrt(2) * (2 * math.sqrt(p / lam) + p / lam) / (n * alpha)
    if isinstance(problem, LogisticProblem):
        # a·u² + b·u − α = 0 in u = 1/ε; the rationalised root avoids cancellation.
        a = 4 * p**2 / (n**2 * lam)
        b = 2 * math.sqrt(2) * p / (n * lam)
        return (b + math.sqrt(b * b + 4 * a * alpha)) / (2 * alpha)
    return problem.theta_sensitivity * math.sqrt(p * (1.0 / n + lam) / alpha)
