"""Worker processes that run tasks for many callers at once, each task on an object its worker keeps.

A ``WorkerPool`` is a set of spawned processes, each holding the objects it has been asked
about (in this package: learning problems). A task names its object by a ``Source`` (a key
and a way to build the object): a source can rebuild it inside each worker from public
data, so nothing large is shipped per task, or carry it pickled (``PickledSource``), given
once per worker when the pool starts and kept for the pool's life. The function a task runs
receives the worker's object as its first argument.

Cancellation: tasks submitted through a ``Job`` can be cancelled together. Tasks not yet
started are dropped; a running task that loops over many steps polls ``still_wanted()``
between them and raises ``Cancelled``, so no worker keeps computing for a job that nobody
waits for.

Workers are started with "spawn" (forking a multi-threaded host such as a Streamlit server
can deadlock; spawning costs about a second per worker), with one BLAS thread each, and
without re-running the parent's main script (``_WorkerProcess``). Everything a worker keeps
lives in one ``_Worker`` made by the pool's initializer in that process.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.process
import os
import pickle
import signal
import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from threadpoolctl import threadpool_limits

from accfirst.validation import validate_count

# Objects a worker keeps besides the pinned ones (a built-in problem is small, except a logistic
# problem's n × p copy of the data: ~25 MB for the synthetic set).
KEPT_PER_WORKER = 4
# Cancellable jobs at once (a sweep is one job); more wait for a free slot.
JOB_SLOTS = 256
# The slot of tasks that are never cancelled; its generation stays 0.
_UNCANCELLABLE = (0, 0)
# Priorities: interactive tasks (a visitor waits for them) use 0 and up; long batches wait behind them.
BACKGROUND = 100


class Cancelled(Exception):
    """The task's job was cancelled while it ran (raised in the worker, seen in the future)."""


class Source(Protocol):
    """How a worker gets an object: ``key`` names it (equal keys, equal objects), ``build()`` makes it."""

    @property
    def key(self) -> Hashable: ...

    def build(self) -> Any: ...


@dataclass(frozen=True)
class PickledSource:
    """An object sent as pickled bytes: given once per worker when a pool starts (``WorkerPool(prepare=…)``)."""

    key: Hashable
    data: bytes

    @classmethod
    def of(cls, value: object, key: Hashable) -> PickledSource:
        return cls(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def build(self) -> Any:
        return pickle.loads(self.data)


@dataclass(frozen=True)
class _Pinned:
    """A task's reference to an object its worker received at start (so the bytes are not sent again)."""

    key: Hashable

    def build(self) -> Any:
        raise RuntimeError(f"object {self.key!r} was not given to this pool at start")


def available_cores() -> int:
    """CPU cores this process may use: its affinity mask, lowered by a cgroup v2 CPU quota (containers)."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        with open("/sys/fs/cgroup/cpu.max") as limit:
            quota, period = limit.read().split()
        if quota != "max":
            count = min(count, max(1, math.floor(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return count


# ---------------------------------------------------------------- inside a worker
class _Worker:
    """What one worker process keeps: the pinned objects, the most recent others, and the job flags."""

    def __init__(self, flags: Any, prepare: tuple[Source, ...]) -> None:
        self.flags = flags  # the pool's shared array of job generations, one per slot
        self.token = _UNCANCELLABLE  # the job of the running task
        self.pinned: dict[Hashable, Any] = {source.key: source.build() for source in prepare}
        self.recent: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, source: Source) -> Any:
        """The object of ``source``: pinned, kept from an earlier task, or built now (the oldest kept one goes)."""
        if source.key in self.pinned:
            return self.pinned[source.key]
        if source.key in self.recent:
            self.recent.move_to_end(source.key)
            return self.recent[source.key]
        while len(self.recent) >= KEPT_PER_WORKER:
            self.recent.popitem(last=False)
        value = self.recent[source.key] = source.build()
        return value


# Set by ``_init_worker`` in each worker process; ``None`` in every other process.
_worker: _Worker | None = None


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker that does not run the parent's ``__main__`` script again.

    spawn re-imports the parent's main module in each child, so that functions defined
    there can be unpickled. The workers need only this package, and under ``streamlit
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


def _init_worker(flags: Any, prepare: tuple[Source, ...]) -> None:
    """The pool's initializer, run once in each new worker process."""
    global _worker
    # Ctrl-C reaches the whole process group; only the parent decides what to do with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A parent killed outright (a server's hard restart) never sends the workers their stop
    # signal, and a worker holds both ends of its task pipe: leave with the parent.
    threading.Thread(target=_exit_with, args=(multiprocessing.parent_process(),), daemon=True).start()
    # One BLAS thread per worker: the workers already fill the cores, and nested
    # BLAS threads oversubscribe them (measured: a 2-worker sweep slower than 1).
    threadpool_limits(1)
    _worker = _Worker(flags, prepare)


def _exit_with(parent: multiprocessing.process.BaseProcess | None) -> None:
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)


def _call(token: tuple[int, int], source: Source, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Run ``function(object, *args)`` in a worker for the job ``token`` (slot, generation)."""
    assert _worker is not None, "tasks run only in a pool's workers"
    _worker.token = token
    try:
        if not still_wanted():
            raise Cancelled
        return function(_worker.get(source), *args)
    finally:
        _worker.token = _UNCANCELLABLE


def _nothing(value: object) -> None:
    """A task that only makes its worker start and build its object (``WorkerPool.start``)."""


def still_wanted() -> bool:
    """In a worker: whether the job of the running task has not been cancelled (always True elsewhere)."""
    if _worker is None:
        return True
    slot, generation = _worker.token
    wanted: bool = _worker.flags[slot] == generation
    return wanted


# ---------------------------------------------------------------- in the parent
@dataclass(order=True)
class _Task:
    """A task waiting for a worker: served by priority, then in the order submitted."""

    priority: int
    order: int
    future: Future[Any] = field(compare=False)
    call: tuple[Any, ...] = field(compare=False)  # the arguments of ``_call``


class WorkerPool:
    """Worker processes shared by every caller: they run ``function(object, *args)`` tasks.

    Tasks wait in the pool, served by priority (lower first), then first come first
    served; only about one task per worker is handed to the processes at a time, so a
    task submitted later with a higher priority (say, the first numbers a visitor waits
    for) overtakes the queue, and a task still waiting can be cancelled.

    Parameters
    ----------
    workers : processes (at least 1), started on the first task.
    prepare : objects every worker builds when it starts and keeps (e.g. the problem of a
        one-off sweep, as ``PickledSource``): tasks then name them without sending them.
    """

    def __init__(self, workers: int, prepare: Sequence[Source] = ()) -> None:
        self.workers = validate_count("workers", workers, 1)
        self._prepare = tuple(prepare)
        self._pinned = {source.key for source in self._prepare}
        self._context = _WorkerContext()
        self._flags = self._context.Array("q", JOB_SLOTS, lock=False)
        self._free = list(range(1, JOB_SLOTS))  # slot 0: uncancellable tasks
        self._counter = itertools.count()
        self._waiting: list[_Task] = []
        self._handed_out = 0
        self._lock = threading.Condition()
        self._executor: ProcessPoolExecutor | None = None

    def start(self, source: Source) -> None:
        """Start every worker now, each building ``source``'s object, rather than on the first tasks."""
        for _ in range(self.workers):
            self.submit(source, _nothing)

    def submit(self, source: Source, function: Callable[..., Any], *args: Any, priority: int = 0) -> Future[Any]:
        """``function(object, *args)`` in a worker; never cancelled (its result may serve many callers)."""
        return self._submit(_UNCANCELLABLE, source, function, args, priority)

    def _submit(
        self, token: tuple[int, int], source: Source, function: Callable[..., Any], args: tuple[Any, ...], priority: int
    ) -> Future[Any]:
        sent = _Pinned(source.key) if source.key in self._pinned else source
        future: Future[Any] = Future()
        with self._lock:
            heapq.heappush(self._waiting, _Task(priority, next(self._counter), future, (token, sent, function, args)))
            self._hand_out()
        return future

    def _hand_out(self) -> None:
        """Give waiting tasks to the processes until each worker has one and one more is queued (under the lock)."""
        while self._waiting and self._handed_out < self.workers + 1:
            task = heapq.heappop(self._waiting)
            if not task.future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=self._context,
                    initializer=_init_worker,
                    initargs=(self._flags, self._prepare),
                )
            try:
                running = self._executor.submit(_call, *task.call)
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory): the next task starts afresh
                self._executor = None
                task.future.set_exception(exc)
                continue
            self._handed_out += 1
            running.add_done_callback(functools.partial(self._finished, task.future))

    def _finished(self, future: Future[Any], running: Future[Any]) -> None:
        error = Cancelled() if running.cancelled() else running.exception()  # cancelled: the pool was closed
        with self._lock:
            self._handed_out -= 1
            if isinstance(error, BrokenProcessPool):
                self._executor = None
            self._hand_out()
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(running.result())

    @contextmanager
    def job(self) -> Iterator[Job]:
        """A group of tasks cancelled together; leaving the block cancels whatever is still running."""
        with self._lock:
            while not self._free:
                self._lock.wait()
            slot = self._free.pop()
            generation = next(self._counter) + 1
            self._flags[slot] = generation
        job = Job(self, (slot, generation))
        try:
            yield job
        finally:
            job.cancel()
            with self._lock:
                self._free.append(slot)
                self._lock.notify()

    def close(self, wait: bool = True) -> None:
        """Stop the workers (after their running tasks when ``wait``); waiting tasks are cancelled."""
        with self._lock:
            executor, self._executor = self._executor, None
            waiting, self._waiting = self._waiting, []
        for task in waiting:
            task.future.cancel()
        if executor is not None:
            executor.shutdown(wait=wait, cancel_futures=True)


class Job:
    """Tasks of one caller on a ``WorkerPool`` that can be cancelled together (``WorkerPool.job``)."""

    def __init__(self, pool: WorkerPool, token: tuple[int, int]) -> None:
        self._pool = pool
        self._token = token
        self._futures: list[Future[Any]] = []

    def submit(self, source: Source, function: Callable[..., Any], *args: Any, priority: int = 0) -> Future[Any]:
        """``function(object, *args)`` in a worker, as part of this job."""
        future = self._pool._submit(self._token, source, function, args, priority)
        self._futures.append(future)
        return future

    def cancel(self) -> None:
        """Drop the tasks still waiting; running ones raise ``Cancelled`` at their next ``still_wanted()``."""
        slot, _ = self._token
        self._pool._flags[slot] = 0
        for future in self._futures:
            future.cancel()
