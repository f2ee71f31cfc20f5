"""What an excess risk α allows on one dataset, in a loss a stakeholder knows (evaluation only)
(docs/mathematics.md#the-two-learning-problems).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accfirst.datasets import PrepReport
from accfirst.erm.problem import Problem
from accfirst.erm.ridge import RidgeProblem
from accfirst.erm.trust_region import solve_trust_region
from accfirst.interpret.epsilon import significant
from accfirst.validation import validate_alpha


@dataclass(frozen=True)
class AlphaMeaning:
    """What an excess risk α allows on one dataset, in a loss a stakeholder knows.

    Ridge: the mean squared error on the training rows; ``baseline`` and ``worst`` are the
    root-mean-squared errors of θ* and of the worst model with excess risk ≤ α, in the
    target's units (``unit``). Logistic: the average log-loss on the training rows, in nats
    per row (``unit`` is "nats"); a model that predicts 50/50 everywhere scores ln 2 ≈ 0.693.
    ``exact`` says whether ``worst`` is attained (ridge) or an upper bound (logistic).
    """

    task: str
    alpha: float
    baseline: float
    worst: float
    unit: str
    exact: bool


def alpha_meaning(
    problem: Problem, alpha: float, report: PrepReport | None = None, target_name: str = "the target"
) -> AlphaMeaning:
    """The largest loss of a model with excess risk ≤ α, next to the exact model's (evaluation only).

    The excess risk is measured on the regularised objective (docs/mathematics.md#the-two-learning-problems), so a model
    can fit the data worse than θ* by more than α where its smaller norm pays part of the difference. Ridge: the largest
    increase of the training MSE over {θ : R(θ) ≤ α} is attained; with H = A/n + λI = VΛVᵀ and u = Λ^{1/2}Vᵀ(θ − θ*), it
    is the maximum of Σ (σ_i/Λ_i)u_i² − 2λ Σ (Vᵀθ*)_i u_i/√Λ_i over ‖u‖² ≤ 2α (σ_i = Λ_i − λ), a trust-region problem
    solved exactly. The scale comes back through ``report.target_scale`` (MSE × scale²); the units are those of the
    target after ``log(1 + y)`` when that was applied, and rows clipped by "clip" scaling count at their clipped value.
    Logistic: strong convexity gives ‖θ − θ*‖ ≤ √(2α/λ), so the log-loss rises by at most α + (λ/2)(‖θ*‖² − (‖θ*‖ −
    √(2α/λ))₊²). Reading θ* and the data, this is evaluation only, not private.

    Parameters
    ----------
    problem : the ERM problem of the training rows.
    alpha : the excess risk α > 0.
    report : the preparation record, to express ridge errors in the target's units; ``None``
        keeps the prepared scale.
    target_name : the target column, named in ``unit``.
    """
    alpha = validate_alpha(alpha)
    theta_star = problem.theta_star
    lam = problem.lam
    data_loss = float(problem.loss(theta_star)) - lam / 2 * float(theta_star @ theta_star)
    if isinstance(problem, RidgeProblem):
        scale = 1.0 if report is None or report.target_scale is None else report.target_scale
        log_target = report is not None and report.log1p_target
        unit = f"log(1 + {target_name})" if log_target else target_name
        baseline_mse = 2 * data_loss
        increase = _largest_mse_increase(problem, alpha)
        return AlphaMeaning(
            "ridge", alpha, scale * math.sqrt(baseline_mse), scale * math.sqrt(baseline_mse + increase), unit, True
        )
    reach = math.sqrt(2 * alpha / lam)
    norm = float(np.linalg.norm(theta_star))
    increase = alpha + lam / 2 * (norm**2 - max(norm - reach, 0.0) ** 2)
    return AlphaMeaning("logistic", alpha, data_loss, data_loss + increase, "nats", False)


def _largest_mse_increase(problem: RidgeProblem, alpha: float) -> float:
    """max {MSE(θ) − MSE(θ*) : R(θ) ≤ α} for ridge, exactly (see ``alpha_meaning``)."""
    curvature, V = np.linalg.eigh(problem.hessian)
    weight = np.maximum(curvature - problem.lam, 0.0) / curvature
    pull = problem.lam * (V.T @ problem.theta_star) / np.sqrt(curvature)
    # Maximise uᵀDu − 2 pullᵀu ⇔ minimise ½uᵀ(−2D)u − (−2 pull)ᵀu over the ball ‖u‖ ≤ √(2α).
    u = solve_trust_region(np.diag(-2 * weight), -2 * pull, math.sqrt(2 * alpha))
    return float(u @ (weight * u) - 2 * pull @ u)


def describe_alpha(meaning: AlphaMeaning) -> str:
    """One sentence saying what α allows on this data (``alpha_meaning``), for the α control."""
    if meaning.task == "ridge":
        return (
            f"On this data, an excess risk of α = {meaning.alpha:g} lets the model's typical error on the training "
            f"rows (root-mean-squared, in {meaning.unit}) grow from {significant(meaning.baseline)} for the exact "
            f"model to at most {significant(meaning.worst)}."
        )
    return (
        f"On this data, an excess risk of α = {meaning.alpha:g} lets the model's average log-loss on the training "
        f"rows grow from {meaning.baseline:.3f} for the exact model to at most {meaning.worst:.3f} nats per row "
        f"(predicting 50/50 everywhere scores {math.log(2):.3f})."
    )
