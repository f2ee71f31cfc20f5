"""From a table to arrays that satisfy docs/mathematics.md#setting-and-notation: ``from_frame``, a short composition of
preparation steps.

By default the preparation is **private** (docs/mathematics.md#preparing-the-data-privately,
``accfirst.datasets.prepare.private``): every number it takes from the table is declared by the user (a ``Schema``) or
released by a charged mechanism (private ranges, centres, levels), and its cost is recorded: ``data.prep_epsilon``,
``data.prep_delta``, ``data.preparation``. ``preparation="evaluation"`` keeps the preparation that reads the data
(``accfirst.datasets.prepare.evaluation``), which reads the data without noise; every ε shown on data prepared that way
excludes preparation.

The options are checked here, once; the steps trust them.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from accfirst.datasets.columns import quoted, read_table
from accfirst.datasets.prepare.budget import DEFAULT_PREP_DELTA, DEFAULT_TABLE_BUDGET, validate_budget
from accfirst.datasets.prepare.evaluation import prepare_evaluation
from accfirst.datasets.prepare.noise import NoiseSeed, validate_noise_seed
from accfirst.datasets.prepare.options import PrepOptions
from accfirst.datasets.prepare.private import prepare_private
from accfirst.datasets.prepare.scaling import clip_rows, positive_bound, scale_rows, scale_target
from accfirst.datasets.prepare.schema import IDENTIFIER, Schema
from accfirst.datasets.prepared import EVALUATION_MODE, PREPARATIONS, PRIVATE_MODE, TASKS, DatasetInfo, PreparedData
from accfirst.datasets.upload import UploadLimits
from accfirst.errors import DataError

__all__ = ["clip_rows", "from_frame", "positive_bound", "scale_rows", "scale_target"]

DEFAULT_MAX_LEVELS = 20
# What a gap becomes: private mode fills (the column's centre by default); evaluation only may drop the row.
MISSING_CHOICES = {PRIVATE_MODE: ("impute", "median", "centre"), EVALUATION_MODE: ("impute", "drop")}
SCALINGS = {PRIVATE_MODE: ("ranges", "clip"), EVALUATION_MODE: ("paper", "clip")}
OUT_OF_CORE_SCALING = (
    "out of core the rows are divided by public bounds and clipped (docs/data-preparation.md); the paper's scaling by the "
    "data's largest row norm is not available: it reads the data (not private) and would need a pass of its own"
)


def from_frame(
    df: pd.DataFrame,
    *,
    target: str,
    task: str,
    features: Sequence[str] | None = None,
    limits: UploadLimits = UploadLimits(),
    info: DatasetInfo | None = None,
    **options: Any,
) -> PreparedData:
    """Prepare a table for the accuracy-first algorithms (docs/mathematics.md#setting-and-notation,
    docs/mathematics.md#preparing-the-data-privately; docs/data-preparation.md).

    Parameters
    ----------
    df : the table, e.g. from ``read_upload``.
    target : the column to predict.
    task : ``"ridge"`` (numeric target) or ``"logistic"`` (one class against the rest).
    features : feature columns; default: every column except the target, the schema's "do not
        read" columns and the identifiers, decided from names and the schema alone (a name such as
        ``customer_id`` or ``ID``, or ``"kind": "identifier"``; any schema entry keeps a column:
        ``accfirst.datasets.prepare.identifiers``). Evaluation only also drops constant, mostly
        missing, row-number and mostly-distinct text columns, which it reads.
    limits : shape limits of an upload (rows, columns).
    info : the ``DatasetInfo`` of a built-in dataset, attached to the result.
    **options : how to prepare it, checked by ``preparation_options`` (the same names and defaults):

    positive_class : the target value mapped to +1 (logistic). The private preparation needs it
        (here or in the schema); evaluation only picks one among two classes when it is missing.
    schema : declared metadata (``Schema``, or a mapping as ``Schema.from_dict`` reads): per column
        a kind (numbers, text, an identifier), a range, levels, "do not read", log(1 + x); the positive
        class. Declared numbers cost no privacy.
    ranges : declared ranges in short, ``{"age": (18, 100), "income": (0, 250_000)}``: each is the column's
        ``{"range": [low, high]}`` in the schema (in its own units, before log(1 + x)); the column's range and
        centre (the middle of the range) then cost no ε, nor does its kind.
    preparation : ``"private"`` (default: declared metadata, private estimates for the rest) or
        ``"evaluation"`` (the evaluation-only preparation, which reads the data: every ε then excludes it).
    prep_epsilon : the private preparation's ε, split across its steps by weight; default
        ``min(150 × total weight / n, 25% of budget)`` (docs/data-preparation.md, "The preparation budget").
    prep_delta : the private preparation's δ, shared by its level selections (default 10⁻⁶).
    budget : the ε you mean to spend on this table in all, preparation included (public; default 2): by default
        the preparation takes at most 25% of it, and the report says its share; ``None`` states no budget (the
        preparation then takes what its statistics need, 150 × total weight / n).
    noise_seed : ``None`` (default) draws the noise from the operating system, as a release on
        private data must; a whole number makes the run repeatable, and then it is not a private release;
        a ``SecretSeed`` (entropy a program draws once and never shows) repeats the same private release.
    log1p_columns : numeric feature columns transformed by ``x ↦ log(1 + x)`` (private: negative
        values taken as 0; evaluation only: refused).
    log1p_target : transform a ridge target by ``y ↦ log(1 + y)``.
    scaling : private: ``"ranges"`` (default: divide rows by the largest norm the released ranges
        allow) or ``"clip"``; evaluation only: ``"paper"`` (default: divide by the data's largest row
        ℓ1 norm and ``max |y|``) or ``"clip"``. ``"clip"`` divides by ``feature_bound`` (and
        ``target_bound``) and clips.
    feature_bound : public bound on a row's ℓ1 norm after the steps above (``"clip"`` only).
    target_bound : public bound on ``|y|`` after log(1 + y) and centring (``"clip"`` with ridge;
        optional in private mode, where the target's range gives the scale otherwise).
    center : subtract a centre from each numeric column (and a ridge target): in private mode the
        released median of a column whose range is private (free), the middle of a declared range (free), a
        private mean for the target; the training means in evaluation only. Default ``True``.
    standardize : private: ``True`` or ``"half-range"`` (default: divide numeric columns by half
        their range, free), ``"private"`` (a private standard deviation) or ``False``; evaluation
        only: ``True`` (training standard deviations) or ``False``.
    missing : private: ``"impute"`` (default: a gap takes the centre), ``"median"`` (a private
        median) or ``"centre"`` (the range's centre): the same number, the median, for a column whose
        range is private; evaluation only: ``"impute"`` (training median or most frequent level) or
        ``"drop"`` (drop the row).
    max_levels : the most 0/1 columns per text column (≥ 2), or 0 to leave text columns out.
        Private: the levels whose noisy count passes a threshold, the largest noisy counts
        beyond the cap. Evaluation only: the most frequent, the rest in one ``"(other)"`` column.
    test_size : share of rows held out for the quality figures, in (0, 1); default 0.2.
    seed : seed of the train/test split (private: it depends on n and the seed only).
    """
    checked = preparation_options(task=task, **options)
    table = read_table(df, target, limits)
    check_target_read(checked, table.target)
    prepare = prepare_private if checked.preparation == PRIVATE_MODE else prepare_evaluation
    return prepare(table, features, checked, info)


def check_target_read(options: PrepOptions, target: str) -> None:
    """Refuse a schema that says not to read the column to predict, or that it is an identifier."""
    spec = options.schema.column(target)
    if not spec.read or spec.kind == IDENTIFIER:
        what = "not to read" if not spec.read else "that it is an identifier, so not to use"
        raise DataError(
            f"the schema says {what} {quoted(target)}, the column to predict: a target is always read; "
            "declare 'do not read' or an identifier for feature columns only"
        )


def preparation_options(
    preparation: str = PRIVATE_MODE,
    *,
    task: str,
    positive_class: object = None,
    schema: Schema | Mapping[str, object] | None = None,
    ranges: Mapping[str, object] | None = None,
    log1p_columns: Sequence[str] = (),
    log1p_target: bool = False,
    scaling: str | None = None,
    feature_bound: float | None = None,
    target_bound: float | None = None,
    center: bool = True,
    standardize: bool | str = True,
    missing: str = "impute",
    max_levels: int = DEFAULT_MAX_LEVELS,
    test_size: float = 0.2,
    seed: int = 0,
    prep_epsilon: float | None = None,
    prep_delta: float = DEFAULT_PREP_DELTA,
    budget: float | None = DEFAULT_TABLE_BUDGET,
    noise_seed: NoiseSeed = None,
) -> PrepOptions:
    """``from_frame``'s preparation options, checked once for the chosen preparation (see ``from_frame``)."""
    if preparation not in PREPARATIONS:
        raise DataError(f"preparation must be 'private' or 'evaluation' (evaluation only); got {preparation!r}")
    if task not in TASKS:
        raise DataError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    private = preparation == PRIVATE_MODE
    scaling = scaling or SCALINGS[preparation][0]
    if scaling not in SCALINGS[preparation]:
        allowed = " or ".join(repr(s) for s in SCALINGS[preparation])
        extra = "; 'paper' reads the data: preparation='evaluation'" if private and scaling == "paper" else ""
        raise DataError(f"scaling must be {allowed}; got {scaling!r}{extra}")
    if missing not in MISSING_CHOICES[preparation]:
        if private and missing == "drop":
            raise DataError(
                "missing='drop' drops rows, so n would depend on the data; the private preparation fills gaps "
                "('impute', 'median' or 'centre'); dropping is available with preparation='evaluation'"
            )
        allowed = (
            "'impute' (the column's centre), 'median' (a private median) or 'centre' (the range's centre)"
            if private
            else "'impute' (fill gaps) or 'drop' (drop rows with gaps)"
        )
        raise DataError(f"missing must be {allowed}; got {missing!r}")
    whole = isinstance(max_levels, numbers.Integral) and not isinstance(max_levels, bool)
    if not whole or max_levels < 0 or max_levels == 1:
        raise DataError(
            f"max_levels (the most one-hot columns per text column) must be 0 (leave text columns out) "
            f"or a whole number ≥ 2; got {max_levels!r}"
        )
    if not isinstance(center, (bool, np.bool_)):
        raise DataError(f"center must be True or False; got {center!r}")
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) or not 0 < test_size < 1:
        raise DataError(f"test_size (the share of rows held out for testing) must be in (0, 1); got {test_size!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise DataError(f"seed must be a whole number ≥ 0; got {seed!r}")
    if log1p_target and task != "ridge":
        raise DataError("log(1 + y) applies to a ridge target only; logistic labels are classes")
    if schema is None:
        schema = Schema()
    elif isinstance(schema, Mapping):
        schema = Schema.from_dict(schema)
    elif not isinstance(schema, Schema):
        raise TypeError(f"schema must be a Schema or a mapping; got {type(schema).__name__}")
    if ranges is not None:
        schema = schema.with_ranges(ranges)
    prep_epsilon, prep_delta, budget = validate_budget(prep_epsilon, prep_delta, budget)
    feature_bound, target_bound = _bounds(scaling, task, feature_bound, target_bound, private)
    return PrepOptions(
        preparation=preparation,
        task=task,
        positive_class=positive_class,
        schema=schema,
        log1p_columns=log1p_columns,
        log1p_target=bool(log1p_target),
        scaling=scaling,
        feature_bound=feature_bound,
        target_bound=target_bound,
        center=bool(center),
        standardize=_standardize(standardize, private),
        missing=missing,
        max_levels=int(max_levels),
        test_size=float(test_size),
        seed=int(seed),
        prep_epsilon=prep_epsilon,
        prep_delta=prep_delta,
        budget=budget,
        noise_seed=validate_noise_seed(noise_seed),
    )


def _standardize(value: object, private: bool) -> str:
    if isinstance(value, (bool, np.bool_)):
        return ("half-range" if private else "sd") if value else "none"
    if private and value in ("half-range", "private"):
        return str(value)
    allowed = "True, False, 'half-range' or 'private'" if private else "True or False"
    raise DataError(f"standardize must be {allowed}; got {value!r}")


def _bounds(
    scaling: str, task: str, feature_bound: float | None, target_bound: float | None, private: bool
) -> tuple[float | None, float | None]:
    """The public bounds of ``"clip"`` scaling, checked (evaluation only notes bounds given with another scaling)."""
    if scaling != "clip":
        return (None, None) if private else (feature_bound, target_bound)
    if feature_bound is None:
        raise DataError(
            "scaling 'clip' needs feature_bound: a public upper bound on the ℓ1 norm of a row (after log(1 + x)), "
            "stated without looking at the data"
        )
    feature = positive_bound("feature_bound", feature_bound)
    if task != "ridge":
        return feature, target_bound
    if target_bound is None:
        if private:
            return feature, None
        raise DataError(
            "scaling 'clip' with ridge regression needs target_bound: a public upper bound on |y| "
            "(after log(1 + y)), stated without looking at the data"
        )
    return feature, positive_bound("target_bound", target_bound)
