"""The shared worker pool: rows built from a source equal run_trials', jobs cancel, a dead worker is replaced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pandas as pd
import pytest

from accfirst import run_trials
from accfirst.datasets import load_builtin
from accfirst.datasets.prepare.noise import SecretSeed
from accfirst.erm.problems import prepared_problem
from accfirst.errors import DataError
from accfirst.methods.options import SearchOptions
from accfirst.parallel.pool import Cancelled, PickledSource, WorkerPool, available_cores
from accfirst.search.experiments import COLUMNS
from accfirst.search.sources import BuiltinProblem
from accfirst.search.sweep import run_cells


@pytest.fixture(scope="module")
def pool(ridge_problem):
    """Two workers with the shared ridge problem pinned (starting them takes about two seconds)."""
    shared = WorkerPool(2, prepare=(PickledSource.of(ridge_problem, "ridge"),))
    yield shared
    shared.close()


def _crash(problem) -> None:
    os._exit(3)  # a worker killed mid-task (e.g. out of memory)


def test_a_builtin_source_gives_the_rows_of_run_trials(pool):
    """A real table prepared in the workers from the server's secret: the same arrays as in the server."""
    secret = SecretSeed.draw()
    options = SearchOptions(T=100)
    cells = [(method, 0.1, trial) for method in ("nr", "doubling", "theory") for trial in range(2)]
    source = BuiltinProblem("diabetes", 0.01, noise=secret)
    rows = pool.submit(source, run_cells, 0.1, 4, options, cells).result(timeout=120)
    data = load_builtin("diabetes", noise_seed=secret)
    reference = run_trials(prepared_problem(data, 0.01), [0.1], 0.1, ["nr", "doubling", "theory"], 2, seed=4, T=100)
    pd.testing.assert_frame_equal(pd.DataFrame(rows, columns=list(COLUMNS)), reference)
    assert (reference["eps_prep"] == data.prep_epsilon).all() and data.prep_epsilon > 0


def test_a_real_table_source_needs_its_noise_seed():
    with pytest.raises(DataError, match="same noise seed"):
        BuiltinProblem("diabetes", 0.01).build()
    assert BuiltinProblem("synthetic-buzz", 0.01).build().prep_mode == "public"


def test_a_cancelled_job_stops_its_running_task(pool, ridge_problem):
    """400 runs would take about a minute; cancelling makes the running task give up between two runs."""
    cells = [("nr", 0.05, trial) for trial in range(400)]
    with pool.job() as job:
        running = job.submit(PickledSource.of(ridge_problem, "ridge"), run_cells, 0.1, 0, SearchOptions(T=2000), cells)
        waiting = [job.submit(PickledSource.of(ridge_problem, "ridge"), run_cells, 0.1, 0, SearchOptions(), cells)]
        while not running.running():
            pass
        job.cancel()
    with pytest.raises(Cancelled):
        running.result(timeout=120)
    assert all(future.cancelled() or isinstance(future.exception(timeout=120), Cancelled) for future in waiting)
    # The workers are free again: a new task runs.
    assert (
        len(
            pool.submit(
                PickledSource.of(ridge_problem, "ridge"), run_cells, 0.1, 0, SearchOptions(T=50), [("theory", 0.1, 0)]
            ).result(timeout=120)
        )
        == 1
    )


def test_a_dead_worker_is_replaced(pool, ridge_problem):
    with pytest.raises(BrokenProcessPool):
        pool.submit(PickledSource.of(ridge_problem, "ridge"), _crash).result(timeout=120)
    rows = pool.submit(
        PickledSource.of(ridge_problem, "ridge"), run_cells, 0.1, 0, SearchOptions(T=50), [("doubling", 0.1, 0)]
    ).result(timeout=120)
    assert rows[0]["method"] == "doubling"


def test_available_cores_is_at_least_one():
    assert 1 <= available_cores() <= (os.cpu_count() or 1)


def test_waiting_tasks_go_by_priority_then_in_order(ridge_problem):
    """One worker: while it is busy, tasks submitted later with a lower priority number overtake the queue."""
    single = WorkerPool(1, prepare=(PickledSource.of(ridge_problem, "ridge"),))
    source, options = PickledSource.of(ridge_problem, "ridge"), SearchOptions(T=50)
    try:
        busy = [single.submit(source, run_cells, 0.1, 0, SearchOptions(T=2000), [("nr", 0.05, t) for t in range(5)])]
        busy.append(single.submit(source, run_cells, 0.1, 0, options, [("theory", 0.1, 0)], priority=9))
        finished = []
        for priority in (5, 0, 3, 0):
            future = single.submit(source, run_cells, 0.1, 0, options, [("theory", 0.1, 0)], priority=priority)
            future.add_done_callback(lambda _, p=priority: finished.append(p))
            busy.append(future)
        for future in busy:
            future.result(timeout=120)
    finally:
        single.close()
    assert finished == [0, 0, 3, 5]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


PARENT = """
import time
from accfirst.parallel.pool import WorkerPool
from accfirst.datasets.prepare.noise import SecretSeed
from accfirst.search.sources import BuiltinProblem
pool = WorkerPool(2)
pool.start(BuiltinProblem("diabetes", 0.01, noise=SecretSeed.draw()))
time.sleep(8)
print(" ".join(str(pid) for pid in pool._executor._processes), flush=True)
time.sleep(600)
"""


def test_workers_leave_when_their_parent_is_killed():
    """A parent that dies without shutting its pool down (SIGKILL) leaves no worker behind (about 10 s)."""
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env)
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(pid) for pid in workers)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:  # do not leave them running when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left
