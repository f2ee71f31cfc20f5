"""Cached runs of the package for the pages.

Trials run in fixed chunks of ``CHUNK`` per method, so that a page can show first
results after the first round and refine them live, and so that raising the number of
trials reuses the chunks already computed. A chunk holds exactly the rows
``run_trials`` would produce for those trial numbers (each row has its own seed,
``trial_rng(seed, method, α, trial)``), so the final frame equals
``run_trials(problem, [α], …, trials, seed)``.

Built-in data are public: their chunks go in ``st.cache_data`` (shared). Upload chunks
go in the session's own memo (``ui.cache``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from accfirst import Problem, RunResult, trial_rng
from accfirst.search.experiments import COLUMNS, SearchOptions, search, trial_row, validate_methods
from accfirst.snippet import RunSettings
from ui.cache import session_memo
from ui.dataset import Selection, builtin_problem

CHUNK = 5


@dataclass(frozen=True)
class RunRequest:
    """The explorer's run parameters (one α), hashable; the dataset and λ come from a ``Selection``."""

    alpha: float
    gamma: float
    methods: tuple[str, ...]
    trials: int
    seed: int
    options: SearchOptions = SearchOptions()

    def settings(self, chosen: Selection, **extra: object) -> RunSettings:
        """The ``RunSettings`` record (JSON, snippet) of this request on ``chosen``."""
        return RunSettings(
            dataset=chosen.spec, task=chosen.task, lam=chosen.lam, alphas=(self.alpha,), gamma=self.gamma,
            methods=self.methods, trials=self.trials, seed=self.seed, options=self.options, extra=extra,
        )  # fmt: skip


def trial_rows(problem: Problem, request: RunRequest, method: str, first: int, count: int) -> pd.DataFrame:
    """Rows ``first … first+count−1`` of ``run_trials`` for one method (same seeds, same columns)."""
    rows = [
        trial_row(problem, method, request.alpha, trial, request.gamma, request.seed, request.options)
        for trial in range(first, first + count)
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


@st.cache_data(show_spinner=False, max_entries=4000)
def _builtin_rows(name: str, lam: float, request: RunRequest, method: str, first: int, count: int) -> pd.DataFrame:
    return trial_rows(builtin_problem(name, lam), request, method, first, count)


@st.cache_data(show_spinner=False, max_entries=64)
def _builtin_traced(name: str, lam: float, request: RunRequest, method: str, trial: int, exact: bool) -> RunResult:
    return _traced(builtin_problem(name, lam), request, method, trial, exact)


def _traced(problem: Problem, request: RunRequest, method: str, trial: int, exact: bool) -> RunResult:
    rng = trial_rng(request.seed, method, request.alpha, trial)
    return search(problem, method, request.alpha, request.gamma, rng, request.options, exact)


def chunk_rows(chosen: Selection, request: RunRequest, method: str, first: int, count: int) -> pd.DataFrame:
    """One cached chunk of trials."""
    if chosen.shared:
        return _builtin_rows(chosen.spec.builtin, chosen.lam, request, method, first, count)
    return session_memo(
        "trial_rows", (chosen.key, chosen.lam, request, method, first, count),
        lambda: trial_rows(chosen.problem(), request, method, first, count), max_entries=2000,
    )  # fmt: skip


def traced_run(chosen: Selection, request: RunRequest, method: str, trial: int, *, exact: bool = False) -> RunResult:
    """Trial ``trial`` of ``method`` again, keeping θ and the trace; cached.

    Reproduces row ``trial`` of the trials frame (same seed, same output either way).
    With ``exact=True`` every tested level's true excess risk is computed (one exact
    solve per level: seconds on 100k × 77); otherwise levels rejected by a certified
    lower bound keep only the bound.
    """
    if chosen.shared:
        return _builtin_traced(chosen.spec.builtin, chosen.lam, request, method, trial, exact)
    return session_memo(
        "traced", (chosen.key, chosen.lam, request, method, trial, exact),
        lambda: _traced(chosen.problem(), request, method, trial, exact), max_entries=16,
    )  # fmt: skip


@dataclass(frozen=True)
class Progress:
    """The trials computed so far: the frame, how many rows of how many, and seconds since the start."""

    frame: pd.DataFrame
    done: int
    total: int
    seconds: float

    @property
    def finished(self) -> bool:
        return self.done == self.total


def iter_trials(chosen: Selection, request: RunRequest) -> Iterator[Progress]:
    """Run (or fetch) every chunk, round by round over the methods, yielding after each round.

    The first round gives ``CHUNK`` trials of every method quickly; later rounds refine.
    The last ``Progress`` holds the full frame, ordered like ``run_trials``'s.
    """
    methods = validate_methods(request.methods)
    started = time.perf_counter()
    parts: dict[str, list[pd.DataFrame]] = {m: [] for m in methods}
    total = len(methods) * request.trials
    done = 0
    for first in range(0, request.trials, CHUNK):
        count = min(CHUNK, request.trials - first)
        for method in methods:
            parts[method].append(chunk_rows(chosen, request, method, first, count))
            done += count
        frame = pd.concat([part for m in methods for part in parts[m]], ignore_index=True)
        yield Progress(frame, done, total, time.perf_counter() - started)
