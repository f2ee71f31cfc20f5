"""What the evaluation-only preparation keeps, read from the data exactly: columns, rows, labels, split
(docs/data-preparation.md#evaluation-only-the-preparation-that-reads-the-data).

A column's kind is the type the file gives it (numbers when every value is a number or a missing
marker). A feature column is dropped, with a reason, when it has no usable value or one value, or
holds text while one-hot encoding is off; unless chosen explicitly, also when more than half its
values are missing, when it holds the row numbers, or when it is text with mostly distinct values
(an identifier, free text). A row is dropped when its target is missing (with ``missing="drop"``,
any gap). Logistic labels map the positive class to +1, choosing it among two classes when none is
given; the split is seeded and, for logistic regression, within each class. All of it reads the
data: evaluation only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from accfirst.datasets.columns import (
    MIN_ROWS,
    Categorical,
    Converted,
    fmt,
    is_text,
    label_keys,
    listing,
    marker_note,
    numeric,
    present,
    quoted,
    text,
)
from accfirst.errors import DataError
from accfirst.validation import echo

MAX_MISSING_SHARE = 0.5
# A text column with more distinct values than this share of its rows looks like an identifier.
MAX_DISTINCT_SHARE = 0.5
_POSITIVE_WORDS = ("yes", "y", "true", "t", "1", "positive", "pos")


class Usable(NamedTuple):
    """The feature columns kept (numbers, or text codes), those dropped with reasons, the usable rows, and notes."""

    names: list[str]
    values: list[np.ndarray | Categorical]
    dropped: list[tuple[str, str]]
    rows: np.ndarray
    marker_notes: list[str]
    rows_note: str


def usable(
    columns: dict[str, pd.Series],
    candidates: list[str],
    y: np.ndarray,
    target: str,
    positive: object,
    explicit: bool,
    max_levels: int,
    missing: str,
) -> Usable:
    """The usable feature columns and rows of a table (see the module docstring).

    ``y`` is the target (``nan`` where missing): ridge values, or logistic ±1 labels with their
    ``positive`` class (``None`` for ridge).
    """
    kept, values, dropped, marker_notes = _feature_columns(columns, candidates, target, explicit, max_levels)
    ok, rows_note = _usable_rows(y, kept, values, target, missing)
    _check_target_spread(target, y, ok, positive)
    for name, column in zip(kept, values):
        value = _constant_value(column, ok)
        if value is not None:
            dropped.append((name, f"constant in the usable rows (every value is {value})"))
    dropped_names = {name for name, _ in dropped}
    values = [column for name, column in zip(kept, values) if name not in dropped_names]
    kept = [name for name in kept if name not in dropped_names]
    if not kept:
        raise DataError(_no_features_message(dropped, target))
    return Usable(kept, values, dropped, ok, marker_notes, rows_note)


def _feature_columns(
    columns: dict[str, pd.Series], candidates: list[str], target: str, explicit: bool, max_levels: int
) -> tuple[list[str], list[np.ndarray | Categorical], list[tuple[str, str]], list[str]]:
    """The usable candidates (numeric arrays, or text as ``Categorical`` when ``max_levels`` > 0),
    the dropped ones with reasons, and notes on missing markers."""
    kept: list[str] = []
    values: list[np.ndarray | Categorical] = []
    dropped: list[tuple[str, str]] = []
    notes: list[str] = []
    for name in candidates:
        converted = numeric(columns[name])
        column: Converted | Categorical = converted
        if converted.values is None and max_levels and is_text(columns[name]):
            column = text(columns[name])
        reason = _unusable(column, explicit, max_levels)
        if reason:
            dropped.append((name, reason))
            continue
        notes.extend(marker_note(name, column))
        kept.append(name)
        read = column if isinstance(column, Categorical) else column.values
        assert read is not None  # _unusable refuses a column without numbers
        values.append(read)
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
        filled = present(column)
        gaps.append((name, len(y) - int(filled.sum())))
        if missing == "drop":
            ok &= filled
    n_ok = int(ok.sum())
    dropped = len(y) - n_ok
    if n_ok == 0:
        detail = (
            ""
            if missing == "impute"
            else " or in a feature; fill the gaps (missing='impute') or drop the columns with many gaps and try again"
        )
        raise DataError(f"every row has a missing or infinite value in the target {quoted(target)}{detail}")
    if n_ok < MIN_ROWS:
        detail = f" after dropping {dropped:,} with missing values" if dropped else ""
        raise DataError(
            f"only {n_ok} usable row{'s' if n_ok != 1 else ''}{detail}; at least {MIN_ROWS} are needed "
            "to split the data into training and test parts"
        )
    if not dropped:
        return ok, ""
    if missing == "impute":
        return ok, f"dropped {dropped:,} of {len(y):,} rows whose target {quoted(target)} is missing or infinite"
    worst = sorted((c for c in gaps if c[1]), key=lambda c: -c[1])[:5]
    listed = ", ".join(f"{quoted(name)} {count:,}" for name, count in worst)
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
        return quoted(column.levels[codes[0]]) if codes.size == 1 else None
    return fmt(column[np.argmax(mask)]) if _is_constant(column, mask) else None


def check_log1p_domain(
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
            raise DataError(f"column {quoted(name)} holds text; log(1 + x) applies to numeric columns only")
        low = float(np.min(column, where=ok & np.isfinite(column), initial=np.inf))
        if low < 0:
            raise DataError(
                f"column {quoted(name)} has negative values (smallest {fmt(low)}); log(1 + x) is meant for counts "
                "and other values ≥ 0, so remove it from the log(1 + x) columns"
            )
    if y is not None:
        low = float(np.min(y, where=ok, initial=np.inf))
        if low < 0:
            raise DataError(
                f"target column {quoted(target)} has negative values (smallest {fmt(low)}); log(1 + y) needs "
                "values ≥ 0, so switch off the log(1 + y) target"
            )


def _unusable(column: Converted | Categorical, explicit: bool, max_levels: int) -> str:
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
        return f"constant (every value is {fmt(values[np.argmax(finite)])}); it carries no information"
    return ""


def _unusable_text(column: Categorical, explicit: bool, max_levels: int) -> str:
    known = column.codes >= 0
    reason = _too_sparse(int(known.sum()), len(column.codes), explicit)
    if reason:
        return reason
    distinct = np.unique(column.codes[known]).size
    if distinct == 1:
        only = column.levels[column.codes[np.argmax(known)]]
        return f"constant (every value is {quoted(only)}); it carries no information"
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


def labels(series: pd.Series, target: str, positive_class: object) -> tuple[np.ndarray, object, str]:
    """Logistic labels: +1 for the positive class, −1 for the others, ``nan`` where missing."""
    keys = label_keys(series, target)
    classes: list[float | str] = sorted(set(keys.keys[keys.present].tolist()))
    if not classes:
        raise DataError(f"target column {quoted(target)} has no values; pick a column that holds the classes")
    if len(classes) == 1:
        raise DataError(
            f"target column {quoted(target)} has only one class ({fmt(classes[0])}); "
            "logistic regression needs rows of two classes"
        )
    if positive_class is None:
        if len(classes) > 2:
            raise DataError(
                f"target column {quoted(target)} has {len(classes):,} classes ({listing(classes)}); "
                "choose the positive class, and the others become −1"
            )
        positive = _default_positive(classes)
    else:
        found = [c for c in classes if c == positive_class or fmt(c) == str(positive_class).strip()]
        if not found:
            raise DataError(
                f"positive class {quoted(positive_class)} is not a value of target column {quoted(target)}; "
                f"its values are: {listing(classes)}"
            )
        positive = found[0]
    labels = np.where(keys.keys == positive, 1.0, -1.0)
    labels[~keys.present] = np.nan
    others = [c for c in classes if c != positive]
    note = (
        f"target {quoted(target)} (logistic regression): {echo(fmt(positive))} → +1, {fmt(others[0])!r} → −1"
        if len(others) == 1
        else f"target {quoted(target)} (logistic regression): {echo(fmt(positive))} → +1, "
        f"the other {len(others):,} classes ({listing(others)}) → −1"
    )
    return labels, positive, note


def _default_positive(classes: list[float | str]) -> object:
    if isinstance(classes[0], float):
        return classes[-1]
    words = [c for c in classes if isinstance(c, str) and c.lower() in _POSITIVE_WORDS]
    return words[0] if len(words) == 1 else classes[-1]


def _check_target_spread(target: str, y: np.ndarray, ok: np.ndarray, positive: object) -> None:
    if positive is None:  # ridge
        if _is_constant(y, ok):
            raise DataError(
                f"target column {quoted(target)} has only one value ({fmt(y[np.argmax(ok)])}) in the usable rows; "
                "pick a column with at least two distinct values"
            )
        return
    n_positive = int(np.count_nonzero(y[ok] > 0))
    if n_positive in (0, int(ok.sum())):
        which = "positive" if n_positive == 0 else "negative"
        raise DataError(
            f"after dropping rows with missing values, target column {quoted(target)} has no rows of the {which} "
            f"class (positive class {echo(fmt(positive))}); logistic regression needs rows of both classes"
        )


def _no_features_message(dropped: list[tuple[str, str]], target: str) -> str:
    reasons = "; ".join(f"{quoted(name)}: {reason}" for name, reason in dropped[:5])
    more = f" (and {len(dropped) - 5} more)" if len(dropped) > 5 else ""
    return (
        f"no numeric feature columns to use besides the target {quoted(target)} ({reasons}{more}); "
        "the data need at least one numeric, non-constant feature column"
    )


def stratified_split(
    rows: np.ndarray, y: np.ndarray, task: str, test_size: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
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
