"""The evaluation-only preparation, which reads the data without noise.

Kept for comparison and for tables whose owner accepts it; every ε shown on data prepared this way
**excludes preparation**: its medians, most frequent levels, means, standard deviations, the
columns it keeps and the largest row norm it scales by are read from the private rows, and no
mechanism covers them. ``Preparation.epsilon`` is ∞ here, so a total that adds it never hides that.

The steps, in order: pick the target and the feature columns; map logistic labels to ±1; drop
rows whose target is missing (and, with ``missing="drop"``, rows with any gap); a seeded
train/test split (stratified by class for logistic); optional ``log(1 + x)`` columns; fill gaps
with training medians or most frequent levels and one-hot encode text columns
(``accfirst.datasets.encode``); optional ``log(1 + y)`` target; centring by the training means
and standardising numeric columns; then scaling: ``"paper"`` (appendix B.1 of the paper) divides
every feature by the largest training row ℓ1 norm and a ridge target by the largest training
``|y|``; ``"clip"`` divides by public bounds and clips. Feature columns are dropped, with a note,
when they have no usable value or are constant, or hold text while one-hot encoding is off; with
the default selection also when more than half of their values are missing, when they hold the
row numbers, or when they are text with mostly distinct values (identifiers, free text).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from accfirst.datasets.columns import (
    MIN_ROWS,
    Converted,
    Table,
    candidate_features,
    check_log1p,
    fmt,
    label_keys,
    listing,
    marker_note,
    numeric,
    quoted,
    ridge_target,
    text,
)
from accfirst.datasets.encode import Categorical, encode, is_text, present
from accfirst.datasets.prepare.options import PrepOptions
from accfirst.datasets.prepare.scaling import clip_rows, row_l1
from accfirst.datasets.prepared import (
    EVALUATION,
    EVALUATION_MODE,
    FREE,
    DatasetInfo,
    Preparation,
    PreparedData,
    PrepReport,
    StepRecord,
)
from accfirst.errors import DataError
from accfirst.validation import echo

MAX_MISSING_SHARE = 0.5
# A text column with more distinct values than this share of its rows looks like an identifier.
MAX_DISTINCT_SHARE = 0.5
_POSITIVE_WORDS = ("yes", "y", "true", "t", "1", "positive", "pos")
_TOO_LARGE = (
    "some values are too large to add up in floating point (near 1e308); "
    "rescale those columns (e.g. divide by a million) or apply log(1 + x) to them"
)
_READS = "reads the data without noise: evaluation only"


class _Notes:
    """The report's notes and the matching step records, one per note."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.records: list[StepRecord] = []

    def add(self, step: str, notes: Sequence[str], reads: bool) -> None:
        kind, mechanism = (EVALUATION, _READS) if reads else (FREE, "none")
        for note in notes:
            self.notes.append(note)
            self.records.append(StepRecord(step, "", kind, mechanism, 0.0, 0.0, note))


@np.errstate(over="ignore", invalid="ignore")  # values near 1e308 overflow; the finiteness check reports them
def prepare_evaluation(
    table: Table, features: Sequence[str] | None, options: PrepOptions, info: DatasetInfo | None
) -> PreparedData:
    """The evaluation-only preparation of ``table`` (see the module docstring): evaluation only."""
    task, schema = options.task, options.schema
    notes = _Notes()
    notes.add("reading", table.notes, reads=False)
    if options.feature_bound is not None and options.scaling != "clip":
        notes.add("options", ["feature_bound ignored: it applies to 'clip' scaling only"], reads=False)
    if options.target_bound is not None and (options.scaling != "clip" or task != "ridge"):
        notes.add("options", ["target_bound ignored: it applies to ridge regression with 'clip' scaling only"], False)
    declared = [name for name, spec in schema.columns if spec.range is not None or spec.levels is not None]
    if declared:
        notes.add(
            "schema",
            [f"declared ranges and levels ignored ({listing(declared)}): evaluation only reads them from the data"],
            reads=False,
        )
    target = table.target
    positive_class = options.positive_class if options.positive_class is not None else schema.positive_class
    if task == "logistic":
        y_values, positive, target_note = _labels(table.columns[target], target, positive_class)
        target_notes = [target_note]
    else:
        (y_values, target_notes), positive = ridge_target(table.columns[target], target), None
    notes.add("target", target_notes, reads=task == "logistic" and positive_class is None)
    skipped = [name for name, spec in schema.columns if not spec.read]
    candidates = candidate_features(table, features, skipped)
    log1p_set = check_log1p(options.log1p_columns, candidates) | {n for n in candidates if schema.column(n).log1p}
    kept, values, dropped, marker_notes = _feature_columns(
        table.columns, candidates, target, explicit=features is not None, max_levels=options.max_levels
    )
    notes.add("columns", marker_notes, reads=False)
    ok, missing_note = _usable_rows(y_values, kept, values, target, options.missing)
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
    notes.add("columns", [f"dropped column {quoted(name)}: {reason}" for name, reason in dropped], reads=True)
    notes.add("rows", [missing_note] if missing_note else [], reads=True)
    log1p_used = tuple(name for name in kept if name in log1p_set)
    notes.add(
        "log(1 + x)",
        [f"log(1 + x) not applied to {quoted(name)}: the column was dropped" for name in sorted(log1p_set - set(kept))],
        reads=True,
    )
    _check_log1p_domain(kept, values, log1p_used, y_values if options.log1p_target else None, target, ok)
    train_rows, test_rows = _split(np.flatnonzero(ok), y_values, task, options.test_size, options.seed)
    split_note = (
        f"split {int(ok.sum()):,} rows at random (seed {options.seed}) into {len(train_rows):,} training and "
        f"{len(test_rows):,} test rows{' within each class' if task == 'logistic' else ''}; "
        "the private algorithms see only the training rows"
    )
    notes.add("split", [split_note], reads=task == "logistic")
    if log1p_used:
        notes.add("log(1 + x)", [f"applied log(1 + x) to {len(log1p_used)} column(s): {listing(log1p_used)}"], False)
    encoded = encode(kept, values, train_rows, test_rows, set(log1p_used), options.max_levels)
    notes.add("encoding", encoded.notes, reads=True)
    X_train, X_test = encoded.X_train, encoded.X_test
    y_train, y_test = y_values[train_rows], y_values[test_rows]
    y_test_original = y_test.copy() if task == "ridge" else None
    if options.log1p_target:
        np.log1p(y_train, out=y_train)
        np.log1p(y_test, out=y_test)
        notes.add("log(1 + y)", [f"applied log(1 + y) to the target {quoted(target)}"], reads=False)
    target_mean = None
    if options.center:
        target_mean, note = _center(X_train, X_test, y_train, y_test, task)
        notes.add("centring", [note], reads=True)
    standardized = options.standardize != "none" and bool(encoded.numeric)
    if standardized:
        notes.add("standardising", [_standardize(X_train, X_test, encoded.numeric, encoded.names)], reads=True)
    if options.scaling == "paper":
        bounds = None
    else:
        assert options.feature_bound is not None  # 'clip' scaling comes with one (preparation_options)
        bounds = (options.feature_bound, options.target_bound)
    feature_scale, target_scale, clipped_train, clipped_test, scale_notes = _scale(
        X_train, X_test, y_train, y_test, task, bounds
    )
    notes.add("scaling", scale_notes, reads=options.scaling == "paper")
    for array in (X_train, X_test, y_train, y_test):
        if not np.isfinite(array).all():
            raise DataError(_TOO_LARGE)
        array.flags.writeable = False
    if y_test_original is not None:
        y_test_original.flags.writeable = False
    preparation = Preparation(EVALUATION_MODE, tuple(notes.records))
    report = PrepReport(
        steps=(*notes.notes, preparation.summary),
        dropped_columns=tuple(dropped),
        rows_dropped_missing=table.n - int(ok.sum()),
        feature_scale=feature_scale,
        target_scale=target_scale,
        scaling=options.scaling,
        private_scaling=options.scaling == "clip"
        and not (options.center or standardized or encoded.imputed or encoded.one_hot),
        n_train=len(train_rows),
        n_test=len(test_rows),
        positive_class=positive,
        log1p_columns=log1p_used,
        log1p_target=options.log1p_target,
        centered=options.center,
        rows_clipped_train=clipped_train,
        rows_clipped_test=clipped_test,
        missing=options.missing,
        imputed=encoded.imputed,
        max_levels=options.max_levels,
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
        preparation=preparation,
    )


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
        usable = column if isinstance(column, Categorical) else column.values
        assert usable is not None  # _unusable refuses a column without numbers
        values.append(usable)
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
        f"subtracted the training means of the features and of the target ({fmt(y_mean)}), because the model "
        "has no intercept; the means read the data and are not private"
    )


def _standardize(X_train: np.ndarray, X_test: np.ndarray, columns: Sequence[int], names: Sequence[str]) -> str:
    """Divide the numeric ``columns`` by their training standard deviations in place; returns the note."""
    sds = X_train[:, columns].std(axis=0)
    # A column constant in the training rows (possible after filling gaps) has nothing to rescale.
    sds[sds == 0] = 1.0
    X_train[:, columns] /= sds
    X_test[:, columns] /= sds
    shown = ", ".join(f"{quoted(names[j])} {sd:.4g}" for j, sd in zip(columns[:6], sds[:6]))
    more = f", and {len(columns) - 6} more" if len(columns) > 6 else ""
    return (
        f"divided each of the {len(columns)} numeric feature(s) by its training standard deviation ({shown}{more}), "
        "so that columns in large units do not crowd the others out; this reads the data and is not private"
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


def _labels(series: pd.Series, target: str, positive_class: object) -> tuple[np.ndarray, object, str]:
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


def _check_target_spread(task: str, target: str, y: np.ndarray, ok: np.ndarray, positive: object) -> None:
    if task == "ridge":
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


def _scale(
    X_train: np.ndarray,
    X_test: np.ndarray,
    y_train: np.ndarray,
    y_test: np.ndarray,
    task: str,
    bounds: tuple[float, float | None] | None,
) -> tuple[float, float | None, int, int, list[str]]:
    """Scale in place (docs/data-preparation.md#scaling-into-the-unit-ball); returns the constants, the clipped row
    counts and the notes."""
    ridge = task == "ridge"
    if bounds is None:
        feature_scale = float(row_l1(X_train).max())
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
