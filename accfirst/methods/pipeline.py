"""One run of a registered method, with everything that comes before it and all it paid
(docs/mathematics.md#what-a-run-reports, docs/mathematics.md#a-private-radius,
docs/mathematics.md#a-relative-accuracy-target).

Before a method runs, the public quantities it needs are fixed: the radius of the feasible set
it runs on (the problem's own, the free radius R₀ of docs/mathematics.md#the-free-radius, which holds for every dataset
and reads none, or a private radius released below it, docs/mathematics.md#a-private-radius:
``accfirst.methods.radius``), and, for a relative target κ, the private lower bound Ŝ of R(0) that turns κ into α = κ·Ŝ
(docs/mathematics.md#a-relative-accuracy-target, ``accfirst.methods.relative``). After it runs, its record gets the
parts of the bill that are not the method's own: the private radius's ε_R, the relative target's ε_S, and the
preparation of the rows (docs/mathematics.md#preparing-the-data-privately, paid once per prepared table and shared by
every run on it), so that every number shown is the whole bill.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

import numpy as np

from accfirst.datasets.prepared import EVALUATION_MODE, PRIVATE_MODE
from accfirst.erm.problem import Problem
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.calibration import clips_query
from accfirst.methods.certified import NOISE_REDUCTION, certified_run
from accfirst.methods.options import SearchOptions
from accfirst.methods.radius import RadiusStep, radius_step
from accfirst.methods.registry import METHODS, validate_methods
from accfirst.methods.relative import RelativeTarget, relative_bound, relative_run
from accfirst.result import RunResult
from accfirst.validation import as_generator, checked, validate_alpha, validate_gamma

#: A problem or its public constants: both carry a row bound.
Rows = TypeVar("Rows", Problem, ProblemShape)

#: What a run can aim at: an excess risk α, a relative target κ, or a target in the units people read.
Target = float | RelativeTarget | QualityTarget


def validate_target(target: object) -> Target:
    """An accuracy target: a ``RelativeTarget``, ``VarianceExplained`` or ``Accuracy`` as it is, or an excess risk
    α > 0 (``AccFirstError`` otherwise)."""
    if isinstance(target, (RelativeTarget, VarianceExplained, Accuracy)):
        return target
    return validate_alpha(target)


#: Why a public radius plays no part in a run toward a target in R² or accuracy.
GRID_RADIUS = "a target in R² or accuracy runs each λ of its grid on the bound M that λ implies"


def check_certified(method: str, target: QualityTarget) -> None:
    """Refuse a method other than noise reduction for a target in R² or accuracy (public facts only)."""
    if method != NOISE_REDUCTION:
        raise AccFirstError(
            f"a target in {target.unit} is certified by noise reduction ({NOISE_REDUCTION!r}), which chooses λ under "
            f"its test; {method!r} takes an excess risk α or a relative target κ"
        )


def run_rows(problem: Rows, calibration: str) -> Rows:
    """The problem (or its shape) with the row bound its runs use (docs/mathematics.md#rows-of-small-euclidean-norm):
    its own ρ, except under a ``calibration`` that keeps the paper's query ("theorem", "paper-code"), whose runs keep
    unit rows (ρ = 1) so that the paper's figures reproduce. Public facts only."""
    if clips_query(calibration) or problem.row_bound == 1.0:
        return problem
    return problem.with_row_bound(1.0)


def feasible_problem(problem: Problem, method: str, options: SearchOptions) -> Problem:
    """The problem ``method`` runs on under ``options.radius_mode`` before any private radius: R₀ when asked
    (docs/mathematics.md#the-free-radius).

    R₀ bounds ‖θ*‖ for every dataset, so θ* and every guarantee stay as they were; only the
    sensitivities that grow with the radius shrink. A public radius smaller than R₀ stays.
    "free" and "private" start here ("private" may release a smaller radius below it); methods
    that use no radius (``Method.uses_radius``) run on the problem as it is. Either way with the row bound of
    ``run_rows``.
    """
    problem = run_rows(problem, options.calibration)
    if options.radius_mode == "none" or not METHODS[method].uses_radius:
        return problem
    free = problem.free_radius(problem.lam)
    return problem if problem.norm_bound <= free else problem.with_radius(free)


def run_step(problem: Problem, method: str, alpha: float, gamma: float, options: SearchOptions) -> RadiusStep:
    """The radius ``method`` works on in a run on ``problem`` at α (``accfirst.methods.radius.RadiusStep``); no data read."""
    check_request(problem, method, options)
    return radius_step(feasible_problem(problem, method, options), method, alpha, gamma, options)


def check_request(problem: Problem, method: str, options: SearchOptions) -> None:
    """Refuse, from public facts alone, what ``method`` cannot serve, and the paper's θ* fallback on a user's table.

    ``fallback="exact"`` releases the exact, non-private θ* when no level passes: it reproduces the paper on
    data generated from public parameters, never on rows prepared from a table (docs/mathematics.md#what-a-failed-run-releases).
    """
    validate_methods([method], options)
    if options.fallback == "exact" and problem.prep_mode in (PRIVATE_MODE, EVALUATION_MODE):
        raise AccFirstError(
            "fallback='exact' releases the exact, non-private model when no level passes: it is for reproducing the "
            "paper on synthetic data, not for a table's rows; use fallback='nothing' (a failed run releases nothing)"
        )


@checked(target=validate_target, gamma=validate_gamma)
def declared_bound(
    problem: Problem, method: str, target: Target, gamma: float, options: SearchOptions
) -> tuple[float, float]:
    """(ℰ̄, δ): the most a run of ``method`` can lose unless it falls back, known before it runs
    (docs/mathematics.md#the-ex-post-filter).

    Noise reduction and doubling: the ex-post loss of halting at the top level; theory:
    its ε = E (pure DP); the Gibbs posterior: its (ε, δ), fixed in advance (ridge only). A
    private radius adds its ε_R (a Gaussian one is inside the Brownian bound), on top of the
    method's worst case on the ceiling, which no released radius exceeds; a relative target:
    ε_S plus the method's bound at the smallest α it can release (docs/mathematics.md#a-relative-accuracy-target). A
    privacy filter admits the run on this bound. Reads no data. The preparation's (ε, δ), part of every run's total, is
    not in it: it is paid once per prepared table (a session charges it as its first round). A target in R² or
    accuracy: the options' ceiling, which its variance, test and generation share.
    """
    if isinstance(target, (VarianceExplained, Accuracy)):
        check_certified(method, target)
        return options.ceiling, 0.0
    if isinstance(target, RelativeTarget):
        check_request(problem, method, options)
        return relative_bound(feasible_problem(problem, method, options), method, target, gamma, options)
    return run_step(problem, method, target, gamma, options).declared_bound()


@checked(alpha=validate_target, gamma=validate_gamma, rng=as_generator)
def search(
    problem: Problem,
    method: str,
    alpha: Target,
    gamma: float,
    rng: np.random.Generator,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """One run of the registered ``method`` at excess risk α (or a ``RelativeTarget`` κ, or a target in R² or accuracy,
    ``VarianceExplained`` or ``Accuracy``: noise reduction only, λ chosen under its test from the options' grid,
    docs/mathematics.md#choosing-λ-under-the-guarantee) and failure probability γ.

    With its whole bill: a private radius's ``eps_radius`` (docs/mathematics.md#a-private-radius) and a relative
    target's ``eps_scale`` (docs/mathematics.md#a-relative-accuracy-target) are part of the run, its ``eps_total``
    includes the preparation's ``problem.prep_epsilon`` and its ``delta`` the preparation's δ, recorded also as
    ``delta_prep`` (docs/mathematics.md#preparing-the-data-privately); ``prep_mode`` records how the rows were prepared.
    """
    if isinstance(alpha, (VarianceExplained, Accuracy)):
        check_certified(method, alpha)
        check_request(problem, method, options)
        result = certified_run(problem, alpha, gamma, rng, options)
    elif isinstance(alpha, RelativeTarget):
        check_request(problem, method, options)
        result = relative_run(feasible_problem(problem, method, options), method, alpha, gamma, rng, options, exact)
    else:
        result = run_step(problem, method, alpha, gamma, options).run(rng, exact)
    return dataclasses.replace(
        result,
        eps_prep=problem.prep_epsilon,
        prep_mode=problem.prep_mode,
        eps_total=result.eps_total + problem.prep_epsilon,
        delta=min(result.delta + problem.prep_delta, 1.0),
        delta_prep=problem.prep_delta,
    )
