"""Many runs → one tidy results frame (docs/mathematics.md#what-a-run-reports).

One row per (method, target, trial) with the docs/mathematics.md#what-a-run-reports columns; a target is an excess
risk α, a relative target κ (docs/mathematics.md#a-relative-accuracy-target) or a target in the units people read, R²
(ridge) or accuracy (logistic), certified by noise reduction with λ chosen from a public grid
(docs/mathematics.md#a-target-in-the-units-people-read). Each row's randomness comes from its own
seed derived from (seed, method, target, trial), so a row does not depend on which other rows are run: the explorer's α
= 0.05 row and a sweep's α = 0.05 row agree for the same seed. The methods come from the registry
(``accfirst.methods.registry``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from accfirst.erm.problem import Problem
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained, quality_target
from accfirst.errors import AccFirstError
from accfirst.methods.certified import plan_search
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import check_certified, feasible_problem
from accfirst.methods.pipeline import declared_bound as declared_bound  # re-exported: the public entry points
from accfirst.methods.pipeline import search as search
from accfirst.methods.registry import method_position, validate_methods
from accfirst.methods.relative import RelativeTarget, scale_plan
from accfirst.parallel.pool import Cancelled, still_wanted
from accfirst.result import RunResult
from accfirst.validation import release_seed, validate_alpha, validate_count, validate_gamma

COLUMNS = (
    "method",
    "generator",
    "calibration",
    "noise",
    "delta",
    "delta_prep",
    "alpha",
    "kappa",
    "scale",
    "gamma",
    "lam",
    "n",
    "p",
    "T",
    "trial",
    "stop_index",
    "prep_mode",
    "eps_prep",
    "eps_radius",
    "eps_scale",
    "eps_test",
    "eps_hypothesis",
    "eps_total",
    "exp_eps_total",
    "excess_risk",
    "r0",
    "success",
    "fallback",
    "nothing_released",
    "theta_norm",
    "norm_bound",
    "target",
    "goal",
    "quality",
    "stopped",
    "refused",
)
# How long a run took, in the rows ``run_cells`` hands its caller (a pool's worker hands them to the page that
# measures its work): a local diagnostic that depends on the data, never a column of a released frame
# (docs/mathematics.md#what-an-observer-sees).
TIMING = "seconds"
# The released model of a run, in the same rows: the page that ran it scores it on held-out rows (evaluation only); no
# results frame keeps it.
MODEL = "theta"


# A relative target's cells carry this fourth word in their spawn key, so that κ = 0.1 and α = 0.1 never share noise;
# a target in R² or accuracy its own word (docs/mathematics.md#a-target-in-the-units-people-read).
RELATIVE_STREAM = 1
QUALITY_STREAMS = {VarianceExplained.key: 2, Accuracy.key: 3}


def trial_rng(seed: int, method: str, alpha: float | RelativeTarget | QualityTarget, trial: int) -> np.random.Generator:
    """The generator of one (method, target, trial) cell, independent of every other cell (α, κ, R² and accuracy
    cells apart)."""
    key: tuple[int, ...]
    if isinstance(alpha, RelativeTarget):
        key = (method_position(method), round(alpha.kappa * 1e12), trial, RELATIVE_STREAM)
    elif isinstance(alpha, (VarianceExplained, Accuracy)):
        key = (method_position(method), round(alpha.goal * 1e12), trial, QUALITY_STREAMS[alpha.key])
    else:
        key = (method_position(method), round(alpha * 1e12), trial)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def targets(
    alphas: Sequence[float],
    kappas: Sequence[float | RelativeTarget] = (),
    goals: Sequence[QualityTarget] = (),
) -> list[float | RelativeTarget | QualityTarget]:
    """The targets of a batch: each α, then each κ as a ``RelativeTarget`` (a ``RelativeTarget`` is kept as it is),
    then each target in R² or accuracy."""
    relative = [k if isinstance(k, RelativeTarget) else RelativeTarget(k) for k in kappas]
    return [validate_alpha(a) for a in alphas] + relative + list(goals)


def target_key(row: Mapping[str, Any]) -> tuple[str, float]:
    """What identifies a results row's target: ("r2", r) or ("accuracy", a) for a target in the units people read,
    ("kappa", κ) for a relative run, ("alpha", α) otherwise."""
    if row.get("target"):
        return (str(row["target"]), float(row["goal"]))
    kappa = float(row["kappa"])
    return ("alpha", float(row["alpha"])) if math.isnan(kappa) else ("kappa", kappa)


def cell_key(target: float | RelativeTarget | QualityTarget) -> tuple[str, float]:
    """``target_key`` of the rows a cell toward ``target`` makes."""
    if isinstance(target, (VarianceExplained, Accuracy)):
        return (target.key, target.goal)
    if isinstance(target, RelativeTarget):
        return ("kappa", target.kappa)
    return ("alpha", target)


def run_one(
    problem: Problem,
    method: str,
    alpha: float | RelativeTarget,
    gamma: float,
    rng: np.random.Generator,
    *,
    exact: bool = False,
    **options: Any,
) -> RunResult:
    """One run of ``method`` on the docs/mathematics.md#the-epsilon-grid grid (doubling spans the same ε range).

    ``options`` are the fields of ``SearchOptions`` (T, generator, calibration, eps_min,
    eps_max, spacing, noise, delta, radius_mode, radius_epsilon, radius_beta); ``exact`` solves every tested
    level (same output, full trace).
    """
    return search(problem, method, alpha, gamma, rng, SearchOptions.from_keywords(options), exact)


def validate_batch(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int | None,
    options: SearchOptions,
    kappas: Sequence[float | RelativeTarget] = (),
    goals: Sequence[float | QualityTarget] = (),
) -> tuple[tuple[str, ...], list[float | RelativeTarget | QualityTarget], float, int, int]:
    """Check the settings of many runs before any work starts.

    Returns the clean (methods, targets, gamma, trials, seed), the targets being each α, each κ, then each goal as the
    problem's target in R² or accuracy (``targets``); every α's grid, every κ's plan
    (docs/mathematics.md#a-relative-accuracy-target) and every goal's plan (docs/mathematics.md#refusals-that-spend-nothing:
    a plan that refuses is a run's outcome, not an error) is built once, so a bad setting fails here rather than halfway
    through.
    """
    chosen = validate_methods(methods, options)
    target_values = targets(alphas, kappas, [quality_target(problem.name, goal) for goal in goals])
    if not target_values:
        raise AccFirstError("give at least one alpha, kappa or goal")
    gamma = validate_gamma(gamma)
    trials = validate_count("trials", trials, 1)
    seed = release_seed(seed)
    for target in target_values:
        if isinstance(target, RelativeTarget):
            for method in chosen:
                scale_plan(feasible_problem(problem, method, options), target, gamma, options)
        elif isinstance(target, (VarianceExplained, Accuracy)):
            for method in chosen:
                check_certified(method, target)
            plan_search(problem.shape, target, gamma, options, problem.row_bound, problem.target_range)
        else:
            options.grid(problem, target)
    return chosen, target_values, gamma, trials, seed


def trial_result(
    problem: Problem,
    method: str,
    alpha: float | RelativeTarget | QualityTarget,
    trial: int,
    gamma: float,
    seed: int,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """The run of one (method, target, trial) cell with its own seed; ``exact`` solves every tested level (same run)."""
    return search(problem, method, alpha, gamma, trial_rng(seed, method, alpha, trial), options, exact)


Cell = tuple[str, float | RelativeTarget | QualityTarget, int]


def run_cells(
    problem: Problem, gamma: float, seed: int, options: SearchOptions, cells: Sequence[Cell]
) -> list[dict[str, object]]:
    """The results rows of ``cells`` (method, target, trial), in order (docs/mathematics.md#what-a-run-reports); a
    target is α, a κ or a target in R² or accuracy.

    Each row also holds the run's ``TIMING``, for the caller's own estimate of what more runs would cost, and its
    released ``MODEL`` (``None`` when nothing was released), for the caller's held-out figures; the frames built from
    the rows keep ``COLUMNS`` only. In a worker of a ``WorkerPool`` it raises ``Cancelled``
    between two runs once its job is cancelled, so a stopped sweep does not keep a core busy.
    """
    rows = []
    for method, alpha, trial in cells:
        if not still_wanted():
            raise Cancelled
        result = trial_result(problem, method, alpha, trial, gamma, seed, options)
        rows.append({**result.to_dict(), "trial": trial, TIMING: result.seconds, MODEL: result.theta})
    return rows


def run_here(
    problem: Problem,
    arguments: tuple[float, int, SearchOptions],
    cells: Sequence[Cell],
    progress: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None = None,
) -> list[dict[str, object]]:
    """The rows of ``cells`` run one by one in this process, ``arguments`` being ``run_cells``' (gamma, seed, options).

    ``progress(done, total)`` is called after each run; once ``should_stop()`` returns True no more run starts.
    """
    rows: list[dict[str, object]] = []
    for cell in cells:
        if should_stop is not None and should_stop():
            break
        rows.extend(run_cells(problem, *arguments, [cell]))
        if progress is not None:
            progress(len(rows), len(cells))
    return rows


def run_trials(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int | None,
    *,
    progress: Callable[[int, int], None] | None = None,
    kappas: Sequence[float | RelativeTarget] = (),
    goals: Sequence[float | QualityTarget] = (),
    **options: Any,
) -> pd.DataFrame:
    """Run every (method, target, trial) and return one row each (docs/mathematics.md#what-a-run-reports,
    docs/mathematics.md#a-relative-accuracy-target, docs/mathematics.md#a-target-in-the-units-people-read).

    The targets are each excess risk in ``alphas``, then each relative target in ``kappas`` (κ in
    (0, 1), or a ``RelativeTarget``): a κ row reports the released α = κ·Ŝ, ``scale`` = Ŝ,
    ``eps_scale`` and ``kappa``; a κ row whose Ŝ showed no signal has ``alpha`` NaN and θ = 0. Then each target in
    the units people read in ``goals``: a share in (0, 1), R² ≥ r on a ridge problem, accuracy ≥ a on a logistic one
    (or a ``VarianceExplained``/``Accuracy``), noise reduction only, λ chosen from the options' ``lambdas`` (``None``:
    the default grid, chosen privately) within their ``ceiling``; such a row reports ``target``, ``goal``, the λ
    chosen, its in-sample ``quality`` (evaluation only) and ``refused`` when it was refused before reading.
    ``options`` are the fields of ``SearchOptions`` (T, generator, calibration, eps_min,
    eps_max, spacing, noise, delta, radius_mode, radius_epsilon, radius_beta, test_budget), the same for every
    run. Fallback rows keep ``eps_total = inf``. ``progress(done, total)`` is called after each run. Arguments
    are validated before any work starts. ``seed=None`` draws the runs' randomness from the operating system
    (128 bits, never shown: a release on real data); a seed makes them repeatable, and anyone with it can
    replay their noise.
    """
    search_options = SearchOptions.from_keywords(options)
    chosen, target_values, gamma, trials, seed = validate_batch(
        problem, alphas, gamma, methods, trials, seed, search_options, kappas, goals
    )
    cells = [(method, target, trial) for method in chosen for target in target_values for trial in range(trials)]
    return pd.DataFrame(run_here(problem, (gamma, seed, search_options), cells, progress), columns=list(COLUMNS))
