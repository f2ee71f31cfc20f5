"""The private preparation (docs/mathematics.md#preparing-the-data-privately): declared metadata first, a charged
mechanism for the rest.

``plan_private`` decides the columns from public facts only (column names, the schema, the
options, n) and reads no statistic; ``fit`` splits the budget and runs the steps, the only place
the data are read; ``build`` turns rows into features from the released plan alone, one row at
a time. Every cell is read on its own (``kind.read_cells``): a file's column type is data. In order:

1. structure: the feature columns by name, the columns the schema says not to read, the
   train/test split (n and the seed only);
2. the kind of each column that has none declared: ``PrivateKind``, first (the other steps are
   chosen from the kinds it releases and share what it leaves of the budget);
3. a numeric column: its declared range, or ``PrivateMedian`` and ``PrivateRange`` (the median ± a
   multiple of the median distance from it) and then ``MiddleCentre``; with a declared range,
   ``PrivateMedian`` when gaps take the median and ``MiddleCentre`` (free); ``FillGaps``; ``HalfRange`` or
   ``PrivateSpread``;
4. a text column: its declared levels or ``PrivateLevels``;
5. the target: ``TargetLabels`` (logistic), or a range (declared, or private as a column's with
   its own multiple), ``PrivateCentre`` and ``TargetScale`` (ridge; numeric by the task, a word is a
   missing target);
6. ``UnitBallScaling``.

No row is dropped: a gap is filled and a row whose target is missing becomes a zero row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from accfirst.datasets.columns import Categorical, Table, check_log1p, fmt, listing, quoted
from accfirst.datasets.prepare.base import ColumnPlan, Context, Step, StepRecord
from accfirst.datasets.prepare.budget import allocate, budget_note, budget_warning, default_prep_epsilon
from accfirst.datasets.prepare.build import Columns, Plan, Rows, build_rows, prepared_data
from accfirst.datasets.prepare.centre import MiddleCentre, PrivateCentre
from accfirst.datasets.prepare.declared import DeclaredMetadata
from accfirst.datasets.prepare.gaps import FillGaps
from accfirst.datasets.prepare.identifiers import candidates as feature_candidates
from accfirst.datasets.prepare.identifiers import identifier_note
from accfirst.datasets.prepare.kind import UNDECIDED, Cells, PrivateKind, read_cells
from accfirst.datasets.prepare.levels import PrivateLevels
from accfirst.datasets.prepare.noise import preparation_rng, repeatable_seed
from accfirst.datasets.prepare.options import PrepOptions
from accfirst.datasets.prepare.ranges import FEATURE_SPREADS, TARGET_SPREADS, PrivateMedian, PrivateRange
from accfirst.datasets.prepare.scaling import UnitBallScaling
from accfirst.datasets.prepare.schema import ColumnSpec
from accfirst.datasets.prepare.spread import HalfRange, PrivateSpread
from accfirst.datasets.prepare.target import TargetLabels, TargetScale
from accfirst.datasets.prepared import DECLARED, FREE, PRIVATE_MODE, DatasetInfo, Preparation, PreparedData, PrepReport
from accfirst.errors import DataError


@dataclass
class PrivatePlan(Plan):
    """Everything decided before the data are read: the columns' plans, the kind steps, the split.

    ``kinds`` release the kind of each column that has none declared; ``steps`` then holds the
    steps of every column and of the target, decided from public facts and the released kinds.
    """

    steps: list[Step] = field(default_factory=list)
    kinds: list[PrivateKind] = field(default_factory=list)
    target_steps: list[Step] = field(default_factory=list)

    @property
    def weight(self) -> float:
        """The budget's total weight, public: a column of undeclared kind counts as numeric (plus its kind step), or
        as text when a numeric column's steps would spend nothing, so that a column released as text has a share."""
        steps = [step for column in self.features for step in self._weighed_steps(column)]
        return sum(step.weight for step in (*self.kinds, *steps, *self.target_steps))

    def _weighed_steps(self, column: ColumnPlan) -> list[Step]:
        if column.kind != UNDECIDED:
            return _column_steps(ColumnPlan(column.name, column.kind, log1p=column.log1p), self.options)
        numeric = _column_steps(ColumnPlan(column.name, "numeric", log1p=column.log1p), self.options)
        return (
            numeric
            if any(step.weight for step in numeric)
            else _column_steps(ColumnPlan(column.name, "text"), self.options)
        )

    def settle(self) -> list[Step]:
        """Once the kinds are released: every column's steps and the target's (``steps``)."""
        self.steps = [step for column in self.features for step in _column_steps(column, self.options)]
        self.steps += self.target_steps
        return self.steps

    @property
    def scaling(self) -> UnitBallScaling:
        """The last step: the bound from the kept columns' plans, or the stated one."""
        return UnitBallScaling(self.kept, self.options.feature_bound)


def held_out_rows(n: int, test_size: float) -> int:
    """How many of n rows a private preparation holds out: ``round(test_size · n)``, at least 1, leaving at least 1.
    Public (n and the share only), so an entry point knows the training rows' count before it prepares a table."""
    return min(max(round(test_size * n), 1), n - 1)


def random_split(n: int, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``held_out_rows(n, test_size)`` test rows at random: n and the seed only."""
    rng = np.random.default_rng(seed)
    n_test = held_out_rows(n, test_size)
    order = rng.permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def read_column(series: pd.Series, kind: str, log1p: bool) -> np.ndarray | Categorical:
    """A column read cell by cell as ``kind``: float64 numbers (``nan`` for a gap or a word; log(1 + max(x, 0))
    when asked) or text codes. A column whose kind is not declared is read as its ``Cells`` instead, until
    ``PrivateKind`` releases the kind."""
    column = read_cells(series).as_kind(kind)
    return np.log1p(np.maximum(column, 0.0)) if log1p and isinstance(column, np.ndarray) else column


def _column_steps(plan: ColumnPlan, options: PrepOptions) -> list[Step]:
    """The steps that make one feature column, from public facts (and its released kind) only."""
    spec = options.schema.column(plan.name)
    steps: list[Step] = []
    if spec.range is not None or spec.levels is not None or plan.log1p:
        steps.append(DeclaredMetadata(plan, spec))
    if plan.kind == "text":
        if spec.levels is not None:
            return steps
        if options.max_levels == 0:
            plan.dropped = "text columns are left out (at most 0 one-hot columns per text column)"
            return steps
        return [*steps, PrivateLevels(plan, options.max_levels)]
    needs_range = options.center or options.standardize != "none" or options.scaling != "clip"
    if needs_range and spec.range is None:
        steps += [PrivateMedian(plan), PrivateRange(plan, FEATURE_SPREADS)]
        if options.center:
            steps.append(MiddleCentre(plan, declared=False))
    elif needs_range:
        if options.missing == "median":
            steps.append(PrivateMedian(plan))
        if options.center:
            steps.append(MiddleCentre(plan, declared=True))
    steps.append(FillGaps(plan, options.missing, options.center))
    if options.standardize == "half-range":
        steps.append(HalfRange(plan))
    elif options.standardize == "private":
        steps.append(PrivateSpread(plan))
    return steps


def positive_class(options: PrepOptions) -> object:
    """The declared positive class (the option, else the schema's), or ``None``."""
    return options.positive_class if options.positive_class is not None else options.schema.positive_class


class _Target(NamedTuple):
    plan: ColumnPlan
    values: np.ndarray  # ridge: numbers (after log(1 + y)); logistic: ±1; nan where missing
    raw: np.ndarray | None  # ridge: the target in its own units
    steps: list[Step]


def _target(table: Table, options: PrepOptions) -> _Target:
    """The target's plan, its values, its steps; read cell by cell (a ridge target is numeric by the task:
    a word is missing, a zero row)."""
    name = table.target
    cells = read_cells(table.columns[name])
    spec = options.schema.column(name)
    if options.task == "logistic":
        positive = positive_class(options)
        if positive is None:
            raise DataError(
                "the private preparation needs the positive class declared (positive_class, or the schema's "
                "positive_class): choosing it from the classes in the data would read them"
            )
        labels = np.where(cells.matches(positive), 1.0, -1.0)
        labels[cells.gap] = np.nan
        plan = ColumnPlan(name, "labels")
        return _Target(plan, labels, None, [TargetLabels(plan, fmt(positive))])
    raw = cells.as_numbers()
    plan = ColumnPlan(name, "numeric", log1p=options.log1p_target or spec.log1p)
    values = np.log1p(np.maximum(raw, 0.0)) if plan.log1p else raw
    steps: list[Step] = [DeclaredMetadata(plan, spec)] if spec.range is not None or plan.log1p else []
    if spec.range is None and (options.center or options.target_bound is None):
        steps += [PrivateMedian(plan), PrivateRange(plan, TARGET_SPREADS)]
    if options.center:
        steps.append(PrivateCentre(plan))
    return _Target(plan, values, raw, [*steps, TargetScale(plan, options.target_bound)])


def _kind(name: str, spec: ColumnSpec, log1p: bool) -> str | None:
    """The column's declared kind (log(1 + x) declares numbers), or ``None``."""
    if log1p and spec.declared_kind == "text":
        raise DataError(f"column {quoted(name)} is declared text; log(1 + x) applies to numeric columns only")
    return "numeric" if log1p else spec.declared_kind


def plan_private(
    table: Table, features: Sequence[str] | None, options: PrepOptions, *, hold_out: bool = True
) -> PrivatePlan:
    """Decide the columns and steps of a private preparation; no statistic of the data is read.

    ``hold_out=False`` keeps every row for training (an estimator's ``fit``: no test part).
    """
    schema = options.schema
    unknown = sorted(set(schema.names) - set(table.columns))
    if unknown:
        raise DataError(f"the schema names column(s) {listing(unknown)} that are not in the data")
    candidates, skipped, identifiers = feature_candidates(table, features, schema)
    log1p = check_log1p(options.log1p_columns, candidates) | {name for name in candidates if schema.column(name).log1p}
    columns: dict[str, np.ndarray | Categorical | Cells] = {}
    plans, kinds = [], []
    for name in candidates:
        kind = _kind(name, schema.column(name), name in log1p)
        plan = ColumnPlan(name, kind or UNDECIDED, log1p=name in log1p)
        series = table.columns[name]
        columns[name] = read_cells(series) if kind is None else read_column(series, kind, plan.log1p)
        plans.append(plan)
        if kind is None:
            kinds.append(PrivateKind(plan))
    target = _target(table, options)
    columns[target.plan.name] = target.values
    if hold_out:
        train, test = random_split(table.n, options.test_size, options.seed)
        split = (
            f"split {table.n:,} rows at random (seed {options.seed}) into {len(train):,} training and {len(test):,} "
            "test rows; the private algorithms and every private statistic see only the training rows"
        )
    else:
        train, test = np.arange(table.n), np.arange(0)
        split = f"every one of the {table.n:,} rows trains the model (no held-out rows)"
    context = Context(columns, train, preparation_rng(options.noise_seed))
    numeric_count = sum(plan.kind == "numeric" for plan in plans)
    text_count = len(plans) - numeric_count - len(kinds)
    structure = [
        StepRecord(
            "columns",
            "",
            DECLARED,
            "none: names and declarations are public",
            0.0,
            0.0,
            f"{len(plans)} feature column(s) by name ({numeric_count} declared numeric, {text_count} declared text, "
            f"{len(kinds)} of a kind released privately), chosen without reading their values"
            + (f"; not read (as declared): {listing(skipped)}" if skipped else ""),
        ),
        StepRecord("split", "", FREE, "none: depends on n and the seed only", 0.0, 0.0, split),
    ]
    if identifiers:
        note = identifier_note(identifiers)
        structure.insert(
            1, StepRecord("identifiers", "", DECLARED, "none: names and declarations are public", 0.0, 0.0, note)
        )
    return PrivatePlan(
        context,
        plans,
        target.plan,
        test,
        options,
        raw_target=target.raw,
        structure=structure,
        identifiers=identifiers,
        kinds=kinds,
        target_steps=target.steps,
    )


def kind_budget(plan: PrivatePlan, epsilon: float) -> tuple[float, float]:
    """Each kind step's ε (ε_prep × its weight / the plan's weight) and the ε the other steps share."""
    if not plan.kinds:
        return 0.0, epsilon
    each = epsilon * PrivateKind.weight / plan.weight
    return each, epsilon - each * len(plan.kinds)


def fit(plan: PrivatePlan) -> list[StepRecord]:
    """Split the budget and run every step in order (the only reading of the data); returns the records.

    The kind steps run first; the other steps share what they leave by weight (docs/data-preparation.md).
    """
    options, n, weight = plan.options, plan.context.n, plan.weight
    epsilon = options.prep_epsilon
    if epsilon is None:
        epsilon = default_prep_epsilon(weight, n, options.budget)
    each, rest = kind_budget(plan, epsilon)
    records = [step.run(plan.context, each, 0.0) for step in plan.kinds]
    steps = plan.settle()
    shares = allocate(steps, rest, options.prep_delta)
    sentences = [budget_note(weight, n, options.prep_epsilon, options.budget, epsilon)]
    sentences += [warning] if (warning := budget_warning(steps, shares, n)) else []
    notes = [StepRecord("budget", "", FREE, "none: n and the budget", 0.0, 0.0, text) for text in sentences]
    return notes + records + [step.run(plan.context, *share) for step, share in zip(steps, shares)]


def release(plan: PrivatePlan) -> Preparation:
    """Run the plan's steps (``fit``: the only reading of the data) and record every step and its cost."""
    records = fit(plan)
    if not plan.kept:
        reasons = "; ".join(f"{quoted(column.name)}: {column.dropped}" for column in plan.features[:5])
        raise DataError(f"every feature column was left out by its released numbers ({reasons})")
    steps = (*plan.structure, *records, plan.scaling.record())
    return Preparation(PRIVATE_MODE, steps, repeatable_seed(plan.options.noise_seed), plan.options.budget)


def build(plan: PrivatePlan, columns: Columns, rows: np.ndarray) -> Rows:
    """Features and targets of ``rows`` from the released plans alone (row by row; see ``build_rows``)."""
    scaling = plan.scaling
    return build_rows(plan.kept, plan.target, scaling.bound(), scaling.row_bound(), columns, rows)


def prepare_private(
    table: Table, features: Sequence[str] | None, options: PrepOptions, info: DatasetInfo | None
) -> PreparedData:
    """A table prepared privately: ``plan_private``, ``fit``, then ``build`` the training and test parts."""
    plan = plan_private(table, features, options)
    preparation = release(plan)
    kept, target = plan.kept, plan.target
    train = build(plan, plan.context.columns, plan.context.train)
    test = build(plan, plan.context.columns, plan.test)
    ridge = options.task == "ridge"
    report = PrepReport(
        steps=(*table.notes, *(record.note for record in preparation.steps), preparation.summary),
        dropped_columns=plan.dropped_columns,
        rows_dropped_missing=0,
        feature_scale=plan.scaling.bound(),
        target_scale=target.spread if ridge else None,
        scaling=options.scaling,
        private_scaling=True,
        n_train=len(train.y),
        n_test=int(test.present.sum()),
        positive_class=None if ridge else positive_class(options),
        log1p_columns=tuple(column.name for column in kept if column.log1p),
        log1p_target=target.log1p,
        centered=options.center,
        missing=options.missing,
        max_levels=options.max_levels,
        one_hot=tuple((column.name, column.levels, 0) for column in kept if column.kind == "text"),
        target_mean=target.centre if ridge and options.center else None,
        standardized=options.standardize != "none",
    )
    interval = target.target_interval if ridge else None
    return prepared_data(plan, train, test, report, preparation, info, plan.scaling.row_bound(), interval)
