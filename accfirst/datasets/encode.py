"""From chosen columns to the feature matrices: imputation and one-hot encoding (the evaluation-only middle).

A feature column is either numeric (a float64 array, ``nan`` or ``±inf`` where unusable)
or a ``Categorical`` (integer codes into its text levels, −1 where missing). After the
train/test split, ``encode`` fills both matrices one column (or one block of columns) at
a time, so no full-size temporary is made:

- a numeric column is copied (``log(1 + x)`` applied if chosen); a gap is filled with the
  median of the column's training values;
- a text column becomes one 0/1 column per level, levels counted on the training rows only
  and ordered by frequency; above ``max_levels`` levels the rarest share one ``(other)``
  column; a gap takes the most frequent training level; a test level never seen in
  training goes to ``(other)`` when there is one, else to no column (an all-zero block).

Every statistic comes from the training rows, so nothing about the test rows leaks into
what the algorithms see. Imputation and the choice of levels read the data: not private
(``preparation="evaluation"`` only; the private preparation has its own steps in ``prepare``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

OTHER_LEVEL = "(other)"


class Categorical(NamedTuple):
    """A text column: ``codes`` index ``levels`` (−1 where missing); how many missing markers were read."""

    codes: np.ndarray
    levels: tuple[str, ...]
    markers: int = 0
    marker_example: str = ""


class Encoded(NamedTuple):
    """The matrices ``encode`` fills, their column names, its notes and what it did, column by column.

    ``numeric``: the output columns that hold numeric features (the others are 0/1);
    ``imputed``: ``(column, statistic, values filled)`` per column with a gap; ``one_hot``:
    ``(column, levels kept, levels grouped into (other))`` per text column.
    """

    X_train: np.ndarray
    X_test: np.ndarray
    names: tuple[str, ...]
    numeric: tuple[int, ...]
    notes: tuple[str, ...]
    imputed: tuple[tuple[str, str, int], ...]
    one_hot: tuple[tuple[str, tuple[str, ...], int], ...]


def is_text(series: pd.Series) -> bool:
    """Whether a column holds text (object, string or categorical dtype)."""
    dtype = series.dtype
    return (
        pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    )


def categorical(series: pd.Series, missing_markers: frozenset[str]) -> Categorical:
    """A text column as codes: values are stripped of spaces; markers such as ``?`` count as missing."""
    text = series.astype("string").str.strip()
    marker = text.str.lower().isin(missing_markers).fillna(False).to_numpy(dtype=bool)
    markers = int(marker.sum())
    example = f"'{text[marker].iloc[0]}'" if markers else ""
    codes, uniques = pd.factorize(text.mask(marker))
    return Categorical(codes.astype(np.int64), tuple(str(level) for level in uniques), markers, example)


def present(column: np.ndarray | Categorical) -> np.ndarray:
    """Where a feature column has a usable value."""
    return column.codes >= 0 if isinstance(column, Categorical) else np.isfinite(column)


class _Plan(NamedTuple):
    """How a text column becomes columns: ``mapping[code]`` is its output column (−1: none)."""

    kept: tuple[str, ...]
    grouped: int
    mapping: np.ndarray
    fill: int


def _plan(column: Categorical, train_rows: np.ndarray, max_levels: int) -> _Plan:
    """Levels by training frequency (ties by name); the rarest beyond the cap map to ``(other)``."""
    counts = np.bincount(column.codes[train_rows][column.codes[train_rows] >= 0], minlength=len(column.levels))
    seen = [code for code in range(len(column.levels)) if counts[code]]
    ordered = sorted(seen, key=lambda code: (-counts[code], column.levels[code]))
    grouped = ordered[max_levels - 1 :] if len(ordered) > max_levels else []
    kept = ordered[: len(ordered) - len(grouped)]
    other = len(kept) if grouped else -1
    mapping = np.full(len(column.levels), other, dtype=np.int64)
    mapping[kept] = np.arange(len(kept))
    names = tuple(column.levels[code] for code in kept) + ((OTHER_LEVEL,) if grouped else ())
    return _Plan(names, len(grouped), mapping, 0 if names else -1)


def encode(
    names: Sequence[str],
    columns: Sequence[np.ndarray | Categorical],
    train_rows: np.ndarray,
    test_rows: np.ndarray,
    log1p_columns: set[str],
    max_levels: int,
) -> Encoded:
    """The training and test matrices of the chosen columns (see the module docstring).

    Parameters
    ----------
    names, columns : the feature columns, in order (numeric arrays or ``Categorical``).
    train_rows, test_rows : row indices of each part.
    log1p_columns : names of numeric columns to transform by ``log(1 + x)``.
    max_levels : the most 0/1 columns per text column (≥ 2).
    """
    plans = {
        name: _plan(column, train_rows, max_levels)
        for name, column in zip(names, columns)
        if isinstance(column, Categorical)
    }
    width = sum(len(plans[name].kept) if name in plans else 1 for name in names)
    X_train = np.zeros((len(train_rows), width))
    X_test = np.zeros((len(test_rows), width))
    out_names: list[str] = []
    numeric: list[int] = []
    imputed: list[tuple[str, str, int]] = []
    notes: list[str] = []
    for name, column in zip(names, columns):
        start = len(out_names)
        if isinstance(column, Categorical):
            plan = plans[name]
            filled = _one_hot(column, plan, train_rows, X_train[:, start : start + len(plan.kept)])
            filled += _one_hot(column, plan, test_rows, X_test[:, start : start + len(plan.kept)])
            out_names.extend(f"{name}={level}" for level in plan.kept)
            statistic = f"the most frequent level '{plan.kept[plan.fill]}'"
            notes.append(_one_hot_note(name, plan, max_levels))
        else:
            filled, statistic = _numeric(column, name in log1p_columns, train_rows, test_rows, X_train, X_test, start)
            out_names.append(name)
            numeric.append(start)
        if filled:
            imputed.append((name, statistic, filled))
    if imputed:
        notes.append(_imputation_note(imputed))
    one_hot = tuple((name, plan.kept, plan.grouped) for name, plan in plans.items())
    return Encoded(X_train, X_test, tuple(out_names), tuple(numeric), tuple(notes), tuple(imputed), one_hot)


def _numeric(
    column: np.ndarray,
    log1p: bool,
    train_rows: np.ndarray,
    test_rows: np.ndarray,
    X_train: np.ndarray,
    X_test: np.ndarray,
    j: int,
) -> tuple[int, str]:
    """Fill column ``j`` of both matrices; gaps take the training median. Returns (gaps filled, statistic)."""
    parts = []
    for X, rows in ((X_train, train_rows), (X_test, test_rows)):
        part = column[rows]
        X[:, j] = np.log1p(part, out=part) if log1p else part
        parts.append(X[:, j])
    gaps = [~np.isfinite(part) for part in parts]
    filled = int(sum(int(gap.sum()) for gap in gaps))
    if not filled:
        return 0, ""
    known = parts[0][~gaps[0]]
    # A column whose training values are all missing has no median; 0 keeps it harmless (constant).
    median = float(np.median(known)) if known.size else 0.0
    for part, gap in zip(parts, gaps):
        part[gap] = median
    return filled, f"the training median {median:.6g}" + (" (after log(1 + x))" if log1p else "")


def _one_hot(column: Categorical, plan: _Plan, rows: np.ndarray, block: np.ndarray) -> int:
    """Set the 0/1 block of ``rows`` in place; returns how many missing values took the fill level."""
    codes = column.codes[rows]
    gaps = codes < 0
    targets = np.where(gaps, plan.fill, plan.mapping[np.maximum(codes, 0)])
    hit = targets >= 0
    block[np.flatnonzero(hit), targets[hit]] = 1.0
    return int(gaps.sum())


def _one_hot_note(name: str, plan: _Plan, max_levels: int) -> str:
    levels = ", ".join(f"'{level}'" for level in plan.kept[:8]) + (", …" if len(plan.kept) > 8 else "")
    text = (
        f"one-hot encoded the text column '{name}' into {len(plan.kept)} columns of 0/1 ({levels}), "
        "levels from the training rows, most frequent first"
    )
    if plan.grouped:
        text += (
            f"; it has more than {max_levels} levels, so the {plan.grouped:,} rarest share the column "
            f"'{name}={OTHER_LEVEL}'"
        )
    return (
        text
        + "; a level not seen in training goes to "
        + (f"'{OTHER_LEVEL}'" if plan.grouped else "no column (all zeros)")
    )


def _imputation_note(imputed: list[tuple[str, str, int]]) -> str:
    shown = "; ".join(f"'{name}': {count:,} with {statistic}" for name, statistic, count in imputed[:6])
    more = f"; and {len(imputed) - 6} more column(s)" if len(imputed) > 6 else ""
    return (
        f"filled missing or infinite feature values with statistics of the training rows ({shown}{more}); "
        "this reads the data and is not private"
    )
