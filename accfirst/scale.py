"""Data larger than memory: the ERM problems from Parquet files, read block by block with Dask.

SPEC §1–§2, §11, §13. Everything after the problem — noise reduction, the tests, sweeps —
needs only what the problem keeps: for ridge the sufficient statistics XᵀX, Xᵀy, yᵀy and n,
summed over the row blocks in ONE pass (``RidgeProblem.from_statistics``); for logistic θ*
by Newton's method, one pass per iteration (loss, gradient and Hessian summed over the
blocks; ``LogisticProblem.from_rows`` with ``ParquetRows``), and afterwards one pass per
exact loss of a batch of hypotheses (the testers ask for it only where the certified lower
bound cannot decide).

Each row is divided by the *public* bounds and clipped (SPEC §11's privacy-safe scaling).
The paper's data-dependent scaling (divide by the largest row norm) is not available out of
core: it would need its own pass over the data and is not private. Nor are the in-memory
preparation steps that read the data (centring, standardising, imputation, one-hot
encoding): write the Parquet files with numeric feature columns, prepared as they should be.

Dask's local threaded scheduler runs the passes by default (no cluster); a
``scheduler="tcp://host:port"`` address uses a running ``dask.distributed`` cluster (needs the
``distributed`` package). Memory stays near one row group per thread: write row groups of
at most about a million rows. Nothing else in the package imports this module.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from accfirst.datasets.preprocess import OUT_OF_CORE_SCALING, positive_bound, scale_rows, scale_target
from accfirst.erm.problems import LogisticProblem, RidgeProblem, RowBlocks, combine_statistics, validate_regularisation
from accfirst.errors import AccFirstError, DataError

TASKS = ("ridge", "logistic")
# Rows prepared and summed at a time within a partition: the copies of a chunk (scaled rows,
# the logistic Hessian's weighted rows) take 10 MB at 20 features, whatever the partition size.
CHUNK_ROWS = 1 << 16
FEATURE_BOUND_NAME = "feature_bound (a public bound on ‖x‖₁)"
TARGET_BOUND_NAME = "target_bound (a public bound on |y|)"


def _combine(first: tuple | None, second: tuple | None, combine: Sequence[np.ufunc] | None) -> tuple | None:
    """Two partial statistics combined; ``None`` stands for an empty block."""
    if first is None or second is None:
        return second if first is None else first
    return combine_statistics(first, second, combine)


def _partition_statistic(
    frame: pd.DataFrame,
    prepare: Callable[[pd.DataFrame], tuple[NDArray[np.float64], ...]],
    statistic: Callable[..., tuple],
    combine: Sequence[np.ufunc] | None,
) -> tuple | None:
    """The statistic of one partition, CHUNK_ROWS rows at a time (``None`` if it is empty).

    ``prepare`` turns a chunk of the partition into arrays (scaled, clipped rows): only a
    chunk is ever copied, so memory stays near the partition's own size.
    """
    total = None
    for start in range(0, len(frame), CHUNK_ROWS):
        total = _combine(total, statistic(*prepare(frame.iloc[start : start + CHUNK_ROWS])), combine)
    return total


def _tree_reduce(parts: list, combine: Sequence[np.ufunc] | None) -> Any:
    """Pairwise combination of delayed partial statistics: depth log₂(partitions), each task small."""
    while len(parts) > 1:
        pairs = [dask.delayed(_combine)(a, b, combine) for a, b in zip(parts[::2], parts[1::2])]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


@functools.cache
def _client(address: str) -> Any:
    """One ``dask.distributed`` client per scheduler address and process."""
    try:
        from distributed import Client
    except ImportError:
        raise AccFirstError(
            f"scheduler={address!r} needs dask.distributed: pip install distributed (or leave scheduler unset "
            "for Dask's local threads)"
        ) from None
    return Client(address, set_as_default=False)


def _scheduler(scheduler: str | None) -> Any:
    """Dask's local threads (``None``), a named local scheduler, or a distributed client for an address."""
    if scheduler is None:
        return "threads"
    return _client(scheduler).get if "://" in scheduler else scheduler


def one_pass(
    frame: dd.DataFrame,
    prepare: Callable[[pd.DataFrame], tuple[NDArray[np.float64], ...]],
    statistic: Callable[..., tuple],
    combine: Sequence[np.ufunc] | None,
    scheduler: str | None,
) -> tuple:
    """``statistic`` of every block of ``prepare``d rows of ``frame``, combined entry by entry: one pass."""
    parts = [dask.delayed(_partition_statistic)(part, prepare, statistic, combine) for part in frame.to_delayed()]
    # Dask's threads fill the cores; BLAS threads inside them oversubscribe (measured: 6× slower).
    with threadpool_limits(limits=1, user_api="blas"):
        (total,) = dask.compute(_tree_reduce(parts, combine), scheduler=_scheduler(scheduler))
    if total is None:
        raise DataError("the Parquet files have no rows")
    return total


def _require_finite(total: float, columns: Sequence[str]) -> None:
    """Refuse a block whose scaled values do not add up to a finite number: it has NaN or infinite values."""
    if not math.isfinite(total):
        raise DataError(
            f"the column(s) {', '.join(columns)} have NaN or infinite values; out of core nothing is imputed: drop "
            "or fill those rows when writing the Parquet files"
        )


def _columns(frame: pd.DataFrame, columns: Sequence[str]) -> NDArray[np.float64]:
    """The chunk's columns as one new float64 array.

    Column-major: filled column by column, and the blocks' ZᵀZ is several times faster so.
    """
    Z = np.empty((len(frame), len(columns)), order="F")
    for j, name in enumerate(columns):
        Z[:, j] = frame[name].to_numpy(dtype=np.float64)
    return Z


def _scale_features(X: NDArray[np.float64], features: Sequence[str], feature_bound: float) -> None:
    """Divide the features by the public bound and clip the rows, in place (SPEC §11)."""
    scale_rows(X, feature_bound)
    # After clipping every finite row has ‖x‖₁ ≤ 1, and a row with NaN or ±∞ holds NaN.
    _require_finite(float(X.sum()), features)


def ridge_rows(
    frame: pd.DataFrame, features: Sequence[str], target: str, feature_bound: float, target_bound: float
) -> tuple[NDArray[np.float64]]:
    """([X | y],) of a chunk of rows, divided by the public bounds and clipped.

    One array, so that one product ZᵀZ gives XᵀX, Xᵀy and yᵀy together.
    """
    Z = _columns(frame, [*features, target])
    _require_finite(float(Z[:, -1].sum()), [target])
    _scale_features(Z[:, :-1], features, feature_bound)
    scale_target(Z[:, -1], target_bound)
    return (Z,)


def ridge_sums(Z: NDArray[np.float64]) -> tuple:
    """ZᵀZ and the row count of a block of rows Z = [X | y]."""
    return Z.T @ Z, len(Z)


def _labels(frame: pd.DataFrame, target: str, positive_class: object) -> NDArray[np.float64]:
    """±1: +1 where the target equals ``positive_class``; without one, +1 for 1/True, −1 for −1/0/False."""
    column = frame[target]
    if column.isna().any():
        raise DataError(f"the target column {target!r} has missing values; drop those rows when writing the files")
    if positive_class is not None:
        # A class named on the command line is text; compare a numeric or boolean column as text too.
        if isinstance(positive_class, str) and not pd.api.types.is_string_dtype(column):
            column = column.astype(str)
        return np.where(column.to_numpy() == positive_class, 1.0, -1.0)
    values = column.to_numpy()
    if not (pd.api.types.is_numeric_dtype(values) and np.all(np.isin(values, (-1, 0, 1)))):
        raise DataError(
            f"the logistic target {target!r} must hold −1/+1, 0/1 or booleans; for other labels name the one "
            "mapped to +1 (positive_class)"
        )
    return np.where(values == 1, 1.0, -1.0)


def logistic_rows(
    frame: pd.DataFrame, features: Sequence[str], target: str, feature_bound: float, positive_class: object
) -> tuple[NDArray[np.float64]]:
    """(y_i·x_i,) of a chunk of rows, features divided by the public bound and clipped."""
    yX = _columns(frame, features)
    _scale_features(yX, features, feature_bound)
    yX *= _labels(frame, target, positive_class)[:, None]
    return (yX,)


class ParquetRows(RowBlocks):
    """The rows y_i·x_i of a logistic problem in Parquet files: every ``reduce`` is one Dask pass (SPEC §2).

    Built by ``problem_from_parquet``. Picklable: a sweep's worker processes receive the
    file names and read the files themselves.
    """

    def __init__(
        self,
        path_or_glob: str | Sequence[str],
        features: Sequence[str],
        target: str,
        feature_bound: float,
        positive_class: object,
        scheduler: str | None,
    ) -> None:
        self.source = path_or_glob
        self.columns = [*features, target]
        self.scheduler = scheduler
        self.frame = _read(path_or_glob, self.columns)
        # The row count comes from the files' metadata, not from a pass.
        self.n, self.p = len(self.frame), len(features)
        self._prepare = partial(
            logistic_rows,
            features=tuple(features),
            target=target,
            feature_bound=feature_bound,
            positive_class=positive_class,
        )

    def __getstate__(self) -> dict[str, object]:
        return {name: value for name, value in self.__dict__.items() if name != "frame"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.frame = _read(self.source, self.columns)

    def reduce(
        self, statistic: Callable[[NDArray[np.float64]], tuple], combine: Sequence[np.ufunc] | None = None
    ) -> tuple:
        return one_pass(self.frame, self._prepare, statistic, combine, self.scheduler)


def _read(path_or_glob: str | Sequence[str], columns: Sequence[str] | None = None) -> dd.DataFrame:
    """The Dask frame of Parquet files (their metadata read, not their rows)."""
    try:
        return dd.read_parquet(path_or_glob, columns=None if columns is None else list(columns))
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read Parquet files at {path_or_glob!r}: {exc}") from None


def _open(
    path_or_glob: str | Sequence[str], target: str, features: Sequence[str] | None, task: str
) -> tuple[dd.DataFrame, list[str]]:
    """The Dask frame of the feature and target columns, checked against the files' schema (no data read)."""
    frame = _read(path_or_glob)
    columns = [str(c) for c in frame.columns]
    if target not in columns:
        raise DataError(f"target {target!r} is not a column of the Parquet files; columns: {', '.join(columns)}")
    chosen = [c for c in columns if c != target] if features is None else list(features)
    unknown = [c for c in chosen if c not in columns or c == target]
    if unknown or not chosen:
        raise DataError(
            f"features must be columns of the files other than the target; got {unknown or 'none'}; columns: "
            f"{', '.join(columns)}"
        )
    text = [c for c in chosen if not pd.api.types.is_numeric_dtype(frame.dtypes[c])]
    if text:
        raise DataError(
            f"feature columns must be numeric; {text} are not. Out of core nothing is encoded: one-hot encode them "
            "when writing the files, or leave them out with features=[...]"
        )
    if task == "ridge" and not pd.api.types.is_numeric_dtype(frame.dtypes[target]):
        raise DataError(f"a ridge target must be numeric; {target!r} is {frame.dtypes[target]}")
    return frame[[*chosen, target]], chosen


def problem_from_parquet(
    path_or_glob: str | Sequence[str],
    target: str,
    features: Sequence[str] | None = None,
    task: str = "ridge",
    lam: float = 0.005,
    feature_bound: float | None = None,
    target_bound: float | None = None,
    radius: float | None = None,
    scheduler: str | None = None,
    positive_class: object = None,
) -> RidgeProblem | LogisticProblem:
    """The ridge or logistic problem of rows in Parquet files, never holding them in memory (SPEC §2, §11, §13).

    Ridge: the sufficient statistics in one pass. Logistic: θ* by Newton, one pass per
    iteration; the problem keeps the files and reads them again for each exact loss. Rows
    are divided by the public bounds and clipped; the paper's data-dependent scaling is not
    available out of core (it reads the data: not private).

    Parameters
    ----------
    path_or_glob : a Parquet file, a folder of them, a glob (``"data/*.parquet"``) or a list.
    target : the column to predict.
    features : the feature columns (numeric); default every column but the target.
    task : "ridge" or "logistic" (labels −1/+1, 0/1 or booleans, or any with ``positive_class``).
    lam : λ > 0.
    feature_bound : a public bound on ‖x‖₁ of a row, stated without looking at the data (required).
    target_bound : a public bound on |y| (required for ridge).
    radius : a public bound R ≤ M on ‖θ‖ (SPEC §13).
    scheduler : ``None`` for Dask's local threads, a local scheduler name ("synchronous",
        "processes"), or the address of a running ``dask.distributed`` scheduler ("tcp://…").
    positive_class : logistic: the target value mapped to +1 (every other value is −1).
    """
    if task not in TASKS:
        raise AccFirstError(f"task must be one of {TASKS}; got {task!r}")
    lam = validate_regularisation(lam)
    if feature_bound is None:
        raise DataError(f"feature_bound is required: a public bound on ‖x‖₁ of a row; {OUT_OF_CORE_SCALING}")
    feature_bound = positive_bound(FEATURE_BOUND_NAME, feature_bound)
    if task == "ridge":
        if target_bound is None:
            raise DataError(f"ridge needs target_bound: a public bound on |y|; {OUT_OF_CORE_SCALING}")
        target_bound = positive_bound(TARGET_BOUND_NAME, target_bound)
    frame, chosen = _open(path_or_glob, target, features, task)
    if task == "logistic":
        rows = ParquetRows(path_or_glob, chosen, target, feature_bound, positive_class, scheduler)
        return LogisticProblem.from_rows(rows, lam, radius)
    prepare = partial(
        ridge_rows, features=tuple(chosen), target=target, feature_bound=feature_bound, target_bound=target_bound
    )
    ZtZ, n = one_pass(frame, prepare, ridge_sums, None, scheduler)
    return RidgeProblem.from_statistics(ZtZ[:-1, :-1], ZtZ[:-1, -1], float(ZtZ[-1, -1]), n, lam, radius)
