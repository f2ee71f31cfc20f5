"""α sweeps: every (method, α, trial) of the paper's experiments, spread over the CPU cores (and κ sweeps,
docs/mathematics.md#a-relative-accuracy-target, and sweeps over targets in R² or accuracy,
docs/mathematics.md#a-target-in-the-units-people-read).

docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#what-a-run-reports, Appendix B. A sweep is ``run_trials`` run
in parallel: each row comes from ``run_one`` with the row's own ``trial_rng``, so a row does not depend on which worker
ran it, in which chunk, or in which order — the sweep's rows equal ``run_trials``' rows for the same seed.

The frame has the ``COLUMNS`` of ``run_trials`` plus ``eps_theory``: E(α), the ε of
the theory approach for the row's generator (docs/mathematics.md#the-theory-approach) on the radius the options give
before any private radius (M, R₀ or a public radius). It is deterministic, so the paper's Fig. 1 "theory curve" can be
drawn from any sweep, whether or not the ``theory`` method was run (when it was, without a private radius, its
``eps_total`` equals ``eps_theory``).

Parallelism: the cells are cut into chunks that worker processes run
(``accfirst.parallel.pool``): a pool started for this sweep, whose workers receive the
pickled problem once, or a long-lived pool shared with other callers (an app's
visitors), whose workers build the problem from its source. A sweep keeps only twice
as many chunks in flight as there are workers, at background priority, so that on a
shared pool the tasks someone is waiting for go first and several sweeps take turns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import replace
from itertools import islice
from typing import Any

import pandas as pd

from accfirst.erm.generators import make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.erm.theory import theory_epsilon
from accfirst.errors import AccFirstError
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import feasible_problem
from accfirst.methods.relative import RelativeTarget
from accfirst.methods.theory import Theory
from accfirst.parallel.pool import BACKGROUND, PickledSource, Source, WorkerPool
from accfirst.search.experiments import COLUMNS, Cell, cell_key, run_here, target_key, validate_batch
from accfirst.search.experiments import run_cells as run_cells  # re-exported: the task a pool's workers run
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


def _number(part: str, text: str, what: str = "alphas") -> float:
    try:
        value = float(part)
    except ValueError:
        raise AccFirstError(f"{echo(part.strip())} in {what} {echo(text)} is not a number") from None
    if not math.isfinite(value):
        raise AccFirstError(f"{what} must be finite numbers; got {echo(part.strip())} in {echo(text)}")
    return value


def _parse_shares(text: str, what: str, example: str, share: Callable[[float], float]) -> list[float]:
    """Shares from a comma list, each checked by ``share`` (which returns it); none may repeat."""
    if not isinstance(text, str) or not text.strip():
        raise AccFirstError(f"{what} must be a list like {example}")
    values = [share(_number(part, text, what)) for part in text.split(",")]
    if len(set(values)) < len(values):
        raise AccFirstError(f"{what.removesuffix('s')} values must not repeat; got {echo(text)}")
    return values


def parse_kappas(text: str) -> list[float]:
    """Relative targets κ from a comma list ``"0.5,0.2,0.1"``, each in (0, 1)
    (docs/mathematics.md#a-relative-accuracy-target).

    Raises ``AccFirstError`` on anything else (empty, non-numeric, κ outside (0, 1), repeated values).
    """
    return _parse_shares(text, "kappas", "0.5,0.2,0.1 (each κ in (0, 1))", lambda kappa: RelativeTarget(kappa).kappa)


def parse_goals(text: str, target: type[VarianceExplained] | type[Accuracy]) -> list[QualityTarget]:
    """Targets in the units people read from a comma list ``"0.6,0.7,0.8"``: R² ≥ r (``VarianceExplained``) or
    accuracy ≥ a (``Accuracy``), each in (0, 1) (docs/mathematics.md#a-target-in-the-units-people-read).

    Raises ``AccFirstError`` on anything else (empty, non-numeric, outside (0, 1), repeated values).
    """
    goals = _parse_shares(text, f"{target.key} goals", "0.6,0.7,0.8 (each in (0, 1))", lambda g: target(g).goal)
    return [target(goal) for goal in goals]


def sweep(
    problem: Problem,
    alphas: Sequence[float],
    gamma: float,
    methods: Sequence[str],
    trials: int,
    seed: int | None,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    chunk_size: int | None = None,
    pool: WorkerPool | None = None,
    source: Source | None = None,
    kappas: Sequence[float | RelativeTarget] = (),
    goals: Sequence[float | QualityTarget] = (),
    **options: Any,
) -> pd.DataFrame:
    """Run every (method, target, trial) on ``workers`` processes; one row each (docs/mathematics.md#what-a-run-reports,
    docs/mathematics.md#a-relative-accuracy-target, docs/mathematics.md#a-target-in-the-units-people-read).

    Parameters
    ----------
    problem : the ERM problem (built on the training data).
    alphas, gamma, methods, trials, seed, kappas, goals : as for ``run_trials`` (the targets are each α, then each
        relative target κ, then each target in R² or accuracy); the rows are the same for the same seed.
    workers : processes to start for this sweep; 1 runs everything in this process (no
        start-up cost). Ignored with ``pool``.
    progress : called as ``progress(done, total)`` after each finished run (in this
        process) or chunk (in workers), and at least every 0.25 s while waiting for
        workers: a heartbeat at which a host can interrupt. An exception it raises
        (e.g. Streamlit stopping the script) cancels the sweep's work — the runs in
        progress stop at their end — and propagates.
    should_stop : polled as often; when it returns True the sweep hands out no more
        work, lets the chunks already handed out finish and returns the rows so far.
    chunk_size : runs per task; by default about 32 tasks per worker, at most 8 runs
        (small chunks keep the progress fine-grained and stopping quick).
    pool : run on this (long-lived, shared) pool of workers instead of starting some.
    source : how ``pool``'s workers get ``problem`` (e.g. ``BuiltinProblem``); needed with ``pool``.
    options : the fields of ``SearchOptions`` (T, generator, calibration, eps_min, eps_max,
        spacing, delta), as for ``run_trials``.

    Returns
    -------
    DataFrame with ``SWEEP_COLUMNS`` (``COLUMNS`` plus ``eps_theory``, E at the row's α: the
    released one for a κ row, NaN when it showed no signal or for a target in R² or accuracy), ordered like ``run_trials``
    (method, target, trial). Work is handed out target by target, so a stopped sweep holds a
    prefix of that schedule: the α in the order given first. Fallback rows keep ``eps_total = inf``.
    """
    search_options = SearchOptions.from_keywords(options)
    # The generator is named in every row; resolve the paper's pairing once.
    search_options = replace(search_options, generator=make_generator(problem, search_options.generator).name)
    chosen, target_values, gamma, trials, seed = validate_batch(
        problem, alphas, gamma, methods, trials, seed, search_options, kappas, goals
    )
    if len(set(chosen)) < len(chosen) or len(set(target_values)) < len(target_values):
        raise AccFirstError("methods and targets must not repeat: a repeated cell would repeat the same run")
    workers = pool.workers if pool is not None else validate_count("workers", workers, 1)
    if pool is not None and source is None:
        raise AccFirstError("a sweep on a shared pool needs the problem's source (how its workers build it)")
    arguments = (gamma, seed, search_options)
    cells = [(method, target, trial) for target in target_values for method in chosen for trial in range(trials)]
    if chunk_size is None:
        size = min(MAX_CHUNK, max(1, math.ceil(len(cells) / (workers * CHUNKS_PER_WORKER))))
    else:
        size = validate_count("chunk_size", chunk_size, 1)
    chunks = [cells[i : i + size] for i in range(0, len(cells), size)]
    if pool is not None and source is not None:  # checked above: a shared pool comes with its source
        rows = _run_pool(pool, source, arguments, chunks, len(cells), progress, should_stop)
    elif min(workers, len(chunks)) == 1:
        rows = run_here(problem, arguments, cells, progress, should_stop)
    else:
        own = PickledSource.of(problem, key="sweep")
        own_pool = WorkerPool(min(workers, len(chunks)), prepare=(own,))
        try:
            rows = _run_pool(own_pool, own, arguments, chunks, len(cells), progress, should_stop)
        finally:
            own_pool.close()
    keys = [cell_key(target) for target in target_values]
    order: dict[tuple[object, tuple[str, float], object], int] = {
        cell: i for i, cell in enumerate((m, k, t) for m in chosen for k in keys for t in range(trials))
    }
    rows.sort(key=lambda row: order[(row["method"], target_key(row), row["trial"])])
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    ceiling = feasible_problem(problem, Theory.key, search_options).shape
    theory = {a: theory_epsilon(ceiling, a, search_options.generator) for a in frame["alpha"].dropna().unique()}
    frame["eps_theory"] = frame["alpha"].map(theory).astype(float)
    return frame


def _run_pool(
    pool: WorkerPool,
    source: Source,
    arguments: tuple[float, int, SearchOptions],
    chunks: Sequence[Sequence[Cell]],
    total: int,
    progress: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None,
) -> list[dict[str, object]]:
    """Hand the chunks out in order, at most two per worker in flight; leaving early cancels the rest."""
    rows: list[dict[str, object]] = []
    todo = iter(chunks)
    pending: set[Future[Any]] = set()
    handing_out = True
    with pool.job() as job:
        while True:
            if handing_out:
                for chunk in islice(todo, 2 * pool.workers - len(pending)):
                    pending.add(job.submit(source, run_cells, *arguments, chunk, priority=BACKGROUND))
            if not pending:
                break
            finished, pending = wait(pending, timeout=HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                if not future.cancelled():
                    rows.extend(future.result())
            if progress is not None:
                progress(len(rows), total)
            if handing_out and should_stop is not None and should_stop():
                # Handed-out work finishes (the rows stay a prefix of the schedule); the rest is dropped.
                handing_out = False
                pending = {future for future in pending if not future.cancel()}
    return rows
