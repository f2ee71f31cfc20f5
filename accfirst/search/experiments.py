"""Many runs → one tidy results frame (SPEC §9).

One row per (method, α, trial) with the SPEC §9 columns. Each row's randomness
comes from its own seed derived from (seed, method, α, trial), so a row does not
depend on which other rows are run: the explorer's α = 0.05 row and a sweep's
α = 0.05 row agree for the same seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from accfirst.errors import AccFirstError
from accfirst.search.grid import epsilon_grid
from accfirst.search.methods import doubling, noise_reduction, theory_run
from accfirst.erm.problems import Problem
from accfirst.result import RunResult
from accfirst.validation import validate_alpha, validate_count, validate_gamma

METHODS = ("nr", "doubling", "theory")
METHOD_LABELS = {"nr": "Noise reduction", "doubling": "Doubling", "theory": "Theory"}
COLUMNS = (
    "method", "generator", "calibration", "alpha", "gamma", "lam", "n", "p", "T", "trial",
    "stop_index", "eps_test", "eps_hypothesis", "eps_total", "exp_eps_total",
    "excess_risk", "success", "fallback", "theta_norm", "norm_bound", "seconds",
)  # fmt: skip


def trial_rng(seed: int, method: str, alpha: float, trial: int) -> np.random.Generator:
    """The generator of one (method, α, trial) cell, independent of every other cell."""
    alpha_key = int(round(alpha * 1e12))
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(METHODS.index(method), alpha_key, trial)))


def run_one(
    problem: Problem,
    method: str,
    alpha: float,
    gamma: float,
    rng: np.random.Generator,
    T: int = 1000,
    generator: str | None = None,
    calibration: str = "theorem",
    eps_min: float | None = None,
    eps_max: float | None = None,
    spacing: str = "geometric",
    exact: bool = False,
) -> RunResult:
    """One run of ``method`` on the SPEC §8 grid (doubling spans the same ε range)."""
    if method == "theory":
        return theory_run(problem, alpha, gamma, generator, rng)
    grid = epsilon_grid(problem, alpha, generator, T, eps_min, eps_max, spacing)
    if method == "nr":
        return noise_reduction(problem, alpha, gamma, grid, generator, rng, calibration, exact)
    if method == "doubling":
        return doubling(problem, alpha, gamma, float(grid[0]), float(grid[-1]), generator, rng, exact)
    raise AccFirstError(f"unknown method {method!r}; choose from {list(METHODS)}")


def validate_methods(methods: Sequence[str]) -> tuple[str, ...]:
    """The chosen methods, checked against ``METHODS``."""
    chosen = tuple(methods)
    if not chosen:
        raise AccFirstError("choose at least one method")
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise AccFirstError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    return chosen


def validate_batch(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int,
    T: int = 1000,
    generator: str | None = None,
    eps_min: float | None = None,
    eps_max: float | None = None,
    spacing: str = "geometric",
) -> tuple[tuple[str, ...], list[float], float, int, int]:
    """Check the settings of many runs before any work starts.

    Returns the clean (methods, alphas, gamma, trials, seed); every α's grid is built
    once, so a bad grid fails here rather than halfway through.
    """
    chosen = validate_methods(methods)
    alpha_values = [validate_alpha(a) for a in alphas]
    if not alpha_values:
        raise AccFirstError("give at least one alpha")
    gamma = validate_gamma(gamma)
    trials = validate_count("trials", trials, 1)
    seed = validate_count("seed", seed, 0)
    for alpha in alpha_values:
        epsilon_grid(problem, alpha, generator, T, eps_min, eps_max, spacing)
    return chosen, alpha_values, gamma, trials, seed


def trial_row(
    problem: Problem,
    method: str,
    alpha: float,
    trial: int,
    gamma: float,
    seed: int,
    T: int = 1000,
    generator: str | None = None,
    calibration: str = "theorem",
    eps_min: float | None = None,
    eps_max: float | None = None,
    spacing: str = "geometric",
) -> dict[str, object]:
    """The results-frame row of one (method, α, trial) cell."""
    rng = trial_rng(seed, method, alpha, trial)
    result = run_one(problem, method, alpha, gamma, rng, T, generator, calibration, eps_min, eps_max, spacing)
    return {**result.to_dict(), "trial": trial}


def run_trials(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int,
    T: int = 1000,
    progress: Callable[[int, int], None] | None = None,
    generator: str | None = None,
    calibration: str = "theorem",
    eps_min: float | None = None,
    eps_max: float | None = None,
    spacing: str = "geometric",
) -> pd.DataFrame:
    """Run every (method, α, trial) and return one row each (SPEC §9).

    Fallback rows keep ``eps_total = inf``. ``progress(done, total)`` is called after
    each run. Arguments are validated before any work starts.
    """
    chosen, alpha_values, gamma, trials, seed = validate_batch(
        problem, alphas, gamma, methods, trials, seed, T, generator, eps_min, eps_max, spacing
    )
    total = len(chosen) * len(alpha_values) * trials
    rows = []
    for method in chosen:
        for alpha in alpha_values:
            for trial in range(trials):
                rows.append(
                    trial_row(problem, method, alpha, trial, gamma, seed, T, generator, calibration, eps_min, eps_max, spacing)
                )
                if progress is not None:
                    progress(len(rows), total)
    return pd.DataFrame(rows, columns=list(COLUMNS))
