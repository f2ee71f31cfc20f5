"""Predicted ex-post ε after a change of α, λ, the radius or the number of rows: the scaling laws the
guidance's fixes rest on (docs/mathematics.md#the-guidances-predictions).

docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#private-hypothesis-generators,
docs/mathematics.md#noise-reduction, docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#calibrations,
docs/mathematics.md#a-public-norm-bound. The ex-post ε of noise reduction has two parts: the test's ε_A = c·Δ_R/α (c =
``calibration_constant(T, γ, preset)``, Δ_R = (ρR + 1)²/n for ridge, 2ρR/n for logistic, R the feasible radius: M = 1/√λ
or √(2 ln 2/λ), or a public radius; ρ the row bound, docs/mathematics.md#rows-of-small-euclidean-norm) and the level ε_t at which the released model first passed the test. A fix changes
α, λ, R or n; its predicted median ε scales the measured testing part exactly and the generation part by a scaling law
of the generator:

- output perturbation: the noise is Lap(Δ_θ/ε) and the excess risk is about quadratic in it,
  ½ξᵀ∇²Lξ with E‖ξ‖² = 2p(Δ_θ/ε)², so the level that reaches risk ∝ α is
  ε ∝ Δ_θ·√((κ + pλ)/α), κ the data term's curvature tr(A/n) (ridge; ¼ of it for logistic).
  It is not public; rows with ‖x‖₁ ≤ 1 have ‖x‖₂² between ‖x‖₁²/p and 1, and the lower end,
  κ = 1/p (logistic 1/(4p)), predicted the reruns best (within 5%; the upper end ran 7–12% low);
- covariance perturbation: on small data the level is set by a cliff rather than by α: while
  the noise's spectral norm, about 2√p·(4/ε)/n, exceeds the smallest curvature λ of H, the
  noisy problem is indefinite and its solution lies on the sphere. Below 2ε_c,
  ε_c = 8√p/(nλ), the measured level scales with ε_c (∝ 1/(nλ)) and not with α; above it the
  quadratic law ε ∝ 1/√α holds as for output perturbation. A small public radius R also
  bounds the risk of those sphere solutions and can remove the cliff altogether (then ε_t
  drops far); the prediction keeps the measured level and is an upper estimate (``Fix.at_most``). A larger α
  below the cliff is an upper estimate for the same reason: a sphere solution whose risk the larger α admits
  passes at the first levels (``below_cliff``);
- n·k rows from the same population: every part scales as 1/k (Δ_R, Δ_θ and the noise on
  A/n all carry 1/n).

The radius the runs used is the median of their released radii (M, R₀, a public or a private
radius, docs/mathematics.md#a-public-norm-bound, docs/mathematics.md#a-private-radius). With a private radius
(``radius_mode="private"``) a prediction re-plans it at the new setting with the rule of
docs/mathematics.md#a-private-radius and adds its ε_R; the radius moves with the rule's margin around the norm the
released radii imply (their median less the margin; the rule's guess when none was bought).

These laws were checked against reruns (``benchmarks/bench_guidance.py``). The guidance reads
only public constants (n, p, λ, R, α, γ, T) and the runs' released ε and radii: post-processing,
no further look at the data.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from accfirst.erm.generators import CovariancePerturbation, default_generator_name
from accfirst.erm.problem import Problem
from accfirst.erm.radius import radius_margin
from accfirst.erm.shape import ProblemShape
from accfirst.mechanisms.calibration import clips_query
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import feasible_problem, run_rows
from accfirst.methods.radius import RadiusPlan, plan_radius
from accfirst.methods.registry import METHODS
from accfirst.methods.relative import RelativeTarget, scale_plan
from accfirst.validation import validate_alpha, validate_positive


@dataclass(frozen=True)
class Constants:
    """The public constants a prediction starts from or arrives at."""

    alpha: float
    lam: float
    radius: float
    n: float


def feasible_radius(problem: Problem, lam: float, radius: float | None, mode: str = "none") -> float:
    """R of the feasible set at λ before any private radius (docs/mathematics.md#a-public-norm-bound,
    docs/mathematics.md#the-free-radius).

    The public radius (at most M(λ)) if given, else M(λ); with ``mode`` "free" or "private", at most R₀(λ).
    """
    bound = problem.implied_norm_bound(lam)
    ceiling = bound if radius is None else min(radius, bound)
    return ceiling if mode == "none" else min(ceiling, problem.free_radius(lam))


def runs_radius(problem: Problem, summary_row: pd.Series | dict[str, Any], options: SearchOptions) -> float:
    """The radius the runs of ``summary_row`` used: their median released radius, else the mode's ceiling."""
    used = float(dict(summary_row).get("median_norm_bound", math.nan))
    if math.isfinite(used):
        return used
    return feasible_radius(problem, problem.lam, problem.radius, options.radius_mode)


def _margin(plan: RadiusPlan) -> float:
    return radius_margin(plan.sensitivity, plan.level, plan.beta, plan.noise)


def private_radius(
    problem: Problem,
    summary_row: dict[str, Any],
    gamma: float,
    options: SearchOptions,
    ceiling: float,
    after: Constants,
    planned: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> tuple[float, float]:
    """(R, ε_R): the private radius a run at ``after`` would use and what it adds, re-planned
    (docs/mathematics.md#a-private-radius).

    The norm is the runs' median radius less their plan's margin when they bought one (scaled with
    R₀ when λ changes), else the rule's guess; the new radius is that norm plus the new plan's
    margin, at most ``ceiling``. A radius is planned at the runs' α and γ, and at ``after.alpha``; ``planned`` gives
    the (α, γ) it was and would be planned at instead (a relative target plans it at κ times the floor, with γ − β_S).
    """
    method = str(summary_row["method"])
    private = dataclasses.replace(options, radius_mode="private")
    (alpha_then, gamma_then), (alpha_next, gamma_next) = planned or (
        (float(summary_row["alpha"]), gamma),
        (after.alpha, gamma),
    )
    shape = ProblemShape(type(problem), max(round(after.n), 1), problem.p, after.lam, ceiling, problem.row_bound)
    plan = plan_radius(shape, method, alpha_next, gamma_next, private)
    if plan.skipped:
        return ceiling, 0.0
    norm = plan.guess
    if options.radius_mode == "private" and float(summary_row.get("median_eps_radius", 0.0)) > 0:
        start = feasible_radius(problem, problem.lam, problem.radius, "private")
        before = plan_radius(problem.shape.with_radius(start), method, alpha_then, gamma_then, options)
        # The norm keeps its share of the free radius when λ changes (R₀ ∝ 1/√λ).
        shrink = problem.free_radius(after.lam) / problem.free_radius(problem.lam)
        norm = max(runs_radius(problem, summary_row, options) - _margin(before), 0.0) * shrink
    return min(ceiling, norm + _margin(plan)), plan.cost


def cliff_epsilon(p: int, n: float, lam: float) -> float:
    """ε_c = 8√p/(nλ): covariance perturbation's noise on H has spectral norm ≈ λ here (see the module)."""
    return 8 * math.sqrt(p) / (n * lam)


def below_cliff(problem: Problem, summary_row: pd.Series | dict[str, Any], options: SearchOptions) -> bool:
    """Whether the measured generation part sits below covariance perturbation's cliff, 2ε_c (the module's law):
    then a prediction that keeps the measured level is an upper estimate."""
    generator = options.generator or default_generator_name(problem)
    generation = float(dict(summary_row)["median_eps_hypothesis"])
    return generator == CovariancePerturbation.name and generation <= 2 * cliff_epsilon(
        problem.p, problem.n, problem.lam
    )


def generation_factor(problem: Problem, generator: str, measured: float, before: Constants, after: Constants) -> float:
    """How the generation part ε_t scales from ``before`` to ``after`` (the module's laws)."""
    p = problem.p
    rows = before.n / after.n
    if generator == CovariancePerturbation.name:
        cliff = cliff_epsilon(p, before.n, before.lam)
        if measured <= 2 * cliff:
            return cliff_epsilon(p, after.n, after.lam) / cliff
        return rows * math.sqrt(before.alpha / after.alpha * before.lam / after.lam)
    # The data term's curvature: the loss's (logistic: σ' ≤ ¼) per unit of tr(A/n), taken as 1/p (module doc).
    kappa = problem.loss_curvature / p
    shape = problem.shape
    sensitivity = shape.output_sensitivity_on(after.radius, after.n, after.lam) / shape.output_sensitivity_on(
        before.radius, before.n, before.lam
    )
    curvature = math.sqrt((kappa + p * after.lam) / (kappa + p * before.lam))
    return sensitivity * curvature * math.sqrt(before.alpha / after.alpha)


def testing_part(summary_row: pd.Series | dict[str, Any]) -> float:
    """The testing part of a method's ε as measured: noise reduction's ε_A = c·Δ_R/α
    (docs/mathematics.md#exact-calibrations), the doubling tests."""
    return float(dict(summary_row)["median_eps_test"])


def predict_epsilon(
    problem: Problem,
    summary_row: pd.Series | dict[str, Any],
    gamma: float,
    options: SearchOptions,
    *,
    alpha: float | None = None,
    lam: float | None = None,
    radius: float | None = None,
    rows_factor: float = 1.0,
    radius_mode: str | None = None,
    kappa: float | None = None,
) -> float:
    """The predicted median ex-post ε of ``summary_row``'s method after a change (module docstring).

    The preparation's ε (docs/mathematics.md#preparing-the-data-privately) is part of every run's total and stays as it
    was: a change of α, λ or the radius does not touch it, and more rows are assumed prepared at the same ε. At a
    relative target (docs/mathematics.md#a-relative-accuracy-target) the private bound on R(0) is part of it too: at a
    new κ (``kappa``) its ε_S and margin are the plan's, and α = κ·Ŝ moves with κ and with the margin; for the other
    changes ε_S is kept as measured (more rows would lower it: the prediction is then an upper estimate).

    Parameters
    ----------
    problem : the problem the runs were made on (only its public constants are read).
    summary_row : the method's row of ``interpret.summarise_runs`` ("nr" or "doubling").
    gamma, options : the runs' γ and search options.
    alpha, lam, radius : new values (``None`` keeps the runs' own).
    rows_factor : k for n·k rows from the same population.
    radius_mode : a new ``SearchOptions.radius_mode`` (``None`` keeps the runs' own).
    kappa : a new relative target κ (the runs' must be relative); α moves in proportion.
    """
    row = dict(summary_row)
    problem = run_rows(problem, options.calibration)  # the row bound the runs used
    alpha_now = float(row["alpha"])
    scale_part = float(row.get("median_eps_scale", 0.0))
    planned = None
    if not math.isnan(float(row.get("kappa", math.nan))):
        # Ŝ is a noisy R(0) less the plan's margin: at κ′ the plan (its ε_S and margin) changes and α = κ′·Ŝ′ with
        # Ŝ′ = Ŝ + margin − margin′ (the same R(0), the same typical noise). The radius is planned at κ·floor.
        ceiling = feasible_problem(problem, str(row["method"]), options)
        kappas = (float(row["kappa"]), float(row["kappa"]) if kappa is None else kappa)
        plans = [scale_plan(ceiling, RelativeTarget(k), gamma, options) for k in kappas]
        planned = ((plans[0].kappa * plans[0].floor, plans[0].gamma), (plans[1].kappa * plans[1].floor, plans[1].gamma))
        if kappa is not None:
            scale = alpha_now / plans[0].kappa + plans[0].margin - plans[1].margin
            alpha = kappa * max(scale, plans[1].floor)
            scale_part = plans[1].epsilon
    mode = options.radius_mode if radius_mode is None else radius_mode
    before = Constants(alpha_now, problem.lam, runs_radius(problem, row, options), problem.n)
    lam_new = problem.lam if lam is None else validate_positive("lam", lam)
    radius_new = problem.radius if radius is None else validate_positive("radius", radius)
    after = Constants(
        alpha_now if alpha is None else validate_alpha(alpha),
        lam_new,
        feasible_radius(problem, lam_new, radius_new, mode),
        problem.n * validate_positive("rows_factor", rows_factor),
    )
    radius_part = 0.0
    if mode == "private" and METHODS[str(row["method"])].uses_radius:
        released, radius_part = private_radius(problem, row, gamma, options, after.radius, after, planned)
        after = dataclasses.replace(after, radius=released)
    shape, clips = problem.shape, clips_query(options.calibration)
    testing_scale = (
        shape.test_sensitivity_on(after.radius, after.n, after.lam, after.alpha, clipped=clips)
        / shape.test_sensitivity_on(before.radius, before.n, before.lam, before.alpha, clipped=clips)
        * before.alpha
        / after.alpha
    )
    generation = float(row["median_eps_hypothesis"])
    generator = options.generator or default_generator_name(problem)
    return (
        problem.prep_epsilon
        + scale_part
        + radius_part
        + testing_part(row) * testing_scale
        + generation * generation_factor(problem, generator, generation, before, after)
    )
