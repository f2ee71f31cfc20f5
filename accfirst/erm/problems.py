"""The problem of each task, and the problem of a prepared table's training rows."""

from __future__ import annotations

from accfirst.datasets.prepared import EVALUATION_MODE, PreparedData
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problem import Problem
from accfirst.erm.ridge import RidgeProblem

PROBLEMS: dict[str, type[RidgeProblem] | type[LogisticProblem]] = {"ridge": RidgeProblem, "logistic": LogisticProblem}


def prepared_problem(data: PreparedData, lam: float, radius: float | None = None) -> Problem:
    """The ERM problem of a prepared table's training rows, carrying what the preparation cost
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#preparing-the-data-privately).

    The rows' bound ρ and a built-in set's public target range go with it. A private preparation's (ε, δ) goes into every run's total; an evaluation-only one (it read the
    data without noise) is carried as such, for every figure to say that it excludes the preparation.
    """
    preparation = data.preparation
    problem = PROBLEMS[data.task](data.X_train, data.y_train, lam, radius).with_row_bound(data.row_bound)
    problem.target_range = data.target_range
    if preparation.mode == EVALUATION_MODE:
        return problem.with_preparation(0.0, 0.0, EVALUATION_MODE)
    return problem.with_preparation(preparation.epsilon, preparation.delta, preparation.mode)
