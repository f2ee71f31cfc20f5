"""A chunk of rows read into a float64 block, divided by public bounds and clipped on the way
(docs/data-preparation.md#scaling-into-the-unit-ball).

Memory is bounded by a chunk, whatever the sizes of the files and of their row groups: a worker reads its part
through pyarrow's record batches of ``chunk_mb / (16 × columns)`` rows — the decoded batch and the float64 block it is
prepared into together hold ``chunk_mb`` of numbers — never a whole file or row group at once. Measured
(docs/benchmarks.md#parquet-larger-than-memory): peak RSS ≈ base + workers × (c × chunk + r), c ≈ 2 (Arrow's column builders grow by doubling) and
r ≈ 4 MB per column read (the reader's pages, set by the writer's page size, not by the row groups). The block is
allocated once per part and filled column by column straight from the Arrow buffers, divided by the public bounds and
clipped on the way (the privacy-safe scaling); the paper's data-dependent scaling (divide by the largest row norm)
reads the data, is not private, and is not available here. Nor are the in-memory preparation steps that read the data
(centring, standardising, imputation, one-hot encoding): write the Parquet files with numeric feature columns,
prepared as they should be. A chunk with a gap, NaN or ±∞ stops the pass with a ``DataError`` naming the file, the row
and the column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from accfirst.errors import AccFirstError, DataError

# Megabytes of numbers a worker holds at once: the decoded batch and its float64 block. Larger
# chunks cost memory and gain nothing (measured: the same CPU time per row from 2 to 32 MB).
CHUNK_MB = 16.0
NOT_IMPUTED = "out of core nothing is imputed: drop or fill those rows when writing the Parquet files"


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
