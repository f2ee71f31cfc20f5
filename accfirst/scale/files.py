"""The Parquet files a pass reads: found, their schemas checked against each other, their rows split into parts
(docs/data-preparation.md#scaling-into-the-unit-ball).

Only the files' footers are read here. Every file's schema is checked against the others before any row is read: a
``DataError`` names the file and the column, and the problem is never built, so no privacy is spent. A part is
consecutive row groups of one file, the rows one task of a pass reads.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from accfirst.datasets.prepare.identifiers import looks_like_identifier
from accfirst.errors import DataError

# Consecutive row groups of a file read by one task, up to about this many rows: enough tasks
# to keep every worker busy, few enough that scheduling them costs nothing.
PART_ROWS = 1 << 20
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")


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

    Reads only the files' footers. The features by default: every column but the target and
    those whose names read as identifiers (``customer_id``, ``ID``, …). Raises ``DataError``
    naming the file and the column for a glob that matches nothing, a missing target or feature,
    a non-numeric feature, a column that holds something else (or is missing) in another file, or
    a text label without ``positive_class``.
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
            # Identifiers by name are not features unless chosen (docs/data-preparation.md#columns-and-types).
            default = [c for c in kinds if c != target and not looks_like_identifier(c)]
            chosen = default if features is None else list(features)
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
