"""A run toward a target in R² or accuracy through ``search``: what its record says, what it refuses, what a filter
is told before it runs (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee, docs/mathematics.md#refusals-that-spend-nothing)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.quality import Accuracy, VarianceExplained, VarianceExplainedQuery
from accfirst.erm.ridge import RidgeProblem
from accfirst.errors import AccFirstError
from accfirst.methods.certified import refusal_before_reading
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import declared_bound, search


def _ridge(n: int = 3000, seed: int = 0) -> RidgeProblem:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3)) / 3
    y = np.clip(X @ np.array([2.4, -1.6, 1.0]) + rng.normal(scale=0.2, size=n), -1, 1)
    return RidgeProblem(X, y, 0.01)


def test_a_released_model_records_its_lambda_quality_and_whole_bill():
    problem = _ridge().with_preparation(0.3, 1e-6)
    result = search(problem, "nr", VarianceExplained(0.5), 0.1, np.random.default_rng(0), SearchOptions(ceiling=20.0))
    assert not result.nothing_released and result.theta is not None
    assert result.target == "r2" and result.goal == 0.5 and math.isnan(result.alpha)
    X, y = problem.rows
    exact = VarianceExplainedQuery(X, y, 0.5, -1.0, 1.0).quality(result.theta[None, :])[0]
    assert result.quality == pytest.approx(exact)
    assert result.success == (exact >= 0.5)
    parts = result.eps_prep + result.eps_scale + result.eps_test + result.eps_hypothesis
    assert result.eps_total == pytest.approx(parts)
    assert result.eps_prep == 0.3 and result.delta == pytest.approx(1e-6)
    assert result.eps_total - result.eps_prep <= 20.0 + 1e-12


def test_a_fixed_lambda_is_the_only_one_released():
    result = search(
        _ridge(), "nr", VarianceExplained(0.5), 0.1, np.random.default_rng(1), SearchOptions(lambdas=0.004, ceiling=20)
    )
    assert result.lam == 0.004


def test_a_target_no_table_of_this_size_can_meet_spends_nothing_and_says_why():
    problem = _ridge(n=60).with_preparation(0.5, 0.0)
    result = search(problem, "nr", VarianceExplained(0.95), 0.1, None, SearchOptions(ceiling=1.0))
    assert result.refused and result.nothing_released and result.theta is None and math.isnan(result.lam)
    assert result.eps_total == 0.5  # the preparation, spent before; the run itself nothing
    assert "Nothing was read or spent" in result.stopped and "60 rows" in result.stopped


def test_the_filter_is_told_the_ceiling_and_the_wrong_pairings_are_refused_clearly():
    problem = _ridge(n=200)
    assert declared_bound(problem, "nr", VarianceExplained(0.5), 0.1, SearchOptions(ceiling=3.0)) == (3.0, 0.0)
    with pytest.raises(AccFirstError, match="noise reduction"):
        search(problem, "doubling", VarianceExplained(0.5), 0.1, None, SearchOptions())
    with pytest.raises(AccFirstError, match="logistic regression; this is a ridge problem"):
        search(problem, "nr", Accuracy(0.9), 0.1, None, SearchOptions())
    with pytest.raises(AccFirstError, match="Laplace"):
        search(problem, "nr", VarianceExplained(0.5), 0.1, None, SearchOptions(noise="gaussian"))
    rows = _ridge()
    summed = RidgeProblem.from_statistics(rows.A, rows.b, rows.c, rows.n, 0.01)
    with pytest.raises(AccFirstError, match="reads the training rows"):
        search(summed, "nr", VarianceExplained(0.5), 0.1, None, SearchOptions())
    with pytest.raises(AccFirstError, match=r"r \(the R² target\) must be in \(0, 1\)"):
        VarianceExplained(1.0)


def test_an_accuracy_target_chooses_among_separate_chains():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(3000, 3)) / 3
    y = np.where(X @ np.array([3.0, -2.0, 1.0]) + rng.logistic(size=3000) * 0.3 > 0, 1.0, -1.0)
    result = search(LogisticProblem(X, y, 0.01), "nr", Accuracy(0.7), 0.1, np.random.default_rng(2), SearchOptions())
    assert result.target == "accuracy" and result.generator == "output"
    assert result.theta is not None and result.quality == pytest.approx(np.mean(np.sign(X @ result.theta) == y))


def test_the_refusal_is_known_before_the_preparation_and_is_the_run_s_own():
    options = SearchOptions(ceiling=1.0)
    before = refusal_before_reading(RidgeProblem, 60, VarianceExplained(0.95), 0.1, options)
    run = search(_ridge(n=60), "nr", VarianceExplained(0.95), 0.1, None, options)
    assert before is not None and before == run.stopped
    assert refusal_before_reading(RidgeProblem, 100_000, VarianceExplained(0.5), 0.1, SearchOptions()) is None


@pytest.mark.parametrize(
    ("kind", "target"), [(RidgeProblem, VarianceExplained(0.9)), (LogisticProblem, Accuracy(0.95))]
)
def test_the_rows_a_refusal_asks_for_are_the_fewest_the_plan_accepts(kind, target):
    options = SearchOptions(ceiling=0.5)
    sentence = refusal_before_reading(kind, 50, target, 0.1, options)
    assert sentence is not None
    needed = int(sentence.split("needs at least ")[1].split(" rows")[0].replace(",", ""))
    assert refusal_before_reading(kind, needed, target, 0.1, options) is None
    assert refusal_before_reading(kind, needed - 1, target, 0.1, options) is not None
