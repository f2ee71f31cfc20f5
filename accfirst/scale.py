"""Data larger than memory: the ERM problems from Parquet files, streamed a chunk at a time.

docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
docs/data-preparation.md#scaling-into-the-unit-ball, docs/mathematics.md#a-public-norm-bound. Everything after the
problem — noise reduction, the tests, sweeps — needs only what the problem keeps: for ridge the sufficient statistics
XᵀX, Xᵀy, yᵀy and n, summed over the chunks in ONE pass (``RidgeProblem.from_statistics``); for logistic θ* by Newton's
method (``LogisticProblem.from_rows`` with ``ParquetRows``): a first pass like ridge's (XᵀX and Σ y_i x_i give the
Newton step from θ = 0, a ridge solution), then one pass per Newton iteration, the last step certified without a pass of
its own; afterwards one pass per exact loss of a batch of hypotheses (the testers ask for it only where the certified
lower bound cannot decide).

Memory is bounded by a chunk, whatever the sizes of the files and of their row groups: a
pass splits the files into parts (consecutive row groups of one file), and a worker reads
its part through pyarrow's record batches of ``chunk_mb / (16 × columns)`` rows — the
decoded batch and the float64 block it is prepared into together hold ``chunk_mb`` of
numbers — never a whole file or row group at once. Measured
(docs/benchmarks.md#parquet-larger-than-memory): peak RSS ≈ base + workers × (c × chunk + r),
c ≈ 2 (Arrow's column builders grow by doubling) and r ≈ 4 MB per column read (the reader's pages, set by the writer's page size,
not by the row groups). The block is allocated once per part and filled column by column straight from
the Arrow buffers, divided by the public bounds and clipped on the way (the privacy-safe scaling of
docs/data-preparation.md#scaling-into-the-unit-ball); the paper's data-dependent scaling (divide by the largest row
norm) reads the data, is not private, and is not available here. Nor are the in-memory preparation steps that read the
data (centring, standardising, imputation, one-hot encoding): write the Parquet files with numeric feature columns,
prepared as they should be.

Every file's schema is checked against the others before any row is read, and a chunk
with a gap, NaN or ±∞ stops the pass: a ``DataError`` names the file and the column, and
the problem is never built, so no privacy is spent.

Dask's local threads run the passes by default (one part per task); ``scheduler=
"tcp://host:port"`` runs them on a ``dask.distributed`` cluster (needs the ``distributed``
package), whose workers must see the files at the same paths. Nothing else in the package
imports this module.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from dask.base import compute, named_schedulers
from dask.delayed import delayed
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from accfirst.datasets.preprocess import OUT_OF_CORE_SCALING, positive_bound
from accfirst.erm.logistic import LogisticProblem, RowBlocks, Statistics, combine_statistics
from accfirst.erm.problem import validate_regularisation
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError, DataError

TASKS = ("ridge", "logistic")
# Megabytes of numbers a worker holds at once: the decoded batch and its float64 block. Larger
# chunks cost memory and gain nothing (measured: the same CPU time per row from 2 to 32 MB).
CHUNK_MB = 16.0
# Consecutive row groups of a file read by one task, up to about this many rows: enough tasks
# to keep every worker busy, few enough that scheduling them costs nothing.
PART_ROWS = 1 << 20
# Bytes per column that the reader buffers from the file (pyarrow's buffered stream): without
# it a column's whole chunk of a row group is read into memory before decoding.
READ_BUFFER = 1 << 16
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
FEATURE_BOUND_NAME = "feature_bound (a public bound on ‖x‖₁)"
TARGET_BOUND_NAME = "target_bound (a public bound on |y|)"
# How long to wait for a dask.distributed scheduler to answer.
CONNECT_TIMEOUT = "10s"
NOT_IMPUTED = "out of core nothing is imputed: drop or fill those rows when writing the Parquet files"


@dataclass(frozen=True)
class Part:
    """Rows one task reads: consecutive row groups of one file, starting at row ``first`` of the file."""

    path: str
    row_groups: tuple[int, ...]
    first: int
    rows: int


@dataclass(frozen=True)
class ParquetSource:
    """Parquet files whose schemas were checked against each other (no row read): what a pass reads."""

    parts: tuple[Part, ...]
    features: tuple[str, ...]
    target: str
    n: int


def _kind(data_type: pa.DataType) -> str:
    """What a column holds, as far as the problems care: number, boolean, text, or the Arrow type's name."""
    if pa.types.is_dictionary(data_type):
        return _kind(data_type.value_type)
    if pa.types.is_integer(data_type) or pa.types.is_floating(data_type):
        return "number"
    if pa.types.is_boolean(data_type):
        return "boolean"
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type) or pa.types.is_string_view(data_type):
        return "text"
    return str(data_type)


def _files(path_or_glob: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The Parquet files of a file, a folder (every ``*.parquet`` below it), a glob, or a list of those."""
    if isinstance(path_or_glob, (str, os.PathLike)):
        sources = [path_or_glob]
    else:
        sources = list(path_or_glob)
    if not sources:
        raise DataError("no Parquet files given: name a file, a folder or a glob such as 'data/*.parquet'")
    files: list[str] = []
    for source in sources:
        name = os.path.expanduser(os.fspath(source))
        if os.path.isdir(name):
            found = [
                os.path.join(folder, file)
                for folder, _, names in os.walk(name)
                for file in names
                if file.endswith(PARQUET_SUFFIXES) and not file.startswith(("_", "."))
            ]
            if not found:
                raise DataError(f"the folder {name!r} has no Parquet files (*.parquet) in it")
        elif any(sign in name for sign in "*?["):
            found = [file for file in glob.glob(name, recursive=True) if os.path.isfile(file)]
            if not found:
                raise DataError(f"no Parquet files match {name!r}")
        elif os.path.isfile(name):
            found = [name]
        else:
            raise DataError(f"no Parquet file or folder at {name!r}")
        files += sorted(found)
    return files


def _schema(path: str) -> pq.FileMetaData:
    """The footer of one Parquet file (its schema and row groups; no row read)."""
    try:
        return pq.read_metadata(path)
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"cannot read {path!r} as Parquet: {exc}") from None


def _check_columns(path: str, kinds: dict[str, str], target: str, features: Sequence[str], task: str) -> None:
    """The target and the features exist in one file and hold what the task needs."""
    if target not in kinds:
        raise DataError(f"target {target!r} is not a column of {path!r}; its columns: {', '.join(kinds)}")
    unknown = [c for c in features if c not in kinds or c == target]
    if unknown or not features or len(set(features)) < len(features):
        raise DataError(
            f"features must be distinct columns of the files other than the target; got {unknown or list(features)}; "
            f"columns of {path!r}: {', '.join(kinds)}"
        )
    text = [c for c in features if kinds[c] not in ("number", "boolean")]
    if text:
        raise DataError(
            f"feature columns must be numeric; {text} {'is' if len(text) == 1 else 'are'} "
            f"{', '.join(sorted({kinds[c] for c in text}))} in {path!r}. Out of core nothing is encoded: one-hot "
            "encode them when writing the files, or leave them out with features=[...]"
        )
    if task == "ridge" and kinds[target] not in ("number", "boolean"):
        raise DataError(f"a ridge target must be numeric; {target!r} is {kinds[target]} in {path!r}")


def inspect_parquet(
    path_or_glob: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    target: str,
    features: Sequence[str] | None,
    task: str,
    positive_class: object = None,
) -> ParquetSource:
    """The files' rows split into parts, after checking every file's schema against the first's.

    Reads only the files' footers. Raises ``DataError`` naming the file and the column for a
    glob that matches nothing, a missing target or feature, a non-numeric feature, a column
    that holds something else (or is missing) in another file, or a text label without
    ``positive_class``.
    """
    files = _files(path_or_glob)
    parts: list[Part] = []
    reference: tuple[str, dict[str, str]] | None = None
    chosen: list[str] = []
    for path in files:
        metadata = _schema(path)
        schema = metadata.schema.to_arrow_schema()
        # pandas writes an index that is not a range as a column of its own: it is not a feature.
        index = {name for name in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(name, str)}
        kinds = {field.name: _kind(field.type) for field in schema if field.name not in index}
        if reference is None:
            chosen = [c for c in kinds if c != target] if features is None else list(features)
            _check_columns(path, kinds, target, chosen, task)
            reference = (path, kinds)
        first_path, first_kinds = reference
        used = [*chosen, target] if features is not None else list(first_kinds)
        for column in used:
            if column not in kinds:
                raise DataError(f"the files' schemas differ: {path!r} has no column {column!r} ({first_path!r} has)")
            if kinds[column] != first_kinds[column]:
                raise DataError(
                    f"the files' schemas differ: column {column!r} is {first_kinds[column]} in {first_path!r} but "
                    f"{kinds[column]} in {path!r}"
                )
        if features is None and set(kinds) != set(first_kinds):
            extra = sorted(set(kinds) - set(first_kinds))
            raise DataError(
                f"the files' schemas differ: {path!r} has column(s) {extra} that {first_path!r} has not; name the "
                "features (features=[...]) or write the files with the same columns"
            )
        parts += _parts(path, metadata)
    assert reference is not None  # _files found at least one file
    if task == "logistic" and positive_class is None and reference[1][target] == "text":
        raise DataError(
            f"the logistic target {target!r} holds text; name the label mapped to +1 (positive_class), every "
            "other label is −1"
        )
    n = sum(part.rows for part in parts)
    if n == 0:
        raise DataError("the Parquet files have no rows")
    return ParquetSource(tuple(parts), tuple(chosen), target, n)


def _parts(path: str, metadata: pq.FileMetaData) -> list[Part]:
    """One file's row groups gathered into parts of about ``PART_ROWS`` rows (empty row groups left out)."""
    parts: list[Part] = []
    groups: list[int] = []
    first = rows = 0
    for index in range(metadata.num_row_groups):
        size = metadata.row_group(index).num_rows
        if size == 0:
            continue
        groups.append(index)
        rows += size
        if rows >= PART_ROWS:
            parts.append(Part(path, tuple(groups), first, rows))
            first, groups, rows = first + rows, [], 0
    if groups:
        parts.append(Part(path, tuple(groups), first, rows))
    return parts


@dataclass(frozen=True)
class Place:
    """Where a chunk's rows are: the file and the chunk's first row in it (for messages)."""

    path: str
    first: int

    def row(self, index: int) -> str:
        return f"{self.path!r}, row {self.first + index:,}"


def _numbers(column: pa.Array, name: str, place: Place) -> NDArray[Any]:
    """A numeric column of a batch as numpy (no copy for float64); a gap is refused."""
    if column.null_count:
        first = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        raise DataError(f"{place.row(first)}, column {name!r}: a missing value; {NOT_IMPUTED}")
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    values: NDArray[Any] = column.to_numpy(zero_copy_only=False)
    return values


def _refuse_non_finite(columns: Sequence[tuple[str, NDArray[Any]]], place: Place) -> None:
    """Raise for the first column of a chunk with NaN or ±∞ (the chunk's sums were not finite)."""
    for name, values in columns:
        finite = np.isfinite(values)
        if not finite.all():
            raise DataError(f"{place.row(int(np.argmin(finite)))}, column {name!r}: NaN or infinite; {NOT_IMPUTED}")
    names = ", ".join(repr(name) for name, _ in columns)
    raise DataError(
        f"{place.path!r}, column(s) {names}: values too large to add up in floating point (near 1e308); rescale "
        "them when writing the files"
    )


@dataclass(frozen=True)
class Scaling:
    """Rows of a chunk divided by public bounds and clipped (docs/data-preparation.md#scaling-into-the-unit-ball),
    written into a float64 block.

    A subclass's ``fill`` writes the block column by column from the batch's Arrow buffers:
    the row factors min(1/B, (1 − 2p ulp)/‖x_i‖₁) come first (one sweep of |x_j| into a
    running sum), then each feature is multiplied by them straight into its column of the
    block. Dividing by B and then clipping to ‖x‖₁ ≤ 1 in memory (``clip_rows``, which pulls
    rows within 2p ulps of the surface inside too) gives the same rows up to an ulp.
    """

    features: tuple[str, ...]
    target: str
    feature_bound: float

    @property
    def columns(self) -> list[str]:
        """The columns a batch reads: the features, then the target."""
        return [*self.features, self.target]

    @property
    def width(self) -> int:
        """Columns of the block."""
        return len(self.features)

    def fill_features(
        self, values: Sequence[NDArray[Any]], factors: NDArray[np.float64], block: NDArray[np.float64]
    ) -> None:
        """block[:, j] = x_j · factors for each feature."""
        for j, column in enumerate(values):
            np.multiply(column, factors, out=block[:, j])

    def row_factors(
        self, values: Sequence[NDArray[Any]], scratch: NDArray[np.float64], place: Place
    ) -> NDArray[np.float64]:
        """min(1/B, shrink/‖x_i‖₁) for each row, in ``scratch[0]``; a row with NaN or ±∞ is refused."""
        norms, term = scratch
        np.abs(values[0], out=norms)
        for column in values[1:]:
            np.add(norms, np.abs(column, out=term), out=norms)
        if not math.isfinite(float(norms.sum())):
            _refuse_non_finite(list(zip(self.features, values)), place)
        with np.errstate(divide="ignore"):  # a row of zeros: its factor is 1/B
            np.divide(1.0 - 2 * len(self.features) * np.finfo(np.float64).eps, norms, out=norms)
        factors: NDArray[np.float64] = np.minimum(norms, 1.0 / self.feature_bound, out=norms)
        return factors


@dataclass(frozen=True)
class RidgeScaling(Scaling):
    """[X | y] of a chunk: features and target divided by their public bounds and clipped."""

    target_bound: float = 1.0

    @property
    def width(self) -> int:
        return len(self.features) + 1

    def fill(
        self, batch: pa.RecordBatch, block: NDArray[np.float64], scratch: NDArray[np.float64], place: Place
    ) -> NDArray[np.float64]:
        values = [_numbers(column, name, place) for column, name in zip(batch.columns, self.columns)]
        target = block[:, -1]
        np.divide(values[-1], self.target_bound, out=target)
        if not math.isfinite(float(target.sum())):
            _refuse_non_finite([(self.target, values[-1])], place)
        np.clip(target, -1.0, 1.0, out=target)
        self.fill_features(values[:-1], self.row_factors(values[:-1], scratch, place), block)
        return block


@dataclass(frozen=True)
class LogisticScaling(Scaling):
    """y_i·x_i of a chunk: features divided by the public bound and clipped, times the ±1 label."""

    positive_class: object = None

    def labels(self, column: pa.Array, place: Place) -> NDArray[np.float64]:
        """±1: +1 where the target equals ``positive_class``; without one, +1 for 1/True, −1 for −1/0/False."""
        if column.null_count:
            first = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
            raise DataError(f"{place.row(first)}, target column {self.target!r}: a missing label; {NOT_IMPUTED}")
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        values = column.to_numpy(zero_copy_only=False)
        if self.positive_class is not None:
            # A class named on the command line is text; compare a numeric or boolean column as text too.
            if isinstance(self.positive_class, str) and values.dtype.kind not in "OUS":
                values = values.astype(str)
            return np.where(values == self.positive_class, 1.0, -1.0)
        if values.dtype.kind not in "biuf" or not np.all(np.isin(values, (-1, 0, 1))):
            raise DataError(
                f"{place.path!r}: the logistic target {self.target!r} must hold −1/+1, 0/1 or booleans; for other "
                "labels name the one mapped to +1 (positive_class)"
            )
        return np.where(values == 1, 1.0, -1.0)

    def fill(
        self, batch: pa.RecordBatch, block: NDArray[np.float64], scratch: NDArray[np.float64], place: Place
    ) -> NDArray[np.float64]:
        columns = batch.columns
        values = [_numbers(column, name, place) for column, name in zip(columns[:-1], self.features)]
        factors = self.row_factors(values, scratch, place)
        factors *= self.labels(columns[-1], place)
        self.fill_features(values, factors, block)
        return block


def chunk_rows(chunk_mb: float, columns: int) -> int:
    """Rows of a batch: its decoded columns and their float64 block hold ``chunk_mb`` of numbers together."""
    if isinstance(chunk_mb, bool) or not isinstance(chunk_mb, (int, float)) or not (0 < chunk_mb < math.inf):
        raise AccFirstError(f"chunk_mb must be a number of megabytes > 0; got {chunk_mb!r}")
    return max(1, int(chunk_mb * 2**20 // (16 * columns)))


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
