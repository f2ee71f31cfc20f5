"""One pass over the Parquet files: a statistic of every chunk, combined over the parts by Dask
(docs/mathematics.md#the-two-learning-problems).

Dask's local threads run the passes by default (one part per task); ``scheduler="tcp://host:port"`` runs them on a
``dask.distributed`` cluster (needs the ``distributed`` package), whose workers must see the files at the same paths.
This is the one module of the package that imports Dask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from dask.base import compute, named_schedulers
from dask.delayed import delayed
from threadpoolctl import threadpool_limits

from accfirst.erm.logistic import Statistics, combine_statistics
from accfirst.errors import AccFirstError, DataError
from accfirst.scale.chunks import LogisticScaling, Place, RidgeScaling
from accfirst.scale.files import ParquetSource, Part

# Bytes per column that the reader buffers from the file (pyarrow's buffered stream): without
# it a column's whole chunk of a row group is read into memory before decoding.
READ_BUFFER = 1 << 16
# How long to wait for a dask.distributed scheduler to answer.
CONNECT_TIMEOUT = "10s"


@dataclass(frozen=True)
class Pass:
    """What one pass over the files computes: ``statistic`` of ``scaling``'s rows, a batch of at most ``rows``
    rows at a time, the batches' and parts' results combined entry by entry (``combine``)."""

    scaling: RidgeScaling | LogisticScaling
    rows: int
    statistic: Callable[..., Statistics]
    combine: Sequence[np.ufunc] | None = None

    def part(self, part: Part) -> Statistics | None:
        """The statistic of one part's rows (``None`` if it has none); one block (and its two scratch columns)
        serves every batch of the part."""
        scaling = self.scaling
        try:
            reader = pq.ParquetFile(part.path, buffer_size=READ_BUFFER, pre_buffer=False)
            batches = reader.iter_batches(
                batch_size=self.rows, row_groups=list(part.row_groups), columns=scaling.columns, use_threads=False
            )
            rows = min(self.rows, part.rows)
            block = np.empty((rows, scaling.width), order="F")
            scratch = np.empty((2, rows))
            total, offset = None, part.first
            for batch in batches:
                size = batch.num_rows
                prepared = scaling.fill(batch, block[:size], scratch[:, :size], Place(part.path, offset))
                total = _combine(total, self.statistic(prepared), self.combine)
                offset += size
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"cannot read {part.path!r}: {exc}") from None
        return total


def _combine(
    first: Statistics | None, second: Statistics | None, combine: Sequence[np.ufunc] | None
) -> Statistics | None:
    """Two partial statistics combined; ``None`` stands for no rows."""
    if first is None or second is None:
        return second if first is None else first
    return combine_statistics(first, second, combine)


def _tree_reduce(parts: list[Any], combine: Sequence[np.ufunc] | None) -> Any:
    """Pairwise combination of delayed partial statistics: depth log₂(parts), each task small."""
    while len(parts) > 1:
        pairs = [delayed(_combine)(a, b, combine) for a, b in zip(parts[::2], parts[1::2])]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _client(address: str) -> Any:
    """A ``dask.distributed`` client of the scheduler at ``address``, for one pass (closed after it)."""
    try:
        from distributed import Client
    except ImportError:
        raise AccFirstError(
            f"scheduler={address!r} needs dask.distributed: pip install distributed (or leave scheduler unset "
            "for Dask's local threads)"
        ) from None
    try:
        return Client(address, set_as_default=False, timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        raise AccFirstError(f"cannot reach a dask scheduler at {address!r}: {exc}") from None


def _compute(graph: Any, scheduler: str | None) -> Any:
    """The value of a delayed ``graph`` on Dask's local threads (``None``), a named local scheduler, or a cluster."""
    if scheduler is None or "://" not in scheduler:
        # The scheduler's function itself: given its name, Dask would import dask.distributed (a second).
        local = named_schedulers.get(scheduler or "threads")
        if local is None:
            raise AccFirstError(
                f"scheduler must be one of {sorted(named_schedulers)} or a dask.distributed address "
                f"(tcp://host:port); got {scheduler!r}"
            )
        (value,) = compute(graph, scheduler=local)
        return value
    # A client per pass: nothing lingers when the cluster goes away, and a restarted one is found again.
    with _client(scheduler) as client:
        if not client.scheduler_info()["workers"]:
            raise AccFirstError(
                f"the dask cluster at {scheduler!r} has no workers: start some (dask worker {scheduler})"
            )
        try:
            (value,) = compute(graph, scheduler=client.get)
        except RuntimeError as exc:
            # Typically a scheduler or worker that cannot unpickle the tasks: another accfirst.
            raise AccFirstError(
                f"the dask cluster at {scheduler!r} could not run the pass ({exc}); its scheduler and workers need "
                "this accfirst (the same version, importable) and the files at the same paths"
            ) from None
    return value


def one_pass(source: ParquetSource, task: Pass, scheduler: str | None) -> Statistics:
    """``task``'s statistic of every part of ``source``, combined entry by entry: one pass over the files."""
    parts = [delayed(task.part)(part) for part in source.parts]
    # Dask's threads fill the cores; BLAS threads inside them oversubscribe (measured: 6× slower).
    with threadpool_limits(limits=1, user_api="blas"):
        total: Statistics = _compute(_tree_reduce(parts, task.combine), scheduler)
    return total
