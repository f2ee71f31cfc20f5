"""What a prepared dataset is: the arrays the algorithms see and the record of how they were made.

A ``PreparedData`` satisfies SPEC §1 on its training part: float64, finite, every row
``‖x_i‖₁ ≤ 1``; ridge targets ``|y_i| ≤ 1``; logistic labels in ``{−1, +1}``. The test
part is prepared with the training part's constants and clipped the same way; it is
used only to report downstream quality (never by the private algorithms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accfirst.errors import AccFirstError

TASKS = ("ridge", "logistic")


@dataclass(frozen=True)
class DatasetInfo:
    """A built-in dataset as the app lists it.

    Parameters
    ----------
    name : the key in ``BUILTIN_DATASETS`` (e.g. ``"synthetic-buzz"``).
    task : ``"ridge"`` or ``"logistic"`` (SPEC §2).
    title : a short human title.
    description : two to four sentences for the app.
    provenance : where the data come from and how they were made.
    n : rows before the train/test split.
    p : feature columns.
    """

    name: str
    task: str
    title: str
    description: str
    provenance: str
    n: int
    p: int


@dataclass(frozen=True)
class PrepReport:
    """Every preprocessing step applied to a dataset (SPEC §11), in order and as numbers.

    Parameters
    ----------
    steps : human-readable notes, one per step, in the order applied.
    dropped_columns : ``(column, reason)`` for every column left out of the features.
    rows_dropped_missing : rows removed because the target or a feature was missing or infinite.
    feature_scale : every feature was divided by this (max training row ℓ1 norm for
        ``"paper"``, the user's bound for ``"clip"``).
    target_scale : ridge targets were divided by this; ``None`` for logistic.
    scaling : ``"paper"`` or ``"clip"``.
    private_scaling : ``True`` when no preprocessing step read the data (``"clip"`` scaling
        without centring, standardising, imputation or one-hot encoding); ``"paper"`` scaling
        reads the data.
    n_train, n_test : rows in each part.
    positive_class : the target value mapped to +1 (logistic); ``None`` for ridge.
    log1p_columns : feature columns transformed by ``x ↦ log(1 + x)``.
    log1p_target : whether the ridge target was transformed by ``y ↦ log(1 + y)``.
    centered : whether training means were subtracted (features, and the ridge target).
    rows_clipped_train, rows_clipped_test : rows whose features or target were clipped
        to the bounds of SPEC §1 after scaling.
    missing : ``"impute"`` (gaps filled with training statistics) or ``"drop"`` (rows with gaps dropped).
    imputed : ``(column, statistic, values filled)`` for every feature column with a gap filled.
    max_levels : the cap on one-hot columns per text column (0: text columns left out).
    one_hot : ``(column, levels kept, levels grouped into "(other)")`` for every one-hot encoded column.
    standardized : whether the numeric features were divided by their training standard deviations.
    target_mean : the training mean subtracted from a centred ridge target (after ``log(1 + y)``);
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
    """Training and test arrays that satisfy SPEC §1, with their ``PrepReport``.

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

    @property
    def n(self) -> int:
        """Rows the private algorithms see (the training part)."""
        return self.X_train.shape[0]

    @property
    def p(self) -> int:
        """Feature columns."""
        return self.X_train.shape[1]

    def test_quality(self, theta: np.ndarray) -> dict[str, float]:
        """Downstream quality of a linear model θ (no intercept) on the test part.

        Ridge: ``{"r2", "mse", "rmse"}``: R² and MSE on the prepared scale, and the RMSE in
        the target's own units (predictions mapped back by ``PrepReport.to_target_units``,
        compared with the original test targets). Logistic: ``{"accuracy", "auc"}`` where a
        row is predicted +1 when ``xᵀθ > 0``. R² is ``nan`` when the test targets are
        constant and AUC is ``nan`` when the test part holds one class only. The figures are
        evaluation only: computing them reads the test data and is not private.
        """
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (self.p,):
            raise AccFirstError(
                f"theta must be a vector of length {self.p} (one weight per feature); got shape {theta.shape}"
            )
        score = self.X_test @ theta
        if self.task == "ridge":
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
