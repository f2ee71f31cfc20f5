"""Reading an uploaded table (CSV or Parquet) from bytes held in memory.

Nothing is written to disk: the bytes are wrapped in ``io.BytesIO``. Every problem
with the file becomes a ``DataError`` whose message says what to change. The frame
that comes back still needs ``from_frame`` (docs/data-preparation.md#scaling-into-the-unit-ball) before the algorithms
can use it.

A small file can describe a huge table (a 1.5 MB compressed Parquet file can hold
500,000 × 300 zeros, 1.2 GB as numbers), so the table's size in memory is checked
before it is built: from the Parquet metadata, and for a CSV by a first pass that
parses it in chunks of about 16 MB, counts and drops them. A table counts as
rows × columns × 8 bytes (the float64 matrix it becomes), text as its real size when
that is larger.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import warnings
from dataclasses import dataclass
from typing import Literal, TypedDict

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from accfirst.errors import DataError
from accfirst.validation import echo, shorten

READ_NOTES_ATTR = "accfirst_read_notes"
_SAMPLE_BYTES = 1 << 16
_SNIFF_ROWS = 50
_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_PARQUET_MAGIC = b"PAR1"
_PARQUET_SUFFIXES = (".parquet", ".pq")
_COMMA_DECIMAL = re.compile(r"^\s*[-+]?\d+,\d+\s*$")
_POINT_DECIMAL = re.compile(r"^\s*[-+]?\d*\.\d+\s*$")
_CELL_BYTES = 8
_CHUNK_BYTES = 16 * 1024**2
MB = 1024**2


@dataclass(frozen=True)
class UploadLimits:
    """Upper bounds an upload must respect; the app may raise them.

    Parameters
    ----------
    max_bytes : largest file accepted (default 200 MB).
    max_rows : most data rows accepted (default 2,000,000).
    max_columns : most columns accepted (default 500).
    max_memory : largest table in memory, in bytes: rows × columns × 8, or the text's
        size when larger (default 400 MB). Checked before the table is built.
    """

    max_bytes: int = 200 * MB
    max_rows: int = 2_000_000
    max_columns: int = 500
    max_memory: int = 400 * MB

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_rows", "max_columns", "max_memory"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DataError(f"upload limit {name} must be a whole number ≥ 1; got {value!r}")


def check_shape(rows: int, columns: int, limits: UploadLimits, what: str) -> None:
    """Raise ``DataError`` when a table has more rows or columns than ``limits`` allow."""
    if columns > limits.max_columns:
        raise DataError(
            f"{what} has {columns:,} columns; the limit is {limits.max_columns:,}. "
            "Remove columns you do not need, or raise the column limit"
        )
    if rows > limits.max_rows:
        raise DataError(
            f"{what} has more than {limits.max_rows:,} data rows; the limit is {limits.max_rows:,}. "
            "Upload a sample of the rows, or raise the row limit"
        )


def check_memory(size: int, limits: UploadLimits, what: str, how: str) -> None:
    """Raise ``DataError`` when a table of ``size`` bytes in memory (``how``: where the figure comes from) is too large."""
    if size > limits.max_memory:
        raise DataError(
            f"{what} would take {size / MB:,.0f} MB in memory ({how}); the limit is {limits.max_memory / MB:,.0f} MB. "
            "Upload fewer rows or columns, or raise the memory limit"
        )


def read_upload(data: bytes, filename: str, *, limits: UploadLimits = UploadLimits()) -> pd.DataFrame:
    """Parse an uploaded CSV or Parquet file held in memory into a ``DataFrame``.

    Parquet is recognised by its magic bytes or a ``.parquet``/``.pq`` name; anything
    else is read as CSV: UTF-8 with or without a byte-order mark, delimiter sniffed
    among comma, semicolon, tab and pipe, quoted fields allowed, and a decimal comma
    accepted in files whose delimiter is not a comma. Column names are stripped of
    surrounding spaces. How the file was read is kept in
    ``df.attrs["accfirst_read_notes"]`` (``from_frame`` copies it into its report).

    Parameters
    ----------
    data : the file's bytes.
    filename : the name the user uploaded (used for the format and in messages).
    limits : size and shape limits (defaults: 200 MB, 2,000,000 rows, 500 columns, 400 MB in memory).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be the file's bytes; got {type(data).__name__}")
    data = bytes(data)
    shown = echo(filename)  # quoted and cut to ~80 characters: the name is the user's text
    if len(data) == 0:
        raise DataError(f"{shown} is empty (0 bytes); upload a CSV or Parquet file with a header row and data rows")
    if len(data) > limits.max_bytes:
        raise DataError(
            f"{shown} is {len(data) / 1024**2:,.1f} MB; the limit is {limits.max_bytes / 1024**2:,.0f} MB. "
            "Upload fewer rows or columns, or raise the size limit"
        )
    if data.startswith(_PARQUET_MAGIC) or filename.lower().endswith(_PARQUET_SUFFIXES):
        df, notes = _read_parquet(data, shown, limits)
    else:
        df, notes = _read_csv(data, shown, limits)
    if len(df) == 0:
        raise DataError(f"{shown} has a header row but no data rows; add at least 20 rows of data")
    df.attrs[READ_NOTES_ATTR] = (*notes, f"read {len(df):,} rows × {df.shape[1]:,} columns from {shown}")
    return df


def _read_parquet(data: bytes, shown: str, limits: UploadLimits) -> tuple[pd.DataFrame, tuple[str, ...]]:
    if not data.startswith(_PARQUET_MAGIC):
        raise DataError(
            f"{shown} is named like a Parquet file but is not one (it does not start with 'PAR1'); "
            "re-export it as Parquet, or upload it as a .csv file"
        )
    # A damaged file makes pyarrow raise almost anything (ArrowInvalid, OSError, KeyError from
    # its pandas metadata, UnicodeDecodeError); all of them mean "this is not a readable Parquet file".
    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        metadata, schema = parquet.metadata, parquet.schema_arrow
        rows, columns = metadata.num_rows, metadata.num_columns
        decoded = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    except Exception as exc:
        raise _parquet_error(shown, exc) from exc
    check_shape(rows, columns, limits, shown)
    check_memory(rows * columns * _CELL_BYTES, limits, shown, f"{rows:,} rows × {columns:,} columns × 8 bytes")
    check_memory(decoded, limits, shown, "its data uncompressed")
    nested = [field.name for field in schema if pa.types.is_nested(field.type)]
    if nested:
        raise DataError(
            f"{shown} has nested columns (lists or structs): {shorten(', '.join(map(str, nested)))}; "
            "flatten them into one number per cell"
        )
    # Text stays dictionary-encoded while it is read, so a value repeated on every row is held once
    # (a column of one long string would otherwise be copied once per row before any check).
    text = [field.name for field in schema if _is_text(field.type)]
    try:
        table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read()
        df = table.to_pandas(self_destruct=True, split_blocks=True)
        del table
    except Exception as exc:
        raise _parquet_error(shown, exc) from exc
    for name in text:
        df[name] = df[name].astype(object)  # one reference per row to the shared strings, as a CSV gives
    df.columns = [str(name).strip() for name in df.columns]
    check_unique(list(df.columns), shown)
    return df, (f"read {shown} as Parquet",)


class _CsvOptions(TypedDict):
    """How ``pd.read_csv`` reads an upload: the sniffed delimiter and decimal mark."""

    sep: str
    decimal: str
    encoding: str
    engine: Literal["c"]


def _read_csv(data: bytes, shown: str, limits: UploadLimits) -> tuple[pd.DataFrame, tuple[str, ...]]:
    sample_bytes = data[:_SAMPLE_BYTES]
    if b"\x00" in sample_bytes:
        raise DataError(
            f"{shown} looks like a binary file (or UTF-16 text), not a CSV; "
            "save it as 'CSV UTF-8' or Parquet and upload it again"
        )
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        sample = codecs.getincrementaldecoder("utf-8-sig")().decode(sample_bytes, final=len(data) <= _SAMPLE_BYTES)
    except UnicodeDecodeError as exc:
        raise _not_utf8(shown, exc) from exc
    if len(data) > _SAMPLE_BYTES and "\n" in sample:
        sample = sample[: sample.rindex("\n") + 1]
    sample = sample.replace("\r\n", "\n").replace("\r", "\n")
    if not sample.strip() and len(data) <= _SAMPLE_BYTES:
        raise DataError(f"{shown} contains only blank lines; upload a file with a header row and data rows")
    delimiter = _sniff_delimiter(sample)
    header = next((row for row in csv.reader(io.StringIO(sample), delimiter=delimiter) if row), [])
    check_shape(0, len(header), limits, shown)
    names = [name.strip() for name in header]
    check_unique([name for name in names if name], shown)
    decimal = "," if delimiter != "," and _uses_decimal_comma(sample, delimiter) else "."
    options = _CsvOptions(sep=delimiter, decimal=decimal, encoding="utf-8-sig", engine="c")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            _check_csv_size(data, options, len(header), limits, shown)
            df = pd.read_csv(io.BytesIO(data), nrows=limits.max_rows + 1, **options)
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise _not_utf8(shown, exc) from exc
    except pd.errors.ParserError as exc:
        raise DataError(
            f"could not parse {shown} as CSV with {_DELIMITER_NAMES[delimiter]} delimiters ({_tidy(exc)}); "
            f"check that every row has the same number of fields as the header and that text containing "
            f"'{delimiter}' is in double quotes"
        ) from exc
    except (ValueError, OverflowError, csv.Error) as exc:
        raise DataError(f"could not parse {shown} as CSV ({_tidy(exc)}); check the file in a spreadsheet") from exc
    check_shape(len(df), df.shape[1], limits, shown)
    df.columns = [str(name).strip() for name in df.columns]
    encoding = "UTF-8 with byte-order mark" if bom else "UTF-8"
    notes = [f"read {shown} as CSV: {_DELIMITER_NAMES[delimiter]}-delimited, {encoding}"]
    if decimal == ",":
        notes.append("numbers were read with a decimal comma (e.g. 1,5 = 1.5)")
    return df, tuple(notes)


def _check_csv_size(data: bytes, options: _CsvOptions, columns: int, limits: UploadLimits, shown: str) -> None:
    """Parse the CSV in chunks of about 16 MB, keeping only counts: too many rows or too much memory → ``DataError``.

    Run before the table is read whole, so a file over the limits never takes more
    memory than one chunk. (Reading it whole afterwards keeps the column types that
    one pass over all rows infers.)
    """
    chunk_rows = max(1, _CHUNK_BYTES // (_CELL_BYTES * max(columns, 1)))
    rows = size = 0
    for chunk in pd.read_csv(io.BytesIO(data), chunksize=chunk_rows, **options):
        rows += len(chunk)
        size += max(chunk.size * _CELL_BYTES, int(chunk.memory_usage(index=False, deep=True).sum()))
        check_shape(rows, chunk.shape[1], limits, shown)
        check_memory(size, limits, shown, f"counting only its first {rows:,} rows × {chunk.shape[1]:,} columns")


def _is_text(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or (pa.types.is_large_binary(kind))
    )


def _sniff_delimiter(sample: str) -> str:
    """The candidate that splits the header into the most fields and most rows into as many."""
    best, best_key = ",", (False, 1)
    for delimiter in _DELIMITERS:
        widths = []
        for row in csv.reader(io.StringIO(sample), delimiter=delimiter):
            if row:
                widths.append(len(row))
            if len(widths) > _SNIFF_ROWS:
                break
        if not widths or widths[0] < 2:
            continue
        consistent = sum(width == widths[0] for width in widths) >= 0.9 * len(widths)
        key = (consistent, widths[0])
        if key > best_key:
            best, best_key = delimiter, key
    return best


def _uses_decimal_comma(sample: str, delimiter: str) -> bool:
    rows = list(csv.reader(io.StringIO(sample), delimiter=delimiter))[1 : _SNIFF_ROWS + 1]
    fields = [field for row in rows for field in row]
    comma = any(_COMMA_DECIMAL.match(field) for field in fields)
    point = any(_POINT_DECIMAL.match(field) for field in fields)
    return comma and not point


def check_unique(names: list[str], what: str) -> None:
    """Raise ``DataError`` when a column name appears more than once."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    repeated = [f"{echo(name)} ({count} times)" for name, count in seen.items() if count > 1]
    if repeated:
        raise DataError(
            f"{what} has repeated column names: {', '.join(repeated[:5])}; "
            "rename the columns so that each name appears once"
        )


def _parquet_error(shown: str, exc: Exception) -> DataError:
    return DataError(f"could not read {shown} as Parquet ({_tidy(exc)}); re-export it, or upload a CSV")


def _not_utf8(shown: str, exc: UnicodeDecodeError) -> DataError:
    return DataError(
        f"{shown} is not UTF-8 text (byte {exc.start} cannot be decoded); "
        "if it is a spreadsheet, save it as 'CSV UTF-8' or Parquet and upload it again"
    )


def _tidy(exc: BaseException) -> str:
    """A reader's message on one line, cut short (it may quote the file's contents)."""
    return shorten(" ".join(str(exc).split()).replace("Error tokenizing data. C error: ", ""), 200)
