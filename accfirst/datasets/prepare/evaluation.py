"""The evaluation-only preparation: the pipeline of the private one, its numbers read from the data without noise.

Kept for comparison and for tables whose owner accepts it; every ε shown on data prepared this way
**excludes preparation**: its medians, most frequent levels, means, standard deviations, the
columns it keeps and the largest row norm it scales by are read from the private rows, and no
mechanism covers them. ``Preparation.epsilon`` is ∞ here, so a total that adds it never hides that.

Like the private preparation it plans, runs its steps, then builds the rows from the column plans
alone (``accfirst.datasets.prepare.build``). Its plan reads the data (``plan_evaluation``: the
identifiers by name as in private mode, then the usable columns and rows, the labels and the
stratified split of ``accfirst.datasets.prepare.usable``; optional ``log(1 + x)`` columns and
``log(1 + y)`` target); its steps read each statistic exactly (``accfirst.datasets.prepare.exact``):
levels, gaps, centring, standardising, and scaling (``"paper"``, appendix B.1 of the paper: the
largest training row ℓ1 norm and ``|y|``; ``"clip"``: public bounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from accfirst.datasets.columns import (
    Categorical,
    Table,
    check_log1p,
    listing,
    quoted,
    ridge_target,
)
from accfirst.datasets.prepare.base import READS_EXACTLY, ColumnPlan, Context
from accfirst.datasets.prepare.build import Plan, build_rows, prepared_data
from accfirst.datasets.prepare.exact import (
    TOO_LARGE,
    ExactCentring,
    ExactGaps,
    ExactLevels,
    ExactSpread,
    ExactStep,
    RowScale,
    TargetLog,
)
from accfirst.datasets.prepare.identifiers import candidates as feature_candidates
from accfirst.datasets.prepare.identifiers import identifier_note
from accfirst.datasets.prepare.kind import Cells
from accfirst.datasets.prepare.noise import preparation_rng
from accfirst.datasets.prepare.options import PrepOptions
from accfirst.datasets.prepare.scaling import row_l2
from accfirst.datasets.prepare.usable import check_log1p_domain, labels, stratified_split, usable
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


class _Notes:
    """The report's notes and the matching step records, one per note."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.records: list[StepRecord] = []

    def add(self, step: str, notes: Sequence[str], reads: bool) -> None:
        kind, mechanism = (EVALUATION, READS_EXACTLY) if reads else (FREE, "none")
        for note in notes:
            self.notes.append(note)
            self.records.append(StepRecord(step, "", kind, mechanism, 0.0, 0.0, note))


@dataclass
class EvaluationPlan(Plan):
    """The evaluation-only plan: besides the shared one, what its reading of the data decided.

    ``unusable`` the feature columns left out by what was read, with reasons; ``usable`` the rows
    kept; ``positive`` the logistic class mapped to +1; ``gaps`` and ``scale`` the steps the report
    reads back.
    """

    steps: list[ExactStep] = field(default_factory=list)
    unusable: list[tuple[str, str]] = field(default_factory=list)
    usable: int = 0
    positive: object = None
    gaps: ExactGaps | None = None
    scale: RowScale | None = None

    @property
    def dropped_columns(self) -> tuple[tuple[str, str], ...]:
        return (*super().dropped_columns, *self.unusable)


@np.errstate(over="ignore", invalid="ignore")  # values near 1e308 overflow; the finiteness check reports them
def prepare_evaluation(
    table: Table, features: Sequence[str] | None, options: PrepOptions, info: DatasetInfo | None
) -> PreparedData:
    """The evaluation-only preparation of ``table`` (see the module docstring): evaluation only."""
    notes = _Notes()
    plan = plan_evaluation(table, features, options, notes)
    for step in plan.steps:
        notes.add(step.name, step.run(plan.context), reads=step.kind == EVALUATION)
    scale, gaps = plan.scale, plan.gaps
    assert scale is not None and gaps is not None  # plan_evaluation sets both
    columns = plan.context.columns
    train = build_rows(plan.kept, plan.target, scale.feature_scale, 1.0, columns, plan.context.train)
    test = build_rows(plan.kept, plan.target, scale.feature_scale, 1.0, columns, plan.test)
    clipped_train, clipped_test, scale_notes = scale.notes(train.clipped, test.clipped)
    notes.add("scaling", scale_notes, reads=scale.reads_data)
    for array in (train.X, test.X, train.y, test.y):
        if not np.isfinite(array).all():
            raise DataError(TOO_LARGE)
    text = [column for column in plan.kept if column.kind == "text"]
    standardized = any(isinstance(step, ExactSpread) for step in plan.steps)
    private_scaling = options.scaling == "clip" and not (options.center or standardized or gaps.imputed or text)
    rho = 1.0 if private_scaling else _largest_norm(train.X, test.X)
    if rho < 1:
        note = (
            f"every row lies in ‖x‖₂ ≤ ρ = {rho:.4g}, the largest Euclidean norm of a row: this reads the data and is "
            "not private"
        )
        notes.add("row bound", [note], reads=True)
    ridge = options.task == "ridge"
    preparation = Preparation(EVALUATION_MODE, tuple(notes.records))
    report = PrepReport(
        steps=(*notes.notes, preparation.summary),
        dropped_columns=plan.dropped_columns,
        rows_dropped_missing=table.n - plan.usable,
        feature_scale=scale.feature_scale,
        target_scale=scale.target_scale,
        scaling=options.scaling,
        private_scaling=private_scaling,
        n_train=len(plan.context.train),
        n_test=len(plan.test),
        positive_class=plan.positive,
        log1p_columns=tuple(column.name for column in plan.kept if column.log1p),
        log1p_target=options.log1p_target,
        centered=options.center,
        rows_clipped_train=clipped_train,
        rows_clipped_test=clipped_test,
        missing=options.missing,
        imputed=tuple(gaps.imputed),
        max_levels=options.max_levels,
        one_hot=tuple((column.name, column.level_names, column.grouped) for column in text),
        target_mean=plan.target.centre if ridge and options.center else None,
        standardized=standardized,
    )
    return prepared_data(plan, train, test, report, preparation, info, rho)


def _largest_norm(*parts: np.ndarray) -> float:
    """ρ read from the rows (evaluation only), at most 1: a few ulps above the largest Euclidean norm, so that a norm
    computed in another order stays below it."""
    largest = max((float(row_l2(X).max()) for X in parts if X.size), default=1.0)
    return min(1.0, largest * (1 + 8 * np.finfo(np.float64).eps))


def plan_evaluation(
    table: Table, features: Sequence[str] | None, options: PrepOptions, notes: _Notes
) -> EvaluationPlan:
    """The columns, rows, labels and split, read from the data, and the steps that read the rest (notes in order)."""
    task, schema = options.task, options.schema
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
        y_values, positive, target_note = labels(table.columns[target], target, positive_class)
        target_notes = [target_note]
    else:
        (y_values, target_notes), positive = ridge_target(table.columns[target], target), None
    notes.add("target", target_notes, reads=task == "logistic" and positive_class is None)
    candidates, _, identifiers = feature_candidates(table, features, schema)
    notes.add("columns", [identifier_note(identifiers)] if identifiers else [], reads=False)
    log1p_set = check_log1p(options.log1p_columns, candidates) | {n for n in candidates if schema.column(n).log1p}
    kept = usable(
        table.columns, candidates, y_values, target, positive, features is not None, options.max_levels, options.missing
    )
    notes.add("columns", kept.marker_notes, reads=False)
    notes.add("columns", [f"dropped column {quoted(name)}: {reason}" for name, reason in kept.dropped], reads=True)
    notes.add("rows", [kept.rows_note] if kept.rows_note else [], reads=True)
    log1p_used = tuple(name for name in kept.names if name in log1p_set)
    left_out = sorted(log1p_set - set(kept.names))
    notes.add(
        "log(1 + x)", [f"log(1 + x) not applied to {quoted(name)}: the column was dropped" for name in left_out], True
    )
    ok = kept.rows
    check_log1p_domain(kept.names, kept.values, log1p_used, y_values if options.log1p_target else None, target, ok)
    train, test = stratified_split(np.flatnonzero(ok), y_values, task, options.test_size, options.seed)
    split_note = (
        f"split {int(ok.sum()):,} rows at random (seed {options.seed}) into {len(train):,} training and "
        f"{len(test):,} test rows{' within each class' if task == 'logistic' else ''}; "
        "the private algorithms see only the training rows"
    )
    notes.add("split", [split_note], reads=task == "logistic")
    if log1p_used:
        notes.add("log(1 + x)", [f"applied log(1 + x) to {len(log1p_used)} column(s): {listing(log1p_used)}"], False)
    with np.errstate(divide="ignore", invalid="ignore"):  # rows left out may hold values log(1 + x) refuses
        columns: dict[str, np.ndarray | Categorical | Cells] = {
            name: np.log1p(column) if isinstance(column, np.ndarray) and name in log1p_used else column
            for name, column in zip(kept.names, kept.values)
        }
        columns[target] = np.log1p(y_values) if options.log1p_target else y_values
    plans = [
        ColumnPlan(name, "text" if isinstance(column, Categorical) else "numeric", log1p=name in log1p_used)
        for name, column in zip(kept.names, kept.values)
    ]
    target_plan = ColumnPlan(target, "labels" if task == "logistic" else "numeric", log1p=options.log1p_target)
    plan = EvaluationPlan(
        Context(columns, train, preparation_rng(options.noise_seed)),
        plans,
        target_plan,
        test,
        options,
        raw_target=None if task == "logistic" else y_values,
        identifiers=identifiers,
        unusable=kept.dropped,
        usable=int(ok.sum()),
        positive=positive,
    )
    _add_steps(plan)
    return plan


def _add_steps(plan: EvaluationPlan) -> None:
    """The steps that read the statistics, in order (see ``accfirst.datasets.prepare.exact``)."""
    options, plans, target = plan.options, plan.features, plan.target
    ridge = options.task == "ridge"
    plan.steps = [ExactLevels(column, options.max_levels) for column in plans if column.kind == "text"]
    plan.gaps = ExactGaps(plans, plan.test)
    plan.steps.append(plan.gaps)
    if options.log1p_target:
        plan.steps.append(TargetLog(target.name))
    if options.center:
        plan.steps.append(ExactCentring(plans, target if ridge else None))
    if options.standardize != "none" and any(column.kind == "numeric" for column in plans):
        plan.steps.append(ExactSpread(plans))
    bounds = None
    if options.scaling == "clip":
        assert options.feature_bound is not None  # 'clip' scaling comes with one (preparation_options)
        bounds = (options.feature_bound, options.target_bound)
    plan.scale = RowScale(plans, target, ridge, bounds)
    plan.steps.append(plan.scale)
