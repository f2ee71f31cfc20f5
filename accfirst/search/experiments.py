"""Many runs → one tidy results frame (SPEC §9).

One row per (method, α, trial) with the SPEC §9 columns. Each row's randomness
comes from its own seed derived from (seed, method, α, trial), so a row does not
depend on which other rows are run: the explorer's α = 0.05 row and a sweep's
α = 0.05 row agree for the same seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from accfirst.erm.generators import GENERATORS, NOISES
from accfirst.erm.gibbs import gibbs_bound, gibbs_run
from accfirst.erm.problems import Problem
from accfirst.erm.theory import theory_epsilon
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import DEFAULT_CALIBRATION, doubling_calibration, resolve_calibration
from accfirst.result import RunResult
from accfirst.search.grid import SPACINGS, epsilon_grid
from accfirst.search.methods import (
    THEORY_NEEDS_LAPLACE,
    doubling,
    doubling_bound,
    noise_reduction,
    noise_reduction_bound,
    theory_run,
)
from accfirst.validation import (
    validate_alpha,
    validate_count,
    validate_delta,
    validate_gamma,
    validate_positive,
    validate_probability,
)

# New methods go at the end: a method's position seeds its runs (``trial_rng``).
METHODS = ("nr", "doubling", "theory", "gibbs")
# The paper's three, the default of the pages and the command line (Gibbs is opt-in: its
# logistic sampler costs seconds per run on 100,000 rows).
PAPER_METHODS = ("nr", "doubling", "theory")
METHOD_LABELS = {"nr": "Noise reduction", "doubling": "Doubling", "theory": "Theory", "gibbs": "Gibbs posterior"}
COLUMNS = (
    "method",
    "generator",
    "calibration",
    "noise",
    "delta",
    "alpha",
    "gamma",
    "lam",
    "n",
    "p",
    "T",
    "trial",
    "stop_index",
    "eps_test",
    "eps_hypothesis",
    "eps_total",
    "exp_eps_total",
    "excess_risk",
    "success",
    "fallback",
    "theta_norm",
    "norm_bound",
    "seconds",
)


@dataclass(frozen=True)
class SearchOptions:
    """How every run of a batch searches: the ε grid, the generator, its noise, the test, δ (SPEC §3, §6, §8, §14, §17).

    The same for every (method, α, trial) of a batch, so ``run_trials``, ``sweep``, the app
    and the settings record carry one of these instead of each option separately. Checked
    when made (``AccFirstError`` with the option's name).

    Parameters
    ----------
    T : privacy levels on the noise-reduction grid, ≥ 2 (default 100: with the default
        calibration it paid 12% less total ε than the paper's 1000 on the built-in data, with
        no fallbacks; README, "Calibration").
    generator : "covariance", "output", or ``None`` for the paper's pairing.
    calibration : the InteractiveAboveThreshold calibration (SPEC §6, §12.3); the default
        "exact-paper-opt" paid the least total ε on the built-in data (README, "Calibration").
        ``SearchOptions.paper()`` is the authors' configuration.
    eps_min, eps_max : ends of the ε grid; ``None`` for the paper's 1/n and 4E (SPEC §8).
    spacing : "geometric" (the paper's) or "linear".
    noise : "laplace" (the paper's) or "gaussian" (SPEC §14; noise reduction and doubling only).
    delta : δ of the (ε, δ) guarantees, in [0, 1): of Gaussian runs' ex-post loss (δ > 0; Laplace runs
        record δ = 0) and of the Gibbs posterior (SPEC §17; 0 asks it for pure ε, ridge only).
    """

    T: int = 100
    generator: str | None = None
    calibration: str = DEFAULT_CALIBRATION
    eps_min: float | None = None
    eps_max: float | None = None
    spacing: str = "geometric"
    noise: str = "laplace"
    delta: float = DEFAULT_DELTA

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "T", validate_count("T (number of privacy levels)", self.T, 2))
        if self.generator is not None and self.generator not in GENERATORS:
            raise AccFirstError(f"unknown generator {self.generator!r}; choose one of {sorted(GENERATORS)} or None")
        set_(self, "calibration", resolve_calibration(self.calibration).name)
        for name in ("eps_min", "eps_max"):
            value = getattr(self, name)
            set_(self, name, None if value is None else validate_positive(name, value))
        if self.spacing not in SPACINGS:
            raise AccFirstError(f"spacing must be one of {SPACINGS}; got {self.spacing!r}")
        if self.noise not in NOISES:
            raise AccFirstError(f"unknown noise {self.noise!r}; choose one of {sorted(NOISES)}")
        # Gaussian runs are (ε, δ)-ex-post and need δ > 0; δ = 0 asks the Gibbs posterior for pure ε.
        gaussian = self.noise == "gaussian"
        delta = validate_delta(self.delta) if gaussian else validate_probability("delta", self.delta, zero=True)
        set_(self, "delta", delta)

    @classmethod
    def paper(cls) -> SearchOptions:
        """The authors' configuration, for reproducing the paper's figures: their code's calibration, T = 1000."""
        return cls(T=1000, calibration="paper-code")

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, Any]) -> SearchOptions:
        """The options named in ``keywords`` (the rest at their defaults); an unknown name is an ``AccFirstError``."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(keywords) - set(names))
        if unknown:
            raise AccFirstError(f"unknown search option(s) {unknown}; the options are {names}")
        return cls(**keywords)

    def to_dict(self) -> dict[str, Any]:
        """``{option: value}``, every option (keyword arguments of ``run_trials``)."""
        return asdict(self)

    def grid(self, problem: Problem, alpha: float) -> NDArray[np.float64]:
        """The ε grid of one α (SPEC §8); doubling spans the same range."""
        return epsilon_grid(problem, alpha, self.generator, self.T, self.eps_min, self.eps_max, self.spacing)


def trial_rng(seed: int, method: str, alpha: float, trial: int) -> np.random.Generator:
    """The generator of one (method, α, trial) cell, independent of every other cell."""
    alpha_key = round(alpha * 1e12)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(METHODS.index(method), alpha_key, trial)))


def search(
    problem: Problem,
    method: str,
    alpha: float,
    gamma: float,
    rng: np.random.Generator,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """One run of ``method`` with ``options`` (``run_one`` with the options as one object).

    Doubling uses its exact test when noise reduction uses an exact calibration, else the
    paper's (SPEC §12.4), so that the two are compared on equal terms.
    """
    validate_methods([method], options.noise)
    if method == "theory":
        return theory_run(problem, alpha, gamma, options.generator, rng)
    if method == "gibbs":
        return gibbs_run(problem, alpha, gamma, options.delta, rng)
    grid = options.grid(problem, alpha)
    noise = {"noise": options.noise, "delta": options.delta}
    if method == "nr":
        return noise_reduction(problem, alpha, gamma, grid, options.generator, rng, options.calibration, exact, **noise)
    return doubling(
        problem,
        alpha,
        gamma,
        float(grid[0]),
        float(grid[-1]),
        options.generator,
        rng,
        exact,
        doubling_calibration(options.calibration),
        **noise,
    )


def declared_bound(
    problem: Problem, method: str, alpha: float, gamma: float, options: SearchOptions
) -> tuple[float, float]:
    """(ℰ̄, δ): the most a run of ``method`` can lose unless it falls back, known before it runs (SPEC §15.2).

    Noise reduction and doubling: the ex-post loss of halting at the top level; theory:
    its ε = E (pure DP); the Gibbs posterior: its (ε, δ), fixed in advance (ridge only). A
    privacy filter admits the run on this bound. Reads no data.
    """
    validate_methods([method], options.noise)
    if method == "theory":
        return theory_epsilon(problem, alpha, options.generator), 0.0
    if method == "gibbs":
        return gibbs_bound(problem, alpha, gamma, options.delta)
    grid = options.grid(problem, alpha)
    noise = {"noise": options.noise, "delta": options.delta}
    if method == "nr":
        return noise_reduction_bound(problem, alpha, gamma, grid, options.generator, options.calibration, **noise)
    return doubling_bound(
        problem,
        alpha,
        gamma,
        float(grid[0]),
        float(grid[-1]),
        options.generator,
        doubling_calibration(options.calibration),
        **noise,
    )


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
    eps_max, spacing, noise, delta); ``exact`` solves every tested level (same output, full trace).
    """
    return search(problem, method, alpha, gamma, rng, SearchOptions.from_keywords(options), exact)


def validate_methods(methods: Sequence[str], noise: str = "laplace") -> tuple[str, ...]:
    """The chosen methods, checked against ``METHODS`` and against the ``noise`` they must add."""
    chosen = tuple(methods)
    if not chosen:
        raise AccFirstError("choose at least one method")
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise AccFirstError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    if "theory" in chosen and noise != "laplace":
        raise AccFirstError(THEORY_NEEDS_LAPLACE)
    return chosen


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
    chosen = validate_methods(methods, options.noise)
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
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Run every (method, α, trial) and return one row each (SPEC §9).

    ``options`` are the fields of ``SearchOptions`` (T, generator, calibration, eps_min,
    eps_max, spacing, noise, delta), the same for every run. Fallback rows keep ``eps_total = inf``.
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
