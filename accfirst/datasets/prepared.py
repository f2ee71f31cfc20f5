"""What a prepared dataset is: the arrays the algorithms see and the record of how they were made.

A ``PreparedData`` satisfies docs/mathematics.md#setting-and-notation on its training part: float64, finite, every row
``‖x_i‖₁ ≤ 1``; ridge targets ``|y_i| ≤ 1``; logistic labels in ``{−1, +1}``. The test
part is prepared with the training part's constants and clipped the same way; it is
used only to report downstream quality (never by the private algorithms).

Its ``Preparation`` says what making it cost in privacy (docs/mathematics.md#preparing-the-data-privately):
``prep_epsilon`` and ``prep_delta`` are what a run on the prepared table adds to its own ε and δ, once per table.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd

from accfirst.errors import AccFirstError

TASKS = ("ridge", "logistic")
# How a step's cost is shown: private steps spend budget, the others read nothing, or the data.
DECLARED, PRIVATE, FREE, EVALUATION, PUBLIC = "declared", "private", "post-processing", "evaluation only", "public"
PRIVATE_MODE, EVALUATION_MODE, PUBLIC_MODE = "private", "evaluation", "public"
PREPARATIONS = (PRIVATE_MODE, EVALUATION_MODE)
EXCLUDES_PREPARATION = "excludes the preparation, which read the data without noise (evaluation only)"
PUBLIC_PREPARATION = "generated from public parameters: preparation is free"


@dataclass(frozen=True)
class StepRecord:
    """One step of a preparation, as the report lists it.

    Parameters
    ----------
    step : the step's name (e.g. ``"private range"``).
    column : the column it concerns (``""`` for the whole table).
    kind : ``"declared"`` (metadata the user stated), ``"private"`` (a charged mechanism),
        ``"post-processing"`` (uses released numbers only), ``"evaluation only"`` (reads the data
        without noise) or ``"public"`` (data generated from public parameters).
    mechanism : how it reads the data, e.g. ``"Laplace, sensitivity (b − a)/n"``.
    epsilon, delta : what it spent (0 for every kind but ``"private"``).
    note : the sentence the report shows, with the numbers it released.
    """

    step: str
    column: str
    kind: str
    mechanism: str
    epsilon: float
    delta: float
    note: str


@dataclass(frozen=True)
class Preparation:
    """How a table was prepared and what that cost in privacy (docs/mathematics.md#preparing-the-data-privately;
    docs/mathematics.md, "Preparing the data privately").

    Parameters
    ----------
    mode : ``"private"`` (every statistic declared or released by a charged mechanism),
        ``"evaluation"`` (the evaluation-only preparation: reads the data without noise, so no ε covers it)
        or ``"public"`` (data generated from public parameters: reading them costs nothing).
    steps : every step in order, with its mechanism and what it spent.
    noise_seed : the seed of a repeatable run, whose noise an attacker could know (not a
        private release); ``None`` when the noise came from the operating system.
    budget : the ε the user means to spend on the table in all, preparation included (public), or ``None`` when
        none was stated; the summary gives the preparation's share of it.
    """

    mode: str
    steps: tuple[StepRecord, ...] = ()
    noise_seed: int | None = None
    budget: float | None = None

    @property
    def private_rows(self) -> bool:
        """Whether the rows come from a real table: anything computed from them is a release (its noise must not
        come from a public seed), unlike data generated from public parameters."""
        return self.mode != PUBLIC_MODE

    @property
    def epsilon(self) -> float:
        """ε of the preparation (basic composition of its steps); ∞ in evaluation-only mode."""
        if self.mode == EVALUATION_MODE:
            return math.inf
        return float(sum(step.epsilon for step in self.steps))

    @property
    def delta(self) -> float:
        """δ of the preparation (the level selections'); 0 when none ran."""
        return float(sum(step.delta for step in self.steps))

    @property
    def summary(self) -> str:
        """One line for a report: what the preparation cost, or why no ε covers it."""
        if self.mode == EVALUATION_MODE:
            return f"preparation: every ε shown {EXCLUDES_PREPARATION}"
        if self.mode == PUBLIC_MODE:
            return f"preparation: {PUBLIC_PREPARATION} (ε = 0)"
        charged = sum(step.epsilon > 0 for step in self.steps)
        text = (
            f"preparation: ε = {self.epsilon:.3g}, δ = {self.delta:.2g} ({charged} private step(s), basic composition "
            f"across columns), paid once for this table{self._share()}"
            if charged
            else "preparation: ε = 0 (every statistic was declared: nothing read from the data)"
        )
        if self.noise_seed is not None:
            text += f"; repeatable run (noise seed {self.noise_seed}): not a private release"
        return text

    @property
    def share(self) -> float | None:
        """ε_prep over the table's budget (``None`` when no budget was stated)."""
        return None if self.budget is None else self.epsilon / self.budget

    def _share(self) -> str:
        share = self.share
        if share is None:
            return ""
        if share > 1:
            return f": more than the table's budget ε = {self.budget:g}"
        return f": {share:.0%} of the table's budget ε = {self.budget:g}"

    def to_frame(self) -> pd.DataFrame:
        """One row per step: step, column, kind, mechanism, epsilon, delta, note."""
        return pd.DataFrame([asdict(step) for step in self.steps], columns=[f.name for f in fields(StepRecord)])


@dataclass(frozen=True)
class DatasetInfo:
    """A built-in dataset as the app lists it.

    Parameters
    ----------
    name : the key in ``BUILTIN_DATASETS`` (e.g. ``"synthetic-buzz"``).
    task : ``"ridge"`` or ``"logistic"`` (docs/mathematics.md#the-two-learning-problems).
    title : a short human title.
    description : two to four sentences for the app.
    provenance : where the data come from and how they were made.
    n : rows before the train/test split.
    p : feature columns.
    public : generated from public parameters (preparing it reads nothing private: free, no
        noise); ``False`` for a real table, prepared privately like an upload.
    target_range : the public range of the prepared ridge target, [−1, 1] unless the preparation puts it in a
        narrower one (log(1 + y) over its largest value lies in [0, 1]); an R² target clips predictions to it
        (docs/mathematics.md#a-target-in-the-units-people-read).
    """

    name: str
    task: str
    title: str
    description: str
    provenance: str
    n: int
    p: int
    public: bool = False
    target_range: tuple[float, float] = (-1.0, 1.0)


@dataclass(frozen=True)
class PrepReport:
    """Every preprocessing step applied to a dataset (docs/data-preparation.md#scaling-into-the-unit-ball,
    docs/mathematics.md#preparing-the-data-privately), in order and as numbers.

    The fields describe both preparations; where they differ, "private" is the default
    preparation and "evaluation only" the one that reads the data (``Preparation`` has each step's cost).

    Parameters
    ----------
    steps : human-readable notes, one per step, in the order applied; the last one says what
        the preparation cost (``Preparation.summary``).
    dropped_columns : ``(column, reason)`` for every column left out of the features.
    rows_dropped_missing : rows removed because the target or a feature was missing or infinite
        (always 0 in private mode, which drops no row).
    feature_scale : every feature was divided by this (private ``"ranges"``: the sum of the
        columns' half-ranges; ``"paper"``: the max training row ℓ1 norm; ``"clip"``: the user's bound).
    target_scale : ridge targets were divided by this; ``None`` for logistic.
    scaling : ``"ranges"``, ``"paper"`` or ``"clip"``.
    private_scaling : ``True`` when nothing read the data without a charge: a private
        preparation, public data, or evaluation only with ``"clip"`` scaling and no centring,
        standardising, imputation or one-hot encoding.
    n_train, n_test : rows in each part (the test part leaves out rows with no target).
    positive_class : the target value mapped to +1 (logistic); ``None`` for ridge.
    log1p_columns : feature columns transformed by ``x ↦ log(1 + x)``.
    log1p_target : whether the ridge target was transformed by ``y ↦ log(1 + y)``.
    centered : whether means were subtracted (features, and the ridge target): private means,
        or the training means (evaluation only).
    rows_clipped_train, rows_clipped_test : rows whose features or target were clipped
        to the bounds of docs/mathematics.md#setting-and-notation after scaling (evaluation only counts them).
    missing : private: ``"impute"``, ``"median"`` or ``"centre"`` (what a gap becomes); evaluation
        only: ``"impute"`` (gaps filled with training statistics) or ``"drop"`` (rows with gaps dropped).
    imputed : ``(column, statistic, values filled)`` for every feature column with a gap filled
        (evaluation only; the private steps say what a gap becomes without counting them).
    max_levels : the cap on one-hot columns per text column (0: text columns left out).
    one_hot : ``(column, levels kept, levels grouped into "(other)")`` for every one-hot encoded
        column (private: nothing is grouped; other values give no column).
    standardized : whether the numeric features were divided by a spread (private: half the range
        or a private standard deviation; evaluation only: the training standard deviations).
    target_mean : the mean subtracted from a centred ridge target (after ``log(1 + y)``);
        ``None`` otherwise. With ``target_scale`` and ``log1p_target`` it maps predictions back
        to the target's own units.
    """

    steps: tuple[str, ...]
    dropped_columns: tuple[tuple[str, str], ...]
    rows_dropped_missing: int
    feature_scale: float
    target_scale: float | None
    scaling: str
    private_scaling: bool
    n_train: int
    n_test: int
    positive_class: object = None
    log1p_columns: tuple[str, ...] = ()
    log1p_target: bool = False
    centered: bool = False
    rows_clipped_train: int = 0
    rows_clipped_test: int = 0
    missing: str = "drop"
    imputed: tuple[tuple[str, str, int], ...] = ()
    max_levels: int = 0
    one_hot: tuple[tuple[str, tuple[str, ...], int], ...] = ()
    target_mean: float | None = None
    standardized: bool = False

    def to_target_units(self, prediction: np.ndarray) -> np.ndarray:
        """Predictions on the prepared scale mapped back to the target's own units (ridge).

        Inverts the recorded transforms in reverse order: scaling (× ``target_scale``),
        centring (+ ``target_mean``), then ``log(1 + y)`` (``expm1``).
        """
        if self.target_scale is None:
            raise AccFirstError("only a ridge target has units to map back to; logistic labels are classes")
        values = np.asarray(prediction, dtype=np.float64) * self.target_scale
        if self.target_mean is not None:
            values = values + self.target_mean
        return np.expm1(values) if self.log1p_target else values


@dataclass(frozen=True, eq=False)
class PreparedData:
    """Training and test arrays that satisfy docs/mathematics.md#setting-and-notation, with their ``PrepReport``.

    The arrays are read-only so a cached copy cannot be changed by a caller.

    Parameters
    ----------
    X_train, y_train : what the private algorithms see.
    X_test, y_test : held out; only for ``test_quality``.
    task : ``"ridge"`` or ``"logistic"``.
    feature_names : one name per column of ``X_train``.
    target_name : the target column.
    report : how the arrays were made.
    info : the ``DatasetInfo`` of a built-in dataset; ``None`` for an upload.
    y_test_original : a ridge target's test values in its own units, before any transform or
        clipping; ``None`` when unknown (then ``test_quality`` maps ``y_test`` back).
    preparation : how it was prepared and what that cost (``prep_epsilon``, ``prep_delta``);
        evaluation only (ε = ∞) when not given.
    row_bound : ρ, a bound on every row's Euclidean norm, training and test
        (docs/mathematics.md#preparing-the-data-privately): from the plan in a private preparation (public: √ of the
        sum of the columns' largest squares over the bound), the largest training row's norm for data generated from
        public parameters and in the evaluation-only preparation (which reads it), 1 when nothing better is known
        (‖x‖₂ ≤ ‖x‖₁ ≤ 1).
    prepared_range : the public interval the private preparation put the ridge targets in (its released range, centre
        and scale, post-processing: ``ColumnPlan.target_interval``); ``None`` otherwise (``target_range`` is then a
        built-in set's declared range, or [−1, 1]).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    task: str
    feature_names: tuple[str, ...]
    target_name: str
    report: PrepReport
    info: DatasetInfo | None = None
    y_test_original: np.ndarray | None = None
    preparation: Preparation = Preparation(EVALUATION_MODE)
    row_bound: float = 1.0
    prepared_range: tuple[float, float] | None = None

    @property
    def target_range(self) -> tuple[float, float]:
        """The public range of the prepared ridge target: the private preparation's, else a built-in set's declared
        one, else [−1, 1]."""
        if self.prepared_range is not None:
            return self.prepared_range
        return (-1.0, 1.0) if self.info is None else self.info.target_range

    @property
    def prep_epsilon(self) -> float:
        """ε the preparation spent (0 when declared or public; ∞ when it read the data: evaluation only)."""
        return self.preparation.epsilon

    @property
    def prep_delta(self) -> float:
        """δ the preparation spent (its level selections)."""
        return self.preparation.delta

    @property
    def n(self) -> int:
        """Rows the private algorithms see (the training part)."""
        return int(self.X_train.shape[0])

    @property
    def p(self) -> int:
        """Feature columns."""
        return int(self.X_train.shape[1])

    def test_quality(self, theta: np.ndarray) -> dict[str, float]:
        """Downstream quality of a linear model θ (no intercept) on the test part.

        Ridge: ``{"r2", "mse", "rmse"}`` of the predictor clip(xᵀθ) to the targets' public range (``target_range``:
        the predictor a certified R² is about, docs/mathematics.md#a-target-in-the-units-people-read; clipping
        to a range the targets lie in only brings a prediction closer): R² and MSE on the prepared scale, and the RMSE in
        the target's own units (predictions mapped back by ``PrepReport.to_target_units``,
        compared with the original test targets). Logistic: ``{"accuracy", "auc"}`` where a
        row is predicted +1 when ``xᵀθ > 0``. R² is ``nan`` when the test targets are
        constant, AUC is ``nan`` when the test part holds one class only, and every figure is
        ``nan`` when no test row has a target. The figures are
        evaluation only: computing them reads the test data and is not private.
        """
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (self.p,):
            raise AccFirstError(
                f"theta must be a vector of length {self.p} (one weight per feature); got shape {theta.shape}"
            )
        score = self.X_test @ theta
        if not len(score):  # a private preparation's test rows all lacked a target
            return dict.fromkeys(("r2", "mse", "rmse") if self.task == "ridge" else ("accuracy", "auc"), float("nan"))
        if self.task == "ridge":
            score = np.clip(score, *self.target_range)
            mse = float(np.mean((self.y_test - score) ** 2))
            total = float(np.sum((self.y_test - self.y_test.mean()) ** 2))
            r2 = 1.0 - mse * len(self.y_test) / total if total > 0 else float("nan")
            original = self.y_test_original
            if original is None:
                original = self.report.to_target_units(self.y_test)
            rmse = float(np.sqrt(np.mean((original - self.report.to_target_units(score)) ** 2)))
            return {"r2": r2, "mse": mse, "rmse": rmse}
        from sklearn.metrics import roc_auc_score  # lazily: see the note in ``builtin``

        accuracy = float(np.mean(np.where(score > 0, 1.0, -1.0) == self.y_test))
        both_classes = np.unique(self.y_test).size == 2
        auc = float(roc_auc_score(self.y_test, score)) if both_classes else float("nan")
        return {"accuracy": accuracy, "auc": auc}
