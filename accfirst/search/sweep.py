"""α sweeps: every (method, α, trial) of the paper's experiments, spread over the CPU cores.

SPEC §8–§9, Appendix B. A sweep is ``run_trials`` run in parallel: each row comes
from ``run_one`` with the row's own ``trial_rng``, so a row does not depend on which
worker ran it, in which chunk, or in which order — the sweep's rows equal
``run_trials``' rows for the same seed (except the wall-clock ``seconds``).

The frame has the ``COLUMNS`` of ``run_trials`` plus ``eps_theory``: E(α), the ε of
the theory approach for the row's generator (SPEC §4). It is deterministic, so the
paper's Fig. 1 "theory curve" can be drawn from any sweep, whether or not the
``theory`` method was run (when it was, its ``eps_total`` equals ``eps_theory``).

Parallelism: the cells are cut into chunks that worker processes run; each worker
receives the pickled problem once, through the pool's initializer. Workers are
started with "spawn" (forking a multi-threaded host such as a Streamlit server can
deadlock; spawning costs about half a second per worker), without re-running the
parent's main script (``_WorkerProcess``), and with one BLAS thread each.
"""

from __future__ import annotations

import math
import multiprocessing.context
import pickle
import signal
import sys
import types
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from accfirst.errors import AccFirstError
from accfirst.search.experiments import COLUMNS, SearchOptions, trial_row, validate_batch
from accfirst.erm.generators import make_generator
from accfirst.erm.problems import Problem
from accfirst.erm.theory import theory_epsilon
from accfirst.validation import echo, shorten, validate_alpha, validate_count

SWEEP_COLUMNS = (*COLUMNS, "eps_theory")
PAPER_ALPHAS_TEXT = "0.005:0.2:0.005"
MAX_ALPHAS = 10_000
MAX_CHUNK = 8
CHUNKS_PER_WORKER = 32
HEARTBEAT_SECONDS = 0.25
ALPHA_DECIMALS = 12


def parse_alphas(text: str) -> list[float]:
    """α values from ``"start:stop:step"`` (stop included) or a comma list ``"0.05,0.075"``.

    Grid values are rounded to 12 decimals, so ``0.005:0.2:0.005`` gives exactly the
    paper's 40 values 0.005, 0.01, …, 0.2 (Appendix B.1), never 0.15000000000000002.
    Raises ``AccFirstError`` on anything else (empty, non-numeric, α ≤ 0, step ≤ 0,
    stop < start, repeated values).
    """
    if not isinstance(text, str) or not text.strip():
        raise AccFirstError("alphas must be 'start:stop:step' (e.g. 0.005:0.2:0.005) or a list like 0.05,0.075")
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise AccFirstError(f"an alpha range needs three parts start:stop:step; got {echo(text)}")
        start, stop, step = (_number(part, text) for part in parts)
        if step <= 0:
            raise AccFirstError(f"the alpha step must be > 0; got {step:g} in {echo(text)}")
        if stop < start:
            raise AccFirstError(f"the alpha range must not end before it starts; got {echo(text)}")
        count = math.floor((stop - start) / step + 1e-9) + 1
        if count > MAX_ALPHAS:
            raise AccFirstError(f"{echo(text)} gives {count} alpha values; use at most {MAX_ALPHAS}")
        values = [round(start + i * step, ALPHA_DECIMALS) for i in range(count)]
    else:
        values = [_number(part, text) for part in text.split(",")]
    for value in values:
        validate_alpha(value)
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise AccFirstError(f"alpha values must not repeat; {shorten(str(repeated))} appear more than once")
    return values


def _number(part: str, text: str) -> float:
    try:
        value = float(part)
    except ValueError:
        raise AccFirstError(f"{echo(part.strip())} in alphas {echo(text)} is not a number") from None
    if not math.isfinite(value):
        raise AccFirstError(f"alphas must be finite numbers; got {echo(part.strip())} in {echo(text)}")
    return value


@dataclass(frozen=True)
class _Settings:
    """Everything a cell needs besides (method, α, trial)."""

    gamma: float
    seed: int
    options: SearchOptions


Cell = tuple[str, float, int]

# The problem and settings of a worker process, set once by ``_init_worker``.
_worker_state: tuple[Problem, _Settings] | None = None


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker that does not run the parent's ``__main__`` script again.

    spawn re-imports the parent's main module in each child, so that functions defined
    there can be unpickled. The workers need only this module, and under ``streamlit
    run`` the main module is the app script: every worker would run the app once more
    (loading data, computing its default view). While the process starts, ``__main__``
    is an empty module, which the child skips. The same keeps a script that calls
    ``sweep`` without an ``if __name__ == "__main__"`` guard from starting itself over.
    """

    def start(self) -> None:
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            super().start()
        finally:
            sys.modules["__main__"] = main


class _WorkerContext(multiprocessing.context.SpawnContext):
    """The "spawn" start method with ``_WorkerProcess``."""

    Process = _WorkerProcess


def _init_worker(problem_bytes: bytes, settings: _Settings) -> None:
    global _worker_state
    # Ctrl-C reaches the whole process group; only the parent decides what to do with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One BLAS thread per worker: the workers already fill the cores, and nested
    # BLAS threads oversubscribe them (measured: a 2-worker sweep slower than 1).
    threadpool_limits(1)
    _worker_state = (pickle.loads(problem_bytes), settings)


def _run_cell(problem: Problem, settings: _Settings, cell: Cell) -> dict[str, object]:
    method, alpha, trial = cell
    return trial_row(problem, method, alpha, trial, settings.gamma, settings.seed, settings.options)


def _run_chunk(cells: list[Cell]) -> list[dict[str, object]]:
    """Run cells in a worker process (its problem was set by ``_init_worker``)."""
    if _worker_state is None:
        raise RuntimeError("_run_chunk runs only in a worker started with _init_worker")
    problem, settings = _worker_state
    return [_run_cell(problem, settings, cell) for cell in cells]


def sweep(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    chunk_size: int | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Run every (method, α, trial) on ``workers`` processes; one row each (SPEC §9).

    Parameters
    ----------
    problem : the ERM problem (built on the training data).
    alphas, gamma, methods, trials, seed : as for ``run_trials``; the rows are the same
        for the same seed.
    workers : processes to use; 1 runs everything in this process (no start-up cost).
    progress : called as ``progress(done, total)`` after each finished run (in this
        process) or chunk (in workers), and at least every 0.25 s while waiting for
        workers: a heartbeat at which a host can interrupt. An exception it raises
        (e.g. Streamlit stopping the script) cancels the work not yet handed to a
        worker, waits for the chunks in progress and propagates.
    should_stop : polled as often; when it returns True the sweep does the same and
        returns the rows finished so far.
    chunk_size : runs per task; by default about 32 tasks per worker, at most 8 runs
        (small chunks keep the progress fine-grained and stopping quick).
    options : the fields of ``SearchOptions`` (T, generator, calibration, eps_min, eps_max,
        spacing), as for ``run_trials``.

    Returns
    -------
    DataFrame with ``SWEEP_COLUMNS`` (``COLUMNS`` plus ``eps_theory``), ordered like
    ``run_trials`` (method, α, trial). Work is handed out α by α, so a stopped sweep
    holds a prefix of that schedule: the smallest α first. Fallback rows keep
    ``eps_total = inf``.
    """
    search_options = SearchOptions.from_keywords(options)
    # The generator is named in every row; resolve the paper's pairing once.
    search_options = replace(search_options, generator=make_generator(problem, search_options.generator).name)
    chosen, alpha_values, gamma, trials, seed = validate_batch(
        problem, alphas, gamma, methods, trials, seed, search_options
    )
    if len(set(chosen)) < len(chosen) or len(set(alpha_values)) < len(alpha_values):
        raise AccFirstError("methods and alphas must not repeat: a repeated cell would repeat the same run")
    workers = validate_count("workers", workers, 1)
    settings = _Settings(gamma=gamma, seed=seed, options=search_options)
    cells = [(method, alpha, trial) for alpha in alpha_values for method in chosen for trial in range(trials)]
    if chunk_size is None:
        size = min(MAX_CHUNK, max(1, math.ceil(len(cells) / (workers * CHUNKS_PER_WORKER))))
    else:
        size = validate_count("chunk_size", chunk_size, 1)
    chunks = [cells[i : i + size] for i in range(0, len(cells), size)]
    workers = min(workers, len(chunks))
    if workers == 1:
        rows = _run_here(problem, settings, cells, progress, should_stop)
    else:
        rows = _run_pool(problem, settings, chunks, workers, len(cells), progress, should_stop)
    theory = {alpha: theory_epsilon(problem, alpha, search_options.generator) for alpha in alpha_values}
    order = {cell: i for i, cell in enumerate((m, a, t) for m in chosen for a in alpha_values for t in range(trials))}
    rows.sort(key=lambda row: order[(row["method"], row["alpha"], row["trial"])])
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["eps_theory"] = frame["alpha"].map(theory).astype(float)
    return frame


def _run_here(
    problem: Problem,
    settings: _Settings,
    cells: list[Cell],
    progress: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None,
) -> list[dict[str, object]]:
    rows = []
    for cell in cells:
        if should_stop is not None and should_stop():
            break
        rows.append(_run_cell(problem, settings, cell))
        if progress is not None:
            progress(len(rows), len(cells))
    return rows


def _run_pool(
    problem: Problem,
    settings: _Settings,
    chunks: list[list[Cell]],
    workers: int,
    total: int,
    progress: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None,
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    executor = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_WorkerContext(),
        initializer=_init_worker,
        initargs=(pickle.dumps(problem, protocol=pickle.HIGHEST_PROTOCOL), settings),
    )
    pending: set[Future] = set()
    try:
        pending = {executor.submit(_run_chunk, chunk) for chunk in chunks}
        while pending:
            if should_stop is not None and should_stop():
                break
            finished, pending = wait(pending, timeout=HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                rows.extend(future.result())
            if progress is not None:
                progress(len(rows), total)
    finally:
        # Cancel what has not started; wait for the chunks that are running.
        executor.shutdown(wait=True, cancel_futures=True)
    for future in pending:
        if future.done() and not future.cancelled() and future.exception() is None:
            rows.extend(future.result())
    return rows
