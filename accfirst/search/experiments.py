"""Many runs → one tidy results frame (SPEC §9).

One row per (method, α, trial) with the SPEC §9 columns. Each row's randomness
comes from its own seed derived from (seed, method, α, trial), so a row does not
depend on which other rows are run: the explorer's α = 0.05 row and a sweep's
α = 0.05 row agree for the same seed. The methods come from the registry
(``accfirst.methods.registry``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from accfirst.erm.problems import Problem
from accfirst.errors import AccFirstError
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import run_method, run_step
from accfirst.methods.registry import method_position, validate_methods
from accfirst.result import RunResult
from accfirst.validation import as_generator, checked, validate_alpha, validate_count, validate_gamma

COLUMNS = (
    "method",
    "generator",
    "calibration",
    "noise",
    "delta",
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
    "theta_norm",
    "norm_bound",
    "seconds",
)


def trial_rng(seed: int, method: str, alpha: float, trial: int) -> np.random.Generator:
    """The generator of one (method, α, trial) cell, independent of every other cell."""
    alpha_key = round(alpha * 1e12)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(method_position(method), alpha_key, trial)))


@checked(alpha=validate_alpha, gamma=validate_gamma, rng=as_generator)
def search(
    problem: Problem,
    method: str,
    alpha: float,
    gamma: float,
    rng: np.random.Generator,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """One run of the registered ``method`` with ``options`` (``run_one`` with the options as one object).

    The whole bill: see ``accfirst.methods.pipeline.run_method``.
    """
    return run_method(problem, method, alpha, gamma, rng, options, exact)


@checked(alpha=validate_alpha, gamma=validate_gamma)
def declared_bound(
    problem: Problem, method: str, alpha: float, gamma: float, options: SearchOptions
) -> tuple[float, float]:
    """(ℰ̄, δ): the most a run of ``method`` can lose unless it falls back, known before it runs (SPEC §15.2).

    Noise reduction and doubling: the ex-post loss of halting at the top level; theory:
    its ε = E (pure DP); the Gibbs posterior: its (ε, δ), fixed in advance (ridge only). A
    private radius adds its ε_R (a Gaussian one is inside the Brownian bound), on top of the
    method's worst case on the ceiling, which no released radius exceeds. A privacy filter
    admits the run on this bound. Reads no data.
    """
    return run_step(problem, method, alpha, gamma, options).declared_bound()


def run_one(
    problem: Problem,
    method: str,
    alpha: float,
    gamma: float,
    rng: np.random.Generator,
    *,
    exact: bool = False,
    **options: Any,
) -> RunResult:
    """One run of ``method`` on the SPEC §8 grid (doubling spans the same ε range).

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
    seed: int,
    options: SearchOptions,
) -> tuple[tuple[str, ...], list[float], float, int, int]:
    """Check the settings of many runs before any work starts.

    Returns the clean (methods, alphas, gamma, trials, seed); every α's grid is built
    once, so a bad grid fails here rather than halfway through.
    """
    chosen = validate_methods(methods, options)
    alpha_values = [validate_alpha(a) for a in alphas]
    if not alpha_values:
        raise AccFirstError("give at least one alpha")
    gamma = validate_gamma(gamma)
    trials = validate_count("trials", trials, 1)
    seed = validate_count("seed", seed, 0)
    for alpha in alpha_values:
        options.grid(problem, alpha)
    return chosen, alpha_values, gamma, trials, seed


def trial_result(
    problem: Problem,
    method: str,
    alpha: float,
    trial: int,
    gamma: float,
    seed: int,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """The run of one (method, α, trial) cell with its own seed; ``exact`` solves every tested level (same run)."""
    return search(problem, method, alpha, gamma, trial_rng(seed, method, alpha, trial), options, exact)


def trial_row(
    problem: Problem,
    method: str,
    alpha: float,
    trial: int,
    gamma: float,
    seed: int,
    options: SearchOptions,
) -> dict[str, object]:
    """The results-frame row of one (method, α, trial) cell."""
    return {**trial_result(problem, method, alpha, trial, gamma, seed, options).to_dict(), "trial": trial}


def run_trials(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int,
    *,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Run every (method, α, trial) and return one row each (SPEC §9).

    ``options`` are the fields of ``SearchOptions`` (T, generator, calibration, eps_min,
    eps_max, spacing, noise, delta, radius_mode, radius_epsilon, radius_beta), the same for every run. Fallback
    rows keep ``eps_total = inf``.
    ``progress(done, total)`` is called after each run. Arguments are validated before
    any work starts.
    """
    search_options = SearchOptions.from_keywords(options)
    chosen, alpha_values, gamma, trials, seed = validate_batch(
        problem, alphas, gamma, methods, trials, seed, search_options
    )
    total = len(chosen) * len(alpha_values) * trials
    rows = []
    for method in chosen:
        for alpha in alpha_values:
            for trial in range(trials):
                rows.append(trial_row(problem, method, alpha, trial, gamma, seed, search_options))
                if progress is not None:
                    progress(len(rows), total)
    return pd.DataFrame(rows, columns=list(COLUMNS))
