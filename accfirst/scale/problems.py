"""The ridge and logistic problems of rows in Parquet files, built from passes over them
(docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound).

Ridge needs only its sufficient statistics XᵀX, Xᵀy, yᵀy and n, summed over the chunks in ONE pass
(``RidgeProblem.from_statistics``); logistic finds θ* by Newton's method (``LogisticProblem.from_rows`` with
``ParquetRows``): a first pass like ridge's, then one pass per Newton iteration, the last step certified without a pass
of its own, and afterwards one pass per exact loss of a batch of hypotheses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from accfirst.datasets.preprocess import OUT_OF_CORE_SCALING, positive_bound
from accfirst.erm.logistic import LogisticProblem, RowBlocks, Statistics
from accfirst.erm.problem import validate_regularisation
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError, DataError
from accfirst.scale.chunks import CHUNK_MB, LogisticScaling, RidgeScaling, chunk_rows
from accfirst.scale.files import ParquetSource, inspect_parquet
from accfirst.scale.passes import Pass, one_pass

TASKS = ("ridge", "logistic")
FEATURE_BOUND_NAME = "feature_bound (a public bound on ‖x‖₁)"
TARGET_BOUND_NAME = "target_bound (a public bound on |y|)"


def ridge_sums(Z: NDArray[np.float64]) -> tuple[NDArray[np.float64], int]:
    """ZᵀZ and the row count of a block of rows Z = [X | y]."""
    return Z.T @ Z, len(Z)


class ParquetRows(RowBlocks):
    """The rows y_i·x_i of a logistic problem in Parquet files: every ``reduce`` is one pass
    (docs/mathematics.md#the-two-learning-problems).

    Built by ``problem_from_parquet``; ``passes`` counts the passes made. Picklable: a
    sweep's worker processes receive the parts and read the files themselves.
    """

    def __init__(self, source: ParquetSource, scaling: LogisticScaling, rows: int, scheduler: str | None) -> None:
        self.source, self.scaling, self.rows, self.scheduler = source, scaling, rows, scheduler
        # The row count comes from the files' metadata, not from a pass.
        self.n, self.p = source.n, len(source.features)
        self.passes = 0

    def reduce(
        self, statistic: Callable[[NDArray[np.float64]], Statistics], combine: Sequence[np.ufunc] | None = None
    ) -> Statistics:
        self.passes += 1
        return one_pass(self.source, Pass(self.scaling, self.rows, statistic, combine), self.scheduler)


def problem_from_parquet(
    path_or_glob: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    target: str,
    features: Sequence[str] | None = None,
    task: str = "ridge",
    lam: float = 0.005,
    feature_bound: float | None = None,
    target_bound: float | None = None,
    radius: float | None = None,
    scheduler: str | None = None,
    positive_class: object = None,
    chunk_mb: float = CHUNK_MB,
) -> RidgeProblem | LogisticProblem:
    """The ridge or logistic problem of rows in Parquet files, a chunk in memory at a time
    (docs/mathematics.md#the-two-learning-problems, docs/data-preparation.md#scaling-into-the-unit-ball,
    docs/mathematics.md#a-public-norm-bound).

    Ridge: the sufficient statistics in one pass. Logistic: θ* by Newton (a ridge-like first
    pass, then one per iteration); the problem keeps the files and reads them again for
    each exact loss. Rows are divided by the public bounds and clipped; the paper's
    data-dependent scaling is not available out of core (it reads the data: not private).
    Every bad input is a ``DataError`` raised while building, before any privacy is spent.

    Parameters
    ----------
    path_or_glob : a Parquet file, a folder of them, a glob (``"data/*.parquet"``) or a list.
    target : the column to predict.
    features : the feature columns (numeric); default every column but the target.
    task : "ridge" or "logistic" (labels −1/+1, 0/1 or booleans, or any with ``positive_class``).
    lam : λ > 0.
    feature_bound : a public bound on ‖x‖₁ of a row, stated without looking at the data (required).
    target_bound : a public bound on |y| (required for ridge).
    radius : a public bound R ≤ M on ‖θ‖ (docs/mathematics.md#a-public-norm-bound).
    scheduler : ``None`` for Dask's local threads, a local scheduler name ("synchronous",
        "processes"), or the address of a running ``dask.distributed`` scheduler ("tcp://…").
    positive_class : logistic: the target value mapped to +1 (every other value is −1).
    chunk_mb : megabytes of numbers a worker holds at once (the decoded batch and its float64
        block); default 16.
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
    source = inspect_parquet(path_or_glob, target, features, task, positive_class)
    rows = chunk_rows(chunk_mb, len(source.features) + 1)
    if task == "logistic":
        scaling = LogisticScaling(source.features, target, feature_bound, positive_class)
        return LogisticProblem.from_rows(ParquetRows(source, scaling, rows, scheduler), lam, radius, certify=True)
    assert target_bound is not None  # checked above for ridge
    ridge_scaling = RidgeScaling(source.features, target, feature_bound, target_bound)
    ZtZ, n = one_pass(source, Pass(ridge_scaling, rows, ridge_sums), scheduler)
    if n != source.n:
        raise DataError(f"the files changed while being read: their footers count {source.n:,} rows, a pass {n:,}")
    return RidgeProblem.from_statistics(ZtZ[:-1, :-1], ZtZ[:-1, -1], float(ZtZ[-1, -1]), n, lam, radius)
