"""Runs of the package for the pages, off the script thread when the data are public.

Trials run in chunks: trial 0 alone (the first numbers come fast, and its run times
measure what a run costs, ``ui.work``), then blocks up to the next multiple of ``CHUNK``,
so that raising the number of trials reuses the chunks already computed. A chunk holds
exactly the rows ``run_trials`` would produce for those trial numbers (each row has its
own seed, ``trial_rng(seed, method, α, trial)``), so the final frame equals
``run_trials(problem, [α], …, trials, seed)``.

Built-in data are public: their chunks and replays run in the server's worker pool
(``worker_pool``: a process per core, shared by every visitor and by the sweep page), and
their results are shared by every session (``SharedResults``), keyed by the dataset, λ
and every setting of the request — sessions share a result only when all of it is
identical, and a session that asks for a result another one started waits for the same
computation. An upload's runs stay in its session's thread and memo (``ui.cache``):
nothing of an upload reaches a worker or another session.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, wait
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from accfirst import RunResult
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import validate_methods
from accfirst.methods.relative import RelativeTarget
from accfirst.parallel.pool import WorkerPool, available_cores
from accfirst.search.experiments import COLUMNS, MODEL, TIMING, trial_result
from accfirst.search.sources import BuiltinProblem
from accfirst.search.sweep import run_cells
from accfirst.snippet import RunSettings
from ui.cache import session_memo
from ui.dataset import DATASET, LAMBDA, Selection

CHUNK = 5
HEARTBEAT_SECONDS = 0.25


@dataclass(frozen=True)
class RunRequest:
    """The explorer's run parameters (one α, one relative target κ, or one target in R² or accuracy), hashable.

    The dataset, λ and the radius come from a ``Selection``.
    """

    alpha: float | RelativeTarget | QualityTarget
    gamma: float
    methods: tuple[str, ...]
    trials: int
    seed: int
    options: SearchOptions = SearchOptions()
    #: The seed the visitor chose (``None``: operating-system entropy, never recorded in a link, a record or a snippet).
    chosen_seed: int | None = 0

    @property
    def rows_key(self) -> tuple[object, ...]:
        """What a trial's row depends on besides the data, the method and the trial number (not the trial count)."""
        return (self.alpha, self.gamma, self.seed, self.options)

    def settings(self, chosen: Selection, **extra: object) -> RunSettings:
        """The ``RunSettings`` record (JSON, snippet) of this request on ``chosen``: an α, a κ or a target in R² or
        accuracy (its goal; the options carry how λ is set and the ceiling)."""
        relative = isinstance(self.alpha, RelativeTarget)
        quality = isinstance(self.alpha, (VarianceExplained, Accuracy))
        return RunSettings(
            dataset=chosen.spec,
            task=chosen.task,
            lam=chosen.lam,
            alphas=(self.alpha,) if isinstance(self.alpha, float) else (),
            kappas=(self.alpha.kappa,) if relative else (),
            goals=(self.alpha.goal,) if quality else (),
            gamma=self.gamma,
            methods=self.methods,
            trials=self.trials,
            seed=self.chosen_seed,
            options=self.options,
            radius=chosen.radius,
            extra=extra,
        )


class SharedResults:
    """Futures of results shared by every session: the least recently used are forgotten, a failed one at once."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._futures: OrderedDict[Hashable, Future] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, start: Callable[[], Future]) -> Future:
        """The future stored under ``key``, or ``start()`` stored there (again, if the stored one failed)."""
        with self._lock:
            future = self._futures.get(key)
            if future is not None and not (future.done() and (future.cancelled() or future.exception() is not None)):
                self._futures.move_to_end(key)
                return future
            future = self._futures[key] = start()
            while len(self._futures) > self._max_entries:
                self._futures.popitem(last=False)
            return future


@st.cache_resource(show_spinner=False)
def worker_pool() -> WorkerPool:
    """The server's worker processes, one per core, started at once and building the default view's problem."""
    pool = WorkerPool(available_cores())
    pool.start(BuiltinProblem(DATASET.default, LAMBDA.default))
    return pool


@st.cache_resource(show_spinner=False)
def _shared_rows() -> SharedResults:
    return SharedResults(max_entries=4000)


@st.cache_resource(show_spinner=False)
def _shared_replays() -> SharedResults:
    # A replay keeps its trace (a few arrays of T values each): far fewer than the chunks.
    return SharedResults(max_entries=64)


def workers(chosen: Selection) -> int:
    """The processes the runs on ``chosen`` use: the pool's for public data, this session's thread for an upload."""
    return worker_pool().workers if chosen.shared else 1


def chunk_bounds(trials: int) -> list[tuple[int, int]]:
    """``(first, count)`` of each chunk: trial 0 alone, then up to each multiple of ``CHUNK``."""
    starts = sorted({0, 1, *range(CHUNK, trials, CHUNK)} & set(range(trials)))
    return [(first, end - first) for first, end in zip(starts, [*starts[1:], trials], strict=True)]


def _frame(rows: list[dict]) -> pd.DataFrame:
    """The rows with each run's ``TIMING``, the page's own measure of what a run costs (``ui.work``), and its released
    ``MODEL``, for the held-out figures; its downloads drop both (``released``)."""
    return pd.DataFrame(rows, columns=[*COLUMNS, TIMING, MODEL])


def released(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame of the page's runs as it may leave the page: ``COLUMNS`` and what the page derived from them, no timing
    (docs/mathematics.md#what-an-observer-sees) and no model."""
    return frame.drop(columns=[TIMING, MODEL], errors="ignore")


def _chunk(chosen: Selection, request: RunRequest, method: str, first: int, count: int) -> Future:
    """One chunk of trials, as a future of its rows: shared and computed by a worker, or this session's own.

    In the pool, trial 0 (every visitor's first numbers) goes before later chunks.
    """
    cells = [(method, request.alpha, trial) for trial in range(first, first + count)]
    arguments = (request.gamma, request.seed, request.options, cells)
    key = (request.rows_key, method, first, count)
    if chosen.shared:
        source = chosen.source
        priority = 0 if first == 0 else 1 + first // CHUNK
        return _shared_rows().get(
            (source.key, *key), lambda: worker_pool().submit(source, run_cells, *arguments, priority=priority)
        )
    done: Future = Future()
    done.set_result(
        session_memo(
            "trial_rows", (*chosen.problem_key, *key), lambda: run_cells(chosen.problem(), *arguments), max_entries=2000
        )
    )
    return done


def first_trials(chosen: Selection, request: RunRequest) -> pd.DataFrame:
    """Trial 0 of every method (computed once, then cached like any chunk): what a run costs on this problem."""
    methods = validate_methods(request.methods)
    return _frame([row for method in methods for row in _chunk(chosen, request, method, 0, 1).result()])


def traced_run(chosen: Selection, request: RunRequest, method: str, trial: int, *, exact: bool = False) -> RunResult:
    """Trial ``trial`` of ``method`` again, keeping θ and the trace; cached.

    Reproduces row ``trial`` of the trials frame (same seed, same output either way).
    With ``exact=True`` every tested level's true excess risk is computed (one exact
    solve per level: seconds on 100k × 77); otherwise levels rejected by a certified
    lower bound keep only the bound.
    """
    arguments = (method, request.alpha, trial, request.gamma, request.seed, request.options, exact)
    if chosen.shared:
        source = chosen.source
        return (
            _shared_replays()
            .get((source.key, arguments), lambda: worker_pool().submit(source, trial_result, *arguments, priority=1))
            .result()
        )
    return session_memo(
        "traced",
        (*chosen.problem_key, arguments),
        lambda: trial_result(chosen.problem(), *arguments),
        max_entries=16,
    )


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

    The first round gives trial 0 of every method quickly; later rounds refine. While a
    round computes, the last ``Progress`` is yielded again every 0.25 s: a moment at which
    the page can draw (and Streamlit can stop the script for a rerun). The last
    ``Progress`` holds the full frame, ordered like ``run_trials``'s.
    """
    methods = validate_methods(request.methods)
    started = time.perf_counter()
    parts: dict[str, list[pd.DataFrame]] = {m: [] for m in methods}
    total = len(methods) * request.trials
    progress = Progress(_frame([]), 0, total, 0.0)
    for first, count in chunk_bounds(request.trials):
        # One round in flight per session: the pool serves every visitor's rounds in turn.
        chunks = [_chunk(chosen, request, method, first, count) for method in methods]
        while wait(chunks, timeout=HEARTBEAT_SECONDS).not_done:
            yield Progress(progress.frame, progress.done, total, time.perf_counter() - started)
        for method, chunk in zip(methods, chunks, strict=True):
            parts[method].append(_frame(chunk.result()))
        frame = pd.concat([part for m in methods for part in parts[m]], ignore_index=True)
        progress = Progress(frame, progress.done + count * len(methods), total, time.perf_counter() - started)
        yield progress
