"""From a table to arrays that satisfy SPEC §1: ``from_frame`` and its preprocessing (SPEC §11).

The steps, in order: pick the target and the feature columns; map logistic labels to
±1; drop rows whose target is missing (and, with ``missing="drop"``, rows with any gap);
a seeded train/test split (stratified by class for logistic); optional ``log(1 + x)``
columns; fill gaps with training medians or most frequent levels and one-hot encode text
columns (``accfirst.datasets.encode``); optional ``log(1 + y)`` target; centring by the
training means and standardising numeric columns (both by default); then scaling. Every step
is noted in the ``PrepReport``, with a word on each one that reads the data.

Feature columns are dropped, with a note, when they have no usable value or are constant,
or hold text while one-hot encoding is off (``max_levels=0``); with the default selection
also when more than half of their values are missing, when they hold the row numbers
(0, 1, 2, … as written by a spreadsheet or by pandas), or when they are text with mostly
distinct values (identifiers, free text). Text such as ``?``, ``NA`` or ``null`` is read as
missing, with a note.

Scaling ``"paper"`` (appendix B.1 of the paper) divides every feature by the largest
training row ℓ1 norm and a ridge target by the largest training ``|y|``. It reads the
data and is **not** private, as the paper says. Scaling ``"clip"`` divides by public
bounds the user states and clips every row to ``‖x‖₁ ≤ 1`` (and ``y`` to ``[−1, 1]``);
it reads nothing from the data. Test rows use the training constants and are clipped
the same way; they serve only the quality figures.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from accfirst.datasets.encode import Categorical, categorical, encode, is_text, present
from accfirst.datasets.prepared import TASKS, DatasetInfo, PreparedData, PrepReport
from accfirst.datasets.upload import READ_NOTES_ATTR, UploadLimits, check_shape, check_unique
from accfirst.errors import DataError
from accfirst.validation import ECHO_CHARS, echo, shorten

MIN_ROWS = 20
MAX_MISSING_SHARE = 0.5
# A text column with more distinct values than this share of its rows looks like an identifier.
MAX_DISTINCT_SHARE = 0.5
MISSING_CHOICES = ("impute", "drop")
DEFAULT_MAX_LEVELS = 20
SCALINGS = ("paper", "clip")
MISSING_MARKERS = frozenset({"", "?", "-", "na", "n/a", "nan", "null", "none"})
_POSITIVE_WORDS = ("yes", "y", "true", "t", "1", "positive", "pos")
_ROW_CHUNK = 1 << 16
OUT_OF_CORE_SCALING = (
    "out of core the rows are divided by public bounds and clipped (docs/data-preparation.md); the paper's scaling by the "
    "data's largest row norm is not available: it reads the data (not private) and would need a pass of its own"
)
_TOO_LARGE = (
    "some values are too large to add up in floating point (near 1e308); "
    "rescale those columns (e.g. divide by a million) or apply log(1 + x) to them"
)


@np.errstate(over="ignore", invalid="ignore")  # values near 1e308 overflow; the finiteness check reports them
def from_frame(
    df: pd.DataFrame,
    *,
    target: str,
    task: str,
    features: Sequence[str] | None = None,
    positive_class: object = None,
    log1p_columns: Sequence[str] = (),
    log1p_target: bool = False,
    scaling: str = "paper",
    feature_bound: float | None = None,
    target_bound: float | None = None,
    center: bool = True,
    standardize: bool = True,
    missing: str = "impute",
    max_levels: int = DEFAULT_MAX_LEVELS,
    test_size: float = 0.2,
    seed: int = 0,
    limits: UploadLimits = UploadLimits(),
    info: DatasetInfo | None = None,
) -> PreparedData:
    """Prepare a table for the accuracy-first algorithms (SPEC §1, §11).

    Parameters
    ----------
    df : the table, e.g. from ``read_upload``.
    target : the column to predict.
    task : ``"ridge"`` (numeric target) or ``"logistic"`` (two classes, or one class against the rest).
    features : feature columns; default: every column except the target. Constant columns are
        dropped with a note; by default columns with more than half of their values missing,
        row-number columns and text columns that look like identifiers are dropped too
        (chosen columns are kept).
    positive_class : the target value mapped to +1 (logistic). Needed with more than two
        classes; with two, the default is the larger number, a yes-like word, or the last in sort order.
    log1p_columns : numeric feature columns transformed by ``x ↦ log(1 + x)`` (values must be ≥ 0).
    log1p_target : transform a ridge target by ``y ↦ log(1 + y)`` (values must be ≥ 0).
    scaling : ``"paper"`` (divide by the data's largest row ℓ1 norm and ``max |y|``; not private)
        or ``"clip"`` (divide by ``feature_bound`` and ``target_bound``, then clip; private).
    feature_bound : public bound on a row's ℓ1 norm after ``log1p``, one-hot encoding, centring and
        standardising (``"clip"`` only).
    target_bound : public bound on ``|y|`` after ``log1p`` and centring (``"clip"`` with ridge only).
    center : subtract the training means of the features (and of a ridge target) before
        scaling, because the models have no intercept. Reads the data; not private.
        Default ``True``.
    standardize : divide every numeric feature by its training standard deviation (after
        ``log(1 + x)`` and centring), so that a column in large units does not crowd the
        others out of the row-norm scaling; one-hot columns keep their 0/1. Reads the data;
        not private. Default ``True``.
    missing : ``"impute"`` (default) fills a missing or infinite feature value with the training
        rows' median (numeric) or most frequent level (text); ``"drop"`` drops the row instead.
        Rows with a missing target are always dropped. Imputing reads the data; not private.
    max_levels : text columns are one-hot encoded into at most this many 0/1 columns, levels
        learnt from the training rows; beyond the cap the rarest levels share one
        ``"(other)"`` column. ``0`` leaves text columns out (the behaviour before one-hot
        encoding); otherwise at least 2. Default 20.
    test_size : share of rows held out for the quality figures, in (0, 1); default 0.2.
    seed : seed of the train/test split.
    limits : shape limits of an upload (rows, columns).
    info : the ``DatasetInfo`` of a built-in dataset, attached to the result.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    if task not in TASKS:
        raise DataError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    if scaling not in SCALINGS:
        raise DataError(f"scaling must be 'paper' or 'clip'; got {scaling!r}")
    if missing not in MISSING_CHOICES:
        raise DataError(f"missing must be 'impute' (fill gaps) or 'drop' (drop rows with gaps); got {missing!r}")
    whole = isinstance(max_levels, numbers.Integral) and not isinstance(max_levels, bool)
    if not whole or max_levels < 0 or max_levels == 1:
        raise DataError(
            f"max_levels (the most one-hot columns per text column) must be 0 (leave text columns out) "
            f"or a whole number ≥ 2; got {max_levels!r}"
        )
    for name, flag in (("center", center), ("standardize", standardize)):
        if not isinstance(flag, (bool, np.bool_)):
            raise DataError(f"{name} must be True or False; got {flag!r}")
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) or not 0 < test_size < 1:
        raise DataError(f"test_size (the share of rows held out for testing) must be in (0, 1); got {test_size!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise DataError(f"seed must be a whole number ≥ 0; got {seed!r}")
    if log1p_target and task != "ridge":
        raise DataError("log(1 + y) applies to a ridge target only; logistic labels are classes")
    bounds = _clip_bounds(scaling, task, feature_bound, target_bound)
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
        raise DataError(f"target column {_quoted(target)} is not in the data; the columns are: {_listing(names)}")

    steps = list(df.attrs.get(READ_NOTES_ATTR, ()))
    if feature_bound is not None and scaling != "clip":
        steps.append("feature_bound ignored: it applies to 'clip' scaling only")
    if target_bound is not None and (scaling != "clip" or task != "ridge"):
        steps.append("target_bound ignored: it applies to ridge regression with 'clip' scaling only")
    y_values, positive, target_notes = _target(columns[target], target, task, positive_class)
    steps.extend(target_notes)
    candidates = _candidate_features(names, target, features)
    log1p_set = _check_log1p(log1p_columns, candidates)
    kept, values, dropped, marker_notes = _feature_columns(
        columns, candidates, target, explicit=features is not None, max_levels=max_levels
    )
    steps.extend(marker_notes)

    ok, missing_note = _usable_rows(y_values, kept, values, target, missing)
    _check_target_spread(task, target, y_values, ok, positive)
    for name, column in zip(kept, values):
        value = _constant_value(column, ok)
        if value is not None:
            dropped.append((name, f"constant in the usable rows (every value is {value})"))
    dropped_names = {name for name, _ in dropped}
    values = [column for name, column in zip(kept, values) if name not in dropped_names]
    kept = [name for name in kept if name not in dropped_names]
    if not kept:
        raise DataError(_no_features_message(dropped, target))
    steps.extend(f"dropped column {_quoted(name)}: {reason}" for name, reason in dropped)
    steps.extend([missing_note] if missing_note else [])

    log1p_used = tuple(name for name in kept if name in log1p_set)
    for name in sorted(log1p_set - set(kept)):
        steps.append(f"log(1 + x) not applied to {_quoted(name)}: the column was dropped")
    _check_log1p_domain(kept, values, log1p_used, y_values if log1p_target else None, target, ok)

    train_rows, test_rows = _split(np.flatnonzero(ok), y_values, task, test_size, seed)
    steps.append(
        f"split {int(ok.sum()):,} rows at random (seed {seed}) into {len(train_rows):,} training and "
        f"{len(test_rows):,} test rows{' within each class' if task == 'logistic' else ''}; "
        "the private algorithms see only the training rows"
    )
    if log1p_used:
        steps.append(f"applied log(1 + x) to {len(log1p_used)} column(s): {_listing(log1p_used)}")
    encoded = encode(kept, values, train_rows, test_rows, set(log1p_used), max_levels)
    steps.extend(encoded.notes)
    X_train, X_test = encoded.X_train, encoded.X_test
    y_train, y_test = y_values[train_rows], y_values[test_rows]
    y_test_original = y_test.copy() if task == "ridge" else None
    if log1p_target:
        np.log1p(y_train, out=y_train)
        np.log1p(y_test, out=y_test)
        steps.append(f"applied log(1 + y) to the target {_quoted(target)}")
    target_mean = None
    if center:
        target_mean, note = _center(X_train, X_test, y_train, y_test, task)
        steps.append(note)
    standardized = bool(standardize and encoded.numeric)
    if standardized:
        steps.append(_standardize(X_train, X_test, encoded.numeric, encoded.names))
    feature_scale, target_scale, clipped_train, clipped_test, scale_notes = _scale(
        X_train, X_test, y_train, y_test, task, bounds
    )
    steps.extend(scale_notes)
    for array in (X_train, X_test, y_train, y_test):
        if not np.isfinite(array).all():
            raise DataError(_TOO_LARGE)
        array.flags.writeable = False
    if y_test_original is not None:
        y_test_original.flags.writeable = False

    report = PrepReport(
        steps=tuple(steps),
        dropped_columns=tuple(dropped),
        rows_dropped_missing=len(df) - int(ok.sum()),
        feature_scale=feature_scale,
        target_scale=target_scale,
        scaling=scaling,
        private_scaling=scaling == "clip" and not (center or standardized or encoded.imputed or encoded.one_hot),
        n_train=len(train_rows),
        n_test=len(test_rows),
        positive_class=positive,
        log1p_columns=log1p_used,
        log1p_target=bool(log1p_target),
        centered=bool(center),
        rows_clipped_train=clipped_train,
        rows_clipped_test=clipped_test,
        missing=missing,
        imputed=encoded.imputed,
        max_levels=int(max_levels),
        one_hot=encoded.one_hot,
        target_mean=target_mean,
        standardized=standardized,
    )
    return PreparedData(
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        task=task,
        feature_names=encoded.names,
        target_name=target,
        report=report,
        info=info,
        y_test_original=y_test_original,
    )


def _target(series: pd.Series, target: str, task: str, positive_class: object) -> tuple[np.ndarray, object, list[str]]:
    """The target as float64: ridge values, or logistic labels ±1; ``nan`` where missing."""
    if task == "logistic":
        labels, positive, note = _labels(series, target, positive_class)
        return labels, positive, [note]
    converted = _numeric(series)
    if converted.values is None:
        raise DataError(
            f"target column {_quoted(target)} is not numeric (it has values such as {echo(converted.example)}); "
            "pick a numeric column for ridge regression, or choose logistic regression for a class target"
        )
    return converted.values, None, [f"target {_quoted(target)} (ridge regression)", *_marker_note(target, converted)]


def _feature_columns(
    columns: dict[str, pd.Series], candidates: list[str], target: str, explicit: bool, max_levels: int
) -> tuple[list[str], list[np.ndarray | Categorical], list[tuple[str, str]], list[str]]:
    """The usable candidates (numeric arrays, or text as ``Categorical`` when ``max_levels`` > 0),
    the dropped ones with reasons, and notes on missing markers."""
    kept, values, dropped, notes = [], [], [], []
    for name in candidates:
        column: _Converted | Categorical = _numeric(columns[name])
        if column.values is None and max_levels and is_text(columns[name]):
            column = categorical(columns[name], MISSING_MARKERS)
        reason = _unusable(column, explicit, max_levels)
        if reason:
            dropped.append((name, reason))
            continue
        notes.extend(_marker_note(name, column))
        kept.append(name)
        values.append(column if isinstance(column, Categorical) else column.values)
    if not kept:
        raise DataError(_no_features_message(dropped, target))
    return kept, values, dropped, notes


def _usable_rows(
    y: np.ndarray, names: list[str], values: list[np.ndarray | Categorical], target: str, missing: str
) -> tuple[np.ndarray, str]:
    """Rows with a finite target (and, with ``missing="drop"``, every feature present),
    and a note on the rows dropped (``""`` if none)."""
    ok = np.isfinite(y)
    gaps = [(target, int(np.count_nonzero(~ok)))]
    for name, column in zip(names, values):
        usable = present(column)
        gaps.append((name, len(y) - int(usable.sum())))
        if missing == "drop":
            ok &= usable
    n_ok = int(ok.sum())
    dropped = len(y) - n_ok
    if n_ok == 0:
        detail = (
            ""
            if missing == "impute"
            else " or in a feature; fill the gaps (missing='impute') or drop the columns with many gaps and try again"
        )
        raise DataError(f"every row has a missing or infinite value in the target {_quoted(target)}{detail}")
    if n_ok < MIN_ROWS:
        detail = f" after dropping {dropped:,} with missing values" if dropped else ""
        raise DataError(
            f"only {n_ok} usable row{'s' if n_ok != 1 else ''}{detail}; at least {MIN_ROWS} are needed "
            "to split the data into training and test parts"
        )
    if not dropped:
        return ok, ""
    if missing == "impute":
        return ok, f"dropped {dropped:,} of {len(y):,} rows whose target {_quoted(target)} is missing or infinite"
    worst = sorted((c for c in gaps if c[1]), key=lambda c: -c[1])[:5]
    listed = ", ".join(f"{_quoted(name)} {count:,}" for name, count in worst)
    note = (
        f"dropped {dropped:,} of {len(y):,} rows with a missing or infinite value "
        f"(gaps per column, largest first: {listed})"
    )
    return ok, note


def _constant_value(column: np.ndarray | Categorical, ok: np.ndarray) -> str | None:
    """The single value a column takes in the usable rows where present, or ``None`` if it varies."""
    mask = ok & present(column)
    if isinstance(column, Categorical):
        codes = np.unique(column.codes[mask])
        return _quoted(column.levels[codes[0]]) if codes.size == 1 else None
    return _fmt(column[np.argmax(mask)]) if _is_constant(column, mask) else None


def _check_log1p_domain(
    names: list[str],
    values: list[np.ndarray | Categorical],
    log1p_columns: tuple[str, ...],
    y: np.ndarray | None,
    target: str,
    ok: np.ndarray,
) -> None:
    """``log(1 + x)`` is for counts and other values ≥ 0: refuse text columns and negative usable values."""
    for name, column in zip(names, values):
        if name not in log1p_columns:
            continue
        if isinstance(column, Categorical):
            raise DataError(f"column {_quoted(name)} holds text; log(1 + x) applies to numeric columns only")
        low = float(np.min(column, where=ok & np.isfinite(column), initial=np.inf))
        if low < 0:
            raise DataError(
                f"column {_quoted(name)} has negative values (smallest {_fmt(low)}); log(1 + x) is meant for counts "
                "and other values ≥ 0, so remove it from the log(1 + x) columns"
            )
    if y is not None:
        low = float(np.min(y, where=ok, initial=np.inf))
        if low < 0:
            raise DataError(
                f"target column {_quoted(target)} has negative values (smallest {_fmt(low)}); log(1 + y) needs "
                "values ≥ 0, so switch off the log(1 + y) target"
            )


def _center(
    X_train: np.ndarray, X_test: np.ndarray, y_train: np.ndarray, y_test: np.ndarray, task: str
) -> tuple[float | None, str]:
    """Subtract training means in place (the ridge target too); returns the target's mean and the note."""
    means = X_train.mean(axis=0)
    X_train -= means
    X_test -= means
    if task != "ridge":
        return None, (
            "subtracted the training means of the features (the model has no intercept); "
            "the means read the data and are not private"
        )
    y_mean = float(y_train.mean())
    y_train -= y_mean
    y_test -= y_mean
    return y_mean, (
        f"subtracted the training means of the features and of the target ({_fmt(y_mean)}), because the model "
        "has no intercept; the means read the data and are not private"
    )


def _standardize(X_train: np.ndarray, X_test: np.ndarray, columns: Sequence[int], names: Sequence[str]) -> str:
    """Divide the numeric ``columns`` by their training standard deviations in place; returns the note."""
    sds = X_train[:, columns].std(axis=0)
    # A column constant in the training rows (possible after filling gaps) has nothing to rescale.
    sds[sds == 0] = 1.0
    X_train[:, columns] /= sds
    X_test[:, columns] /= sds
    shown = ", ".join(f"{_quoted(names[j])} {sd:.4g}" for j, sd in zip(columns[:6], sds[:6]))
    more = f", and {len(columns) - 6} more" if len(columns) > 6 else ""
    return (
        f"divided each of the {len(columns)} numeric feature(s) by its training standard deviation ({shown}{more}), "
        "so that columns in large units do not crowd the others out; this reads the data and is not private"
    )


class _Converted(NamedTuple):
    """A column as float64 (``values``), or ``None`` with an ``example`` of a non-numeric value."""

    values: np.ndarray | None
    example: object = None
    markers: int = 0
    marker_example: str = ""


def _numeric(series: pd.Series) -> _Converted:
    """The column as float64 when every value is a number or a missing-value marker."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return _Converted(series.to_numpy(dtype=np.float64, na_value=np.nan))
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return _Converted(series.to_numpy(dtype=np.float64, na_value=np.nan))
    if not (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)):
        return _Converted(None, f"<{dtype}>")
    try:
        numbers = pd.to_numeric(series, errors="coerce")
    except (TypeError, ValueError):
        return _Converted(None, series.dropna().iloc[0] if series.notna().any() else None)
    failed = series[numbers.isna() & series.notna()]
    words = pd.Series(failed.astype(str).unique()).str.strip()
    unknown = words[~words.str.lower().isin(MISSING_MARKERS)]
    if len(unknown):
        return _Converted(None, unknown.iloc[0])
    marker = _quoted(words.iloc[0]) if len(words) else ""
    return _Converted(numbers.to_numpy(dtype=np.float64, na_value=np.nan), None, len(failed), marker)


def _unusable(column: _Converted | Categorical, explicit: bool, max_levels: int) -> str:
    """Why a candidate feature column cannot be used, or ``""``."""
    if isinstance(column, Categorical):
        return _unusable_text(column, explicit, max_levels)
    if column.values is None:
        return f"not numeric (it has values such as {column.example!r}); encode it as numbers to use it"
    values = column.values
    finite = np.isfinite(values)
    reason = _too_sparse(int(finite.sum()), len(values), explicit)
    if reason:
        return reason
    if not explicit and _is_row_number(values):
        return "it looks like a row number (0, 1, 2, … or 1, 2, 3, …); choose it explicitly to keep it"
    if _is_constant(values, finite):
        return f"constant (every value is {_fmt(values[np.argmax(finite)])}); it carries no information"
    return ""


def _unusable_text(column: Categorical, explicit: bool, max_levels: int) -> str:
    known = column.codes >= 0
    reason = _too_sparse(int(known.sum()), len(column.codes), explicit)
    if reason:
        return reason
    distinct = np.unique(column.codes[known]).size
    if distinct == 1:
        only = column.levels[column.codes[np.argmax(known)]]
        return f"constant (every value is {_quoted(only)}); it carries no information"
    if not explicit and distinct > max_levels and distinct > MAX_DISTINCT_SHARE * known.sum():
        return (
            f"text with {distinct:,} distinct values in {int(known.sum()):,} rows: it looks like an identifier or "
            "free text; choose it explicitly to one-hot encode it anyway (the rarest values are grouped)"
        )
    return ""


def _too_sparse(usable: int, total: int, explicit: bool) -> str:
    if usable == 0:
        return "no usable values (all missing or infinite)"
    missing_share = 1 - usable / total
    if not explicit and missing_share > MAX_MISSING_SHARE:
        return f"{missing_share:.0%} of its values are missing or infinite; choose it explicitly to keep it"
    return ""


def _is_row_number(column: np.ndarray) -> bool:
    n = len(column)
    start = column[0]
    if n < 2 or start not in (0, 1) or column[-1] != start + n - 1:
        return False
    return bool(np.array_equal(column, np.arange(start, start + n, dtype=np.float64)))


def _is_constant(column: np.ndarray, mask: np.ndarray) -> bool:
    return float(np.max(column, where=mask, initial=-np.inf)) == float(np.min(column, where=mask, initial=np.inf))


def _marker_note(name: str, converted: _Converted | Categorical) -> list[str]:
    if not converted.markers:
        return []
    example = converted.marker_example  # already quoted; one of the known missing markers
    return [f"column {_quoted(name)}: {converted.markers:,} value(s) such as {example} read as missing"]


def _labels(series: pd.Series, target: str, positive_class: object) -> tuple[np.ndarray, object, str]:
    """Logistic labels: +1 for the positive class, −1 for the others, ``nan`` where missing."""
    numbers = None if pd.api.types.is_bool_dtype(series.dtype) else _numeric(series).values
    if numbers is not None:
        present = np.isfinite(numbers)
        classes: list = np.unique(numbers[present]).tolist()
        keys = numbers
    else:
        try:
            codes, uniques = pd.factorize(series)
        except TypeError as exc:
            raise DataError(
                f"target column {_quoted(target)} holds values that are neither numbers nor text; pick another column"
            ) from exc
        stripped = np.array([str(value).strip() for value in uniques] + [""], dtype=object)
        keys = stripped[codes]
        present = keys != ""
        classes = sorted(set(stripped[:-1]) - {""})
    if not classes:
        raise DataError(f"target column {_quoted(target)} has no values; pick a column that holds the classes")
    if len(classes) == 1:
        raise DataError(
            f"target column {_quoted(target)} has only one class ({_fmt(classes[0])}); "
            "logistic regression needs rows of two classes"
        )
    if positive_class is None:
        if len(classes) > 2:
            raise DataError(
                f"target column {_quoted(target)} has {len(classes):,} classes ({_listing(classes)}); "
                "choose the positive class, and the others become −1"
            )
        positive = _default_positive(classes)
    else:
        matches = [c for c in classes if c == positive_class or _fmt(c) == str(positive_class).strip()]
        if not matches:
            raise DataError(
                f"positive class {_quoted(positive_class)} is not a value of target column {_quoted(target)}; "
                f"its values are: {_listing(classes)}"
            )
        positive = matches[0]
    labels = np.where(keys == positive, 1.0, -1.0)
    labels[~present] = np.nan
    others = [c for c in classes if c != positive]
    note = (
        f"target {_quoted(target)} (logistic regression): {echo(_fmt(positive))} → +1, {_fmt(others[0])!r} → −1"
        if len(others) == 1
        else f"target {_quoted(target)} (logistic regression): {echo(_fmt(positive))} → +1, "
        f"the other {len(others):,} classes ({_listing(others)}) → −1"
    )
    return labels, positive, note


def _default_positive(classes: list) -> object:
    if isinstance(classes[0], float):
        return classes[-1]
    words = [c for c in classes if c.lower() in _POSITIVE_WORDS]
    return words[0] if len(words) == 1 else classes[-1]


def _check_target_spread(task: str, target: str, y: np.ndarray, ok: np.ndarray, positive: object) -> None:
    if task == "ridge":
        if _is_constant(y, ok):
            raise DataError(
                f"target column {_quoted(target)} has only one value ({_fmt(y[np.argmax(ok)])}) in the usable rows; "
                "pick a column with at least two distinct values"
            )
        return
    n_positive = int(np.count_nonzero(y[ok] > 0))
    if n_positive in (0, int(ok.sum())):
        which = "positive" if n_positive == 0 else "negative"
        raise DataError(
            f"after dropping rows with missing values, target column {_quoted(target)} has no rows of the {which} "
            f"class (positive class {echo(_fmt(positive))}); logistic regression needs rows of both classes"
        )


def _candidate_features(names: list[str], target: str, features: Sequence[str] | None) -> list[str]:
    if features is None:
        candidates = [name for name in names if name != target]
        if not candidates:
            raise DataError(f"the table has no columns besides the target {_quoted(target)}; add feature columns")
        return candidates
    if isinstance(features, str):
        raise TypeError("features must be a list of column names, not a single string")
    chosen = [str(name).strip() for name in features]
    if not chosen:
        raise DataError("choose at least one feature column")
    unknown = [name for name in chosen if name not in names]
    if unknown:
        raise DataError(
            f"feature column(s) {_listing(unknown)} are not in the data; the columns are: {_listing(names)}"
        )
    if target in chosen:
        raise DataError(f"{_quoted(target)} is the target; remove it from the feature columns")
    repeated = sorted({name for name in chosen if chosen.count(name) > 1})
    if repeated:
        raise DataError(f"feature column(s) {_listing(repeated)} are chosen more than once; choose each once")
    return chosen


def _check_log1p(log1p_columns: Sequence[str], candidates: list[str]) -> set[str]:
    if isinstance(log1p_columns, str):
        raise TypeError("log1p_columns must be a list of column names, not a single string")
    chosen = {str(name).strip() for name in log1p_columns}
    outside = sorted(chosen - set(candidates))
    if outside:
        raise DataError(
            f"log(1 + x) column(s) {_listing(outside)} are not feature columns; "
            "choose log(1 + x) columns among the features"
        )
    return chosen


def _no_features_message(dropped: list[tuple[str, str]], target: str) -> str:
    reasons = "; ".join(f"{_quoted(name)}: {reason}" for name, reason in dropped[:5])
    more = f" (and {len(dropped) - 5} more)" if len(dropped) > 5 else ""
    return (
        f"no numeric feature columns to use besides the target {_quoted(target)} ({reasons}{more}); "
        "the data need at least one numeric, non-constant feature column"
    )


def _split(rows: np.ndarray, y: np.ndarray, task: str, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random split of ``rows``: ``round(test_size · n)`` test rows, shared out across the
    classes in proportion (largest remainders) for logistic; every group keeps a training row."""
    rng = np.random.default_rng(seed)
    groups = [rows] if task == "ridge" else [rows[y[rows] > 0], rows[y[rows] < 0]]
    sizes = np.array([len(group) for group in groups])
    total = min(max(round(test_size * len(rows)), 1), len(rows) - len(groups))
    exact = test_size * sizes
    quota = np.floor(exact).astype(int)
    by_remainder = np.argsort(-(exact - quota), kind="stable")
    quota[by_remainder[: total - quota.sum()]] += 1
    quota = np.minimum(quota, sizes - 1)
    train, test = [], []
    for group, n_test in zip(groups, quota):
        shuffled = rng.permutation(group)
        test.append(shuffled[:n_test])
        train.append(shuffled[n_test:])
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))


def _clip_bounds(
    scaling: str, task: str, feature_bound: float | None, target_bound: float | None
) -> tuple[float, float | None] | None:
    if scaling == "paper":
        return None
    if feature_bound is None:
        raise DataError(
            "scaling 'clip' needs feature_bound: a public upper bound on the ℓ1 norm of a row (after log(1 + x)), "
            "stated without looking at the data"
        )
    feature = positive_bound("feature_bound", feature_bound)
    if task != "ridge":
        return feature, None
    if target_bound is None:
        raise DataError(
            "scaling 'clip' with ridge regression needs target_bound: a public upper bound on |y| "
            "(after log(1 + y)), stated without looking at the data"
        )
    return feature, positive_bound("target_bound", target_bound)


def positive_bound(name: str, value: object) -> float:
    """A public bound: a finite number > 0, else ``DataError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise DataError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def _scale(
    X_train: np.ndarray,
    X_test: np.ndarray,
    y_train: np.ndarray,
    y_test: np.ndarray,
    task: str,
    bounds: tuple[float, float | None] | None,
) -> tuple[float, float | None, int, int, list[str]]:
    """Scale in place (SPEC §11); returns the constants, the clipped row counts and the notes."""
    ridge = task == "ridge"
    if bounds is None:
        feature_scale = float(_row_l1(X_train).max())
        if not math.isfinite(feature_scale):
            raise DataError(_TOO_LARGE)
        if feature_scale == 0:
            raise DataError("every training row is all zeros after preprocessing; there is nothing to learn from")
        target_scale = float(np.max(np.abs(y_train))) if ridge else None
        if target_scale == 0:
            raise DataError("every training target is 0 after preprocessing; there is nothing to learn from")
    else:
        feature_scale, target_scale = bounds
    X_train /= feature_scale
    X_test /= feature_scale
    clipped_train = clip_rows(X_train)
    clipped_test = clip_rows(X_test)
    if ridge:
        y_train /= target_scale
        y_test /= target_scale
        clipped_train |= np.abs(y_train) > 1
        clipped_test |= np.abs(y_test) > 1
        np.clip(y_train, -1.0, 1.0, out=y_train)
        np.clip(y_test, -1.0, 1.0, out=y_test)
    n_train, n_test = int(clipped_train.sum()), int(clipped_test.sum())
    y_part = "" if not ridge else " (and y to [−1, 1])"
    if bounds is None:
        notes = [
            f"divided every feature by {feature_scale:.6g}, the largest ℓ1 norm of a training row "
            "('paper' scaling, as in the paper's experiments: this reads the data and is not private)"
        ]
        if ridge:
            notes.append(
                f"divided the target by {target_scale:.6g}, the largest |y| in the training rows (not private)"
            )
        n_train = 0  # under 'paper' scaling a training row can exceed ‖x‖₁ = 1 only by rounding
        if n_test:
            notes.append(
                f"{n_test:,} test row(s) fell outside ‖x‖₁ ≤ 1{y_part} with the training constants and were clipped "
                "(test rows only feed the quality figures)"
            )
        return feature_scale, target_scale, n_train, n_test, notes
    notes = [
        f"divided every feature by the stated bound {feature_scale:g}"
        + (f" and the target by the stated bound {target_scale:g}" if ridge else "")
        + f", then clipped rows to ‖x‖₁ ≤ 1{y_part}: {n_train:,} training and {n_test:,} test row(s) clipped "
        "('clip' scaling with public bounds: this step reads nothing from the data)"
    ]
    return feature_scale, target_scale, n_train, n_test, notes


def _row_l1(X: np.ndarray) -> np.ndarray:
    """Row ℓ1 norms, in row blocks so no full-size temporary is made."""
    norms = np.empty(X.shape[0])
    for start in range(0, X.shape[0], _ROW_CHUNK):
        np.abs(X[start : start + _ROW_CHUNK]).sum(axis=1, out=norms[start : start + _ROW_CHUNK])
    return norms


def clip_rows(X: np.ndarray) -> np.ndarray:
    """Scale rows with ``‖x‖₁ > 1`` back into the ℓ1 ball in place; returns which rows were clipped.

    A float64 sum of p rounded terms can be off by a few ulps either way, so a row whose
    computed norm is within 2p ulps of 1 (such as the largest row under "paper" scaling) is
    pulled that far inside too; it does not count as clipped.
    """
    norms = _row_l1(X)
    shrink = 1.0 - 2 * X.shape[1] * np.finfo(np.float64).eps
    near = norms > shrink
    if near.any():
        X[near] *= (shrink / norms[near])[:, None]
    return norms > 1.0


def scale_rows(X: np.ndarray, feature_bound: float) -> np.ndarray:
    """Divide X by a public bound on ‖x‖₁ and clip its rows into ‖x‖₁ ≤ 1, in place; returns X.

    SPEC §11's privacy-safe scaling (the ``"clip"`` scaling of ``from_frame``), for the
    estimators and for data read in blocks (``accfirst.scale``).
    """
    X /= positive_bound("feature_bound (a public bound on ‖x‖₁)", feature_bound)
    clip_rows(X)
    return X


def scale_target(y: np.ndarray, target_bound: float) -> np.ndarray:
    """Divide y by a public bound on |y| and clip it to [−1, 1], in place; returns y (SPEC §11)."""
    y /= positive_bound("target_bound (a public bound on |y|)", target_bound)
    np.clip(y, -1.0, 1.0, out=y)
    return y


def _fmt(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _quoted(value: object) -> str:
    """A name or value from the user's table, quoted for a message and cut to a readable length."""
    return f"'{shorten(_fmt(value), ECHO_CHARS)}'"


def _listing(values: Sequence[object], limit: int = 10) -> str:
    shown = ", ".join(_quoted(v) for v in list(values)[:limit])
    return shown + (f" (and {len(values) - limit:,} more)" if len(values) > limit else "")
