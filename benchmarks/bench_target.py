"""Targets in the units people read: what a certified R² or accuracy costs, how good the model is held out, and how
far the search's ε is from an oracle's (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee, docs/benchmarks.md).

Three cases, each at the defaults (λ chosen privately from the default grid, γ = 0.1, ceiling 5):

- synthetic-buzz, R² ≥ 0.85 (ridge, covariance perturbation, one chain shared by the grid);
- synthetic-intrusion, accuracy ≥ 0.9 (logistic, output perturbation, one chain per λ);
- a 5,000-row customer table as analysts upload it (``tests.data.customer_upload``: an id column, text, gaps),
  prepared privately, R² ≥ half of least squares' held-out R² on the same columns.

For each: the median total ε (preparation included) over ``--runs`` runs, the share of runs that released a model,
the held-out quality's median and 10% quantile and the share of runs whose model meets the target held out
(evaluation only: the test rows are read exactly). The oracle's ε (``--oracle``, buzz and intrusion) is the smallest
fixed ε at which 90% of releases of the same mechanism meet the same in-sample target at the best λ of the grid, found
by peeking at the data: a lower bound on what a private search can pay. Usage::

    python benchmarks/bench_target.py --runs 20 --oracle
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from accfirst.datasets import load_builtin
from accfirst.datasets.prepared import PreparedData
from accfirst.datasets.preprocess import from_frame
from accfirst.erm.generators import make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.problems import prepared_problem
from accfirst.erm.quality import Accuracy, QualityQuery, QualityTarget, VarianceExplained
from accfirst.methods.certified import plan_search
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import search
from tests.data import customer_upload

GAMMA = 0.1
#: The oracle's share of releases that must meet the target, and its draws per ε.
ORACLE_SHARE, ORACLE_DRAWS = 0.9, 40


@dataclass(frozen=True)
class Case:
    name: str
    data: PreparedData
    target: QualityTarget


def heldout(data: PreparedData, theta: np.ndarray) -> float:
    """The held-out R² of the clipped predictor, or the accuracy, as every page shows it (evaluation only)."""
    return data.test_quality(theta)["r2" if data.task == "ridge" else "accuracy"]


def least_squares_r2(data: PreparedData) -> float:
    """Held-out R² of least squares on the prepared columns (evaluation only)."""
    theta, *_ = np.linalg.lstsq(data.X_train, data.y_train, rcond=None)
    residuals = data.y_test - data.X_test @ theta
    return float(1 - residuals @ residuals / ((data.y_test - data.y_test.mean()) ** 2).sum())


def cases() -> list[Case]:
    customers = from_frame(customer_upload(), target="annual_spend", task="ridge")
    half = round(0.5 * least_squares_r2(customers), 3)
    return [
        Case("synthetic-buzz", load_builtin("synthetic-buzz"), VarianceExplained(0.85)),
        Case("synthetic-intrusion", load_builtin("synthetic-intrusion"), Accuracy(0.9)),
        Case("customer upload", customers, VarianceExplained(half)),
    ]


def oracle_epsilon(problems: list[Problem], query: QualityQuery, rng: np.random.Generator) -> float:
    """The smallest fixed ε (bisection in log ε) at which ``ORACLE_SHARE`` of releases meet the target, over λ."""

    def share(generator: object, epsilon: float) -> float:
        thetas = np.array([generator.sample(epsilon, rng).theta for _ in range(ORACLE_DRAWS)])  # type: ignore[attr-defined]
        return float(np.mean(query.shortfall(thetas) <= 0))

    best = np.inf
    for problem in problems:
        generator = make_generator(problem, None)
        high = min(50.0, best)
        if share(generator, high) < ORACLE_SHARE:
            continue
        low = 1e-3
        for _ in range(12):
            middle = float(np.sqrt(low * high))
            low, high = (low, middle) if share(generator, middle) >= ORACLE_SHARE else (middle, high)
        best = high
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--oracle", action="store_true", help="also find the oracle's fixed ε (buzz and intrusion)")
    args = parser.parse_args()
    options = SearchOptions()
    print(f"γ = {GAMMA}, defaults (λ chosen privately, ceiling {options.ceiling:g}), {args.runs} runs per case\n")
    header = "case | target | ε_prep | median total ε | released | held-out median | held-out q10 | meets held out"
    print(header + (" | oracle ε | ratio" if args.oracle else ""))
    for case in cases():
        problem = prepared_problem(case.data, 0.005)
        totals, qualities = [], []
        for seed in range(args.runs):
            result = search(problem, "nr", case.target, GAMMA, np.random.default_rng(seed), options)
            totals.append(result.eps_total)
            if result.theta is not None:
                qualities.append(heldout(case.data, result.theta))
        held = np.array(qualities) if qualities else np.array([np.nan])
        median = float(np.median(totals))
        row = (
            f"{case.name} | {case.target.unit} ≥ {case.target.goal:g} | {problem.prep_epsilon:.3f} | {median:.3f} | "
            f"{len(qualities)}/{args.runs} | {np.median(held):.3f} | {np.quantile(held, 0.1):.3f} | "
            f"{np.mean(held >= case.target.goal):.0%}"
        )
        if args.oracle and case.data.info is not None:
            plan = plan_search(problem.shape, case.target, GAMMA, options, problem.row_bound, problem.target_range)
            query = case.target.query(problem)
            oracle = oracle_epsilon([problem.at_lambda(lam) for lam in plan.lambdas], query, np.random.default_rng(99))
            row += f" | {oracle:.3f} | {(median - problem.prep_epsilon) / oracle:.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
