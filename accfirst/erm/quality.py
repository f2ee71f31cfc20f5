"""What a certified target reads: the in-sample share of variance explained and the accuracy
(docs/mathematics.md#a-target-in-the-units-people-read).

A ``QualityQuery`` turns a batch of models into their *shortfall* q(θ): at most 0 exactly when the model meets the
target the user named (R² ≥ r, accuracy ≥ a). Its sensitivity is a public number that depends on neither θ, λ nor
the radius, so one private test can certify the models of every λ of a grid
(docs/mathematics.md#choosing-λ-under-the-guarantee). The queries read the training rows exactly; only the private
test's noisy decisions leave the package, and the exact values they compute are shown only as evaluation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.logistic import LogisticProblem, RowBlocks
from accfirst.erm.problem import Problem
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError
from accfirst.validation import validate_probability

# Rows evaluated at once: a block of predictions for every model of a batch stays a few MB.
_ROW_BLOCK = 1 << 15


class QualityQuery(ABC):
    """A target in the user's units, as the linear query the private test certifies.

    ``goal`` is the level the user named (r or a), ``unit`` its name in messages and ``sensitivity`` the most one
    replaced row moves the shortfall.
    """

    unit: str
    goal: float
    sensitivity: float
    n: int

    @abstractmethod
    def shortfall(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        """q(θ) for each row of a (k, p) batch: ≤ 0 exactly when θ meets the target."""

    @abstractmethod
    def quality(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        """The R² or the accuracy of each model of a (k, p) batch on the training rows (evaluation only)."""


class VarianceExplainedQuery(QualityQuery):
    """R² ≥ r for the predictor clip(θᵀx, low, high): q_r(θ) = (1/n)[Σ(y − ŷ)² − (1 − r)Σ(y − ȳ)²].

    Sensitivity (2 − r)w²/n, w = high − low: predictions and targets share [low, high], so one replaced row moves
    the residual sum by at most w² and the targets' sum of squares about their mean by at most w² [derived,
    docs/mathematics.md#a-target-in-the-units-people-read].

    Parameters
    ----------
    X, y : the training rows and targets (targets within [low, high]).
    r : the share of variance the model must explain, in (0, 1).
    low, high : the public range of the prepared targets.
    """

    unit = "R²"

    def __init__(self, X: NDArray[np.float64], y: NDArray[np.float64], r: float, low: float, high: float) -> None:
        self.X, self.y = X, y
        self.goal = r
        self.low, self.high = low, high
        self.n = int(y.size)
        self.width = high - low
        self.sensitivity = VarianceExplained(r).sensitivity(self.n, self.width)
        centred = y - y.mean()
        self.total = float(centred @ centred)

    def predict(self, X: NDArray[np.float64], thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        """clip(Xθ, low, high) for each model of a (k, p) batch: (rows, k)."""
        predictions: NDArray[np.float64] = np.clip(X @ thetas.T, self.low, self.high)
        return predictions

    def residual_sums(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        """Σ(y − ŷ)² for each model of a (k, p) batch, in row blocks."""
        sums = np.zeros(thetas.shape[0])
        for start in range(0, self.n, _ROW_BLOCK):
            block = slice(start, start + _ROW_BLOCK)
            residuals = self.y[block, None] - self.predict(self.X[block], thetas)
            sums += np.einsum("ik,ik->k", residuals, residuals)
        return sums

    def shortfall(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        shortfalls: NDArray[np.float64] = (self.residual_sums(thetas) - (1.0 - self.goal) * self.total) / self.n
        return shortfalls

    def quality(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.total == 0:
            return np.full(thetas.shape[0], np.nan)
        shares: NDArray[np.float64] = 1.0 - self.residual_sums(thetas) / self.total
        return shares


def _error_counts(yX: NDArray[np.float64], thetas: NDArray[np.float64]) -> tuple[NDArray[np.float64]]:
    """Over a block of rows y_i·x_i: how many rows each model of a (k, p) batch gets wrong (a tie is wrong)."""
    return ((yX @ thetas.T <= 0).sum(axis=0).astype(np.float64),)


class AccuracyQuery(QualityQuery):
    """Accuracy ≥ a for the classifier sign(θᵀx): q_a(θ) = e(θ) − (1 − a), e the in-sample error rate.

    Sensitivity 1/n: one replaced row changes one indicator (docs/mathematics.md#a-target-in-the-units-people-read).

    Parameters
    ----------
    rows : the training rows y_i·x_i (labels ±1), as a logistic problem holds them.
    a : the accuracy the model must reach, in (0, 1).
    """

    unit = "accuracy"

    def __init__(self, rows: RowBlocks, a: float) -> None:
        self.rows = rows
        self.goal = a
        self.n = rows.n
        self.sensitivity = Accuracy(a).sensitivity(self.n, 0.0)

    def error_rates(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        (errors,) = self.rows.reduce(lambda block: _error_counts(block, thetas))
        rates: NDArray[np.float64] = errors / self.n
        return rates

    def shortfall(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        shortfalls: NDArray[np.float64] = self.error_rates(thetas) - (1.0 - self.goal)
        return shortfalls

    def quality(self, thetas: NDArray[np.float64]) -> NDArray[np.float64]:
        accuracies: NDArray[np.float64] = 1.0 - self.error_rates(thetas)
        return accuracies


@dataclass(frozen=True)
class VarianceExplained:
    """The target R² ≥ r: the released ridge model's clipped predictions explain at least a share r of the training
    targets' variance, with probability ≥ 1 − γ (docs/mathematics.md#a-target-in-the-units-people-read).

    r in (0, 1); 0.8 asks for a model that explains at least 80% of the variance.
    """

    r: float
    key: ClassVar[str] = "r2"
    unit: ClassVar[str] = "R²"
    problem_name: ClassVar[str] = RidgeProblem.name

    def __post_init__(self) -> None:
        object.__setattr__(self, "r", validate_probability("r (the R² target)", self.r))

    @property
    def goal(self) -> float:
        return self.r

    def sensitivity(self, n: int, width: float) -> float:
        """(2 − r)w²/n, the query's sensitivity on n rows whose targets lie in a public range of width w."""
        return (2.0 - self.r) * width**2 / n

    def query(self, problem: Problem) -> VarianceExplainedQuery:
        """The query on ``problem``'s training rows (a ridge problem built from its rows)."""
        check_task(self, problem.name)
        if not isinstance(problem, RidgeProblem) or problem.rows is None:
            raise AccFirstError(
                "an R² target reads the training rows; this ridge problem was built from sums of them only "
                "(use an excess-risk target α on tables summed from files)"
            )
        X, y = problem.rows
        low, high = problem.target_range
        return VarianceExplainedQuery(X, y, self.r, low, high)


@dataclass(frozen=True)
class Accuracy:
    """The target accuracy ≥ a: the released logistic model's sign classifies at least a share a of the training rows
    correctly (a tie counts as an error), with probability ≥ 1 − γ
    (docs/mathematics.md#a-target-in-the-units-people-read).

    a in (0, 1); 0.9 asks for at most 10% errors.
    """

    a: float
    key: ClassVar[str] = "accuracy"
    unit: ClassVar[str] = "accuracy"
    problem_name: ClassVar[str] = LogisticProblem.name

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", validate_probability("a (the accuracy target)", self.a))

    @property
    def goal(self) -> float:
        return self.a

    def sensitivity(self, n: int, width: float) -> float:
        """1/n, the error rate's sensitivity on n rows (``width`` plays no part)."""
        return 1.0 / n

    def query(self, problem: Problem) -> AccuracyQuery:
        """The query on ``problem``'s training rows (a logistic problem)."""
        check_task(self, problem.name)
        assert isinstance(problem, LogisticProblem)
        return AccuracyQuery(problem.rows, self.a)


#: A target in the units people read.
QualityTarget = VarianceExplained | Accuracy

#: What a run aims at when the user names no target, by task: R² ≥ 0.8 (ridge), accuracy ≥ 0.9 (logistic). The app's
#: default and ``accfirst run``'s, read from here by both.
DEFAULT_TARGETS: dict[str, QualityTarget] = {
    VarianceExplained.problem_name: VarianceExplained(0.8),
    Accuracy.problem_name: Accuracy(0.9),
}


#: The target in the units people read of each task: R² (ridge), accuracy (logistic).
QUALITY_TARGETS: dict[str, type[VarianceExplained] | type[Accuracy]] = {
    VarianceExplained.problem_name: VarianceExplained,
    Accuracy.problem_name: Accuracy,
}


def quality_target(task: str, goal: float | QualityTarget) -> QualityTarget:
    """``goal`` as ``task``'s target in the units people read: R² ≥ r (ridge) or accuracy ≥ a (logistic); a
    ``VarianceExplained`` or ``Accuracy`` is kept as it is."""
    if isinstance(goal, (VarianceExplained, Accuracy)):
        return goal
    if task not in QUALITY_TARGETS:
        raise AccFirstError(f"task must be one of {list(QUALITY_TARGETS)}; got {task!r}")
    return QUALITY_TARGETS[task](goal)


def check_task(target: QualityTarget, task: str) -> None:
    """``AccFirstError`` unless ``target`` is for problems of ``task`` (a problem's or a shape's ``name``)."""
    if task != target.problem_name:
        raise AccFirstError(
            f"a target in {target.unit} is for {target.problem_name} regression; this is a {task} problem"
        )
