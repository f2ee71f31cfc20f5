"""One run of a registered method, with everything that comes before it and all it paid (SPEC §9, §19–§21).

Before a method runs, the public quantities it needs are fixed: the radius of the feasible set
it runs on (the problem's own, the free radius R₀ of SPEC §19.0, which holds for every dataset
and reads none, or a private radius released below it, SPEC §19: ``accfirst.methods.radius``).
After it runs, its record gets the parts of the bill that are not the method's own: the private
radius's ε_R, and the preparation of the rows (SPEC §20.3, paid once per prepared table and
shared by every run on it), so that every number shown is the whole bill.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from accfirst.erm.problems import Problem
from accfirst.methods.options import SearchOptions
from accfirst.methods.radius import RadiusStep, radius_step
from accfirst.methods.registry import METHODS, validate_methods
from accfirst.result import RunResult


def feasible_problem(problem: Problem, method: str, options: SearchOptions) -> Problem:
    """The problem ``method`` runs on under ``options.radius_mode`` before any private radius: R₀ when asked (SPEC §19.0).

    R₀ bounds ‖θ*‖ for every dataset, so θ* and every guarantee stay as they were; only the
    sensitivities that grow with the radius shrink. A public radius smaller than R₀ stays.
    "free" and "private" start here ("private" may release a smaller radius below it); methods
    that use no radius (``Method.uses_radius``) run on the problem as it is.
    """
    if options.radius_mode == "none" or not METHODS[method].uses_radius:
        return problem
    free = problem.free_radius(problem.lam)
    return problem if problem.norm_bound <= free else problem.with_radius(free)


def run_step(problem: Problem, method: str, alpha: float, gamma: float, options: SearchOptions) -> RadiusStep:
    """The radius ``method`` works on in a run on ``problem`` (``accfirst.methods.radius.RadiusStep``); no data read."""
    validate_methods([method], options)
    return radius_step(feasible_problem(problem, method, options), method, alpha, gamma, options)


def run_method(
    problem: Problem,
    method: str,
    alpha: float,
    gamma: float,
    rng: np.random.Generator,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """One run of the registered ``method`` at excess risk α and failure probability γ, with its whole bill.

    The run's ``eps_total`` includes a private radius's ``eps_radius`` (SPEC §19.3), the preparation's
    ``problem.prep_epsilon`` and its ``delta`` the preparation's δ (SPEC §20.3); ``prep_mode`` records how
    the rows were prepared.
    """
    step = run_step(problem, method, alpha, gamma, options)
    run_on = step.problem(rng)
    result = step.bill(METHODS[method].run(run_on, alpha, step.gamma, rng, step.options, exact), run_on)
    return dataclasses.replace(
        result,
        eps_prep=problem.prep_epsilon,
        prep_mode=problem.prep_mode,
        eps_total=result.eps_total + problem.prep_epsilon,
        delta=min(result.delta + problem.prep_delta, 1.0),
    )
