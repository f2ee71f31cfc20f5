"""Reading a table's columns, before any preparation: names, target, candidate features, types.

Both preparations (the private default and the evaluation-only mode) start here. Nothing in
this module computes a statistic of the data: it checks the table's shape and names (public),
converts a column to numbers when every value is a number or a missing-value marker such as
``?`` or ``NA`` (its type), and turns text into codes (``Categorical``). The messages quote the
user's names cut to a readable length.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple, SupportsFloat, SupportsIndex

import numpy as np
import pandas as pd

from accfirst.datasets.upload import READ_NOTES_ATTR, UploadLimits, check_shape, check_unique
from accfirst.errors import DataError
from accfirst.validation import ECHO_CHARS, echo, shorten

MIN_ROWS = 20
MISSING_MARKERS = frozenset({"", "?", "-", "na", "n/a", "nan", "null", "none"})


class Categorical(NamedTuple):
    """A text column: ``codes`` index ``levels`` (−1 where missing); how many missing markers were read."""

    codes: np.ndarray
    levels: tuple[str, ...]
    markers: int = 0
    marker_example: str = ""


def is_text(series: pd.Series) -> bool:
    """Whether a column holds text (object, string or categorical dtype)."""
    dtype = series.dtype
    return (
        pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    )


def present(column: np.ndarray | Categorical) -> np.ndarray:
    """Where a feature column has a usable value."""
    return column.codes >= 0 if isinstance(column, Categorical) else np.isfinite(column)


class Table(NamedTuple):
    """A table's columns by name (stripped), the target's name and the notes of how the file was read."""

    columns: dict[str, pd.Series]
    target: str
    notes: tuple[str, ...]

    @property
    def n(self) -> int:
        """Rows in the table (public: neighbouring tables differ by replacing one row)."""
        return len(next(iter(self.columns.values())))


def read_table(df: pd.DataFrame, target: str, limits: UploadLimits) -> Table:
    """Check the table's shape and names and find the target column."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    check_shape(len(df), df.shape[1], limits, "the table")
    if len(df) < MIN_ROWS:
        raise DataError(
            f"the table has only {len(df)} data row{'s' if len(df) != 1 else ''}; at least {MIN_ROWS} are needed "
            "to split the data into training and test parts"
        )
    names = [str(name).strip() for name in df.columns]
    check_unique(names, "the table")
    columns = {name: df.iloc[:, i] for i, name in enumerate(names)}
    target = str(target).strip()
    if target not in columns:
        raise DataError(f"target column {quoted(target)} is not in the data; the columns are: {listing(names)}")
    return Table(columns, target, tuple(df.attrs.get(READ_NOTES_ATTR, ())))


def candidate_features(table: Table, features: Sequence[str] | None, skipped: Sequence[str] = ()) -> list[str]:
    """The chosen feature columns, or every column but the target and the ``skipped`` ones."""
    names = list(table.columns)
    target = table.target
    if features is None:
        candidates = [name for name in names if name != target and name not in skipped]
        if not candidates:
            raise DataError(f"the table has no columns besides the target {quoted(target)}; add feature columns")
        return candidates
    if isinstance(features, str):
        raise TypeError("features must be a list of column names, not a single string")
    chosen = [str(name).strip() for name in features]
    if not chosen:
        raise DataError("choose at least one feature column")
    unknown = [name for name in chosen if name not in names]
    if unknown:
        raise DataError(f"feature column(s) {listing(unknown)} are not in the data; the columns are: {listing(names)}")
    if target in chosen:
        raise DataError(f"{quoted(target)} is the target; remove it from the feature columns")
    repeated = sorted({name for name in chosen if chosen.count(name) > 1})
    if repeated:
        raise DataError(f"feature column(s) {listing(repeated)} are chosen more than once; choose each once")
    return chosen


def check_log1p(log1p_columns: Collection[str], candidates: list[str]) -> set[str]:
    """The ``log(1 + x)`` columns, which must be among the candidate features."""
    if isinstance(log1p_columns, str):
        raise TypeError("log1p_columns must be a list of column names, not a single string")
    chosen = {str(name).strip() for name in log1p_columns}
    outside = sorted(chosen - set(candidates))
    if outside:
        raise DataError(
            f"log(1 + x) column(s) {listing(outside)} are not feature columns; "
            "choose log(1 + x) columns among the features"
        )
    return chosen


class Converted(NamedTuple):
    """A column as float64 (``values``), or ``None`` with an ``example`` of a non-numeric value."""

    values: np.ndarray | None
    example: object = None
    markers: int = 0
    marker_example: str = ""


def numeric(series: pd.Series) -> Converted:
    """The column as float64 when every value is a number or a missing-value marker."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return Converted(series.to_numpy(dtype=np.float64, na_value=np.nan))
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return Converted(series.to_numpy(dtype=np.float64, na_value=np.nan))
    if not (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)):
        return Converted(None, f"<{dtype}>")
    try:
        numbers = pd.to_numeric(series, errors="coerce")
    except (TypeError, ValueError):
        return Converted(None, series.dropna().iloc[0] if series.notna().any() else None)
    failed = series[numbers.isna() & series.notna()]
    words = pd.Series(failed.astype(str).unique()).str.strip()
    unknown = words[~words.str.lower().isin(MISSING_MARKERS)]
    if len(unknown):
        return Converted(None, unknown.iloc[0])
    marker = quoted(words.iloc[0]) if len(words) else ""
    return Converted(numbers.to_numpy(dtype=np.float64, na_value=np.nan), None, len(failed), marker)


def text(series: pd.Series) -> Categorical:
    """A column as text codes (numbers written as they read: 1.0 as ``1``); markers such as ``?`` are gaps."""
    if not is_text(series):
        series = series.map(fmt, na_action="ignore")
    stripped = series.astype("string").str.strip()
    marker = stripped.str.lower().isin(MISSING_MARKERS).fillna(False).to_numpy(dtype=bool)
    markers = int(marker.sum())
    example = f"'{stripped[marker].iloc[0]}'" if markers else ""
    codes, uniques = pd.factorize(stripped.mask(marker))
    return Categorical(codes.astype(np.int64), tuple(str(level) for level in uniques), markers, example)


def marker_note(name: str, converted: Converted | Categorical) -> list[str]:
    """A note on the values read as missing (``?``, ``NA``, …), or none."""
    if not converted.markers:
        return []
    example = converted.marker_example  # already quoted; one of the known missing markers
    return [f"column {quoted(name)}: {converted.markers:,} value(s) such as {example} read as missing"]


def column_kind(series: pd.Series) -> str | None:
    """The type the file gives a column: ``"numeric"`` (every value a number or a missing marker), ``"text"``, or
    ``None`` (neither, such as dates). It depends on every value (one word makes a column text): the evaluation-only
    preparation and the app's prefill use it; the private preparation reads each cell on its own (``prepare.kind``)."""
    if numeric(series).values is not None:
        return "numeric"
    return "text" if is_text(series) else None


def guess_task(target: pd.Series, *, read_values: bool = False) -> str:
    """The task a target suggests: logistic for a text (or true/false) column, else ridge (its type only).

    With ``read_values`` (evaluation only) a column with exactly two distinct values is logistic too.
    """
    if read_values:
        return "logistic" if target.dropna().nunique() == 2 else "ridge"
    return "logistic" if is_text(target) or pd.api.types.is_bool_dtype(target.dtype) else "ridge"


def ridge_target(series: pd.Series, target: str) -> tuple[np.ndarray, list[str]]:
    """A ridge target as float64 (``nan`` where missing) and its notes."""
    converted = numeric(series)
    if converted.values is None:
        raise DataError(
            f"target column {quoted(target)} is not numeric (it has values such as {echo(converted.example)}); "
            "pick a numeric column for ridge regression, or choose logistic regression for a class target"
        )
    return converted.values, [f"target {quoted(target)} (ridge regression)", *marker_note(target, converted)]


class LabelKeys(NamedTuple):
    """A class column as comparable keys (numbers, or stripped texts) and where a value is present."""

    keys: np.ndarray
    present: np.ndarray
    numeric: bool


def label_keys(series: pd.Series, target: str) -> LabelKeys:
    """The target's values as keys to compare with a class (no statistic is computed)."""
    numbers = None if pd.api.types.is_bool_dtype(series.dtype) else numeric(series).values
    if numbers is not None:
        return LabelKeys(numbers, np.isfinite(numbers), True)
    try:
        codes, uniques = pd.factorize(series)
    except TypeError as exc:
        raise DataError(
            f"target column {quoted(target)} holds values that are neither numbers nor text; pick another column"
        ) from exc
    stripped = np.array([str(value).strip() for value in uniques] + [""], dtype=object)
    keys = stripped[codes]
    return LabelKeys(keys, keys != "", False)


def matches(keys: LabelKeys, value: object) -> np.ndarray:
    """Where the keys equal a class given by the user (a number, or a text compared after stripping)."""
    if keys.numeric:
        try:
            if not isinstance(value, (str, SupportsFloat, SupportsIndex)):
                raise TypeError
            number = float(value.strip()) if isinstance(value, str) else float(value)
        except (TypeError, ValueError):
            return np.zeros(len(keys.keys), dtype=bool)
        hits: np.ndarray = keys.keys == number
        return hits
    same: np.ndarray = keys.keys == fmt(value).strip()
    return same


def fmt(value: object) -> str:
    """A value for a message: whole floats without ``.0``, other floats to 6 significant digits."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def quoted(value: object) -> str:
    """A name or value from the user's table, quoted for a message and cut to a readable length."""
    return f"'{shorten(fmt(value), ECHO_CHARS)}'"


def listing(values: Sequence[object], limit: int = 10) -> str:
    """The first ``limit`` values quoted, and how many more."""
    shown = ", ".join(quoted(v) for v in list(values)[:limit])
    return shown + (f" (and {len(values) - limit:,} more)" if len(values) > limit else "")
