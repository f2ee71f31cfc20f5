"""Targets in the units people read: what a certified R² or accuracy costs, how good the model is held out, and how
far the search's ε is from an oracle's (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee, docs/benchmarks.md).

Three cases, each at the defaults (λ chosen privately, γ = 0.1, ceiling 4):

- synthetic-buzz, R² ≥ 0.85 (ridge, covariance perturbation, one chain shared by the grid);
- synthetic-intrusion, accuracy ≥ 0.9 (logistic, output perturbation, one chain per λ);
- a 5,000-row customer table as analysts upload it (``tests.data.customer_upload``: an id column, text, gaps),
  R² ≥ half of least squares' held-out R² on the same columns (least squares on the evaluation-only preparation, in
  the target's own units: a bar that does not move with how the private preparation clips the target). Every run
  prepares the table privately afresh (a repeatable noise seed per run, so not a private release) and pays for it:
  a table's budget of 2, the preparation at most a quarter of it.

For each: the medians of the total ε (preparation included) and of its parts (preparation, the targets' variance
ε_v, the test ε_A, the generation), the share of runs that released a model, the held-out quality's median and 10%
quantile (R² on the prepared scale, of the clipped targets the certificate is about, and in the target's own units),
and the share of runs whose model meets the target held out on the prepared scale (evaluation only: the test rows
are read exactly). Own units undo every transform of the preparation (a log(1 + y) included, as on synthetic-buzz).
The oracle's ε (``--oracle``, buzz and intrusion) is the smallest fixed ε at which 90% of releases of
the same mechanism meet the same in-sample target at the best λ of the grid, found by peeking at the data: a lower
bound on what a private search can pay. Usage::

    python benchmarks/bench_target.py --runs 20 --oracle
    python benchmarks/bench_target.py --runs 20 --cases customer
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
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
    key: str
    target: QualityTarget
    #: The prepared table of run ``seed`` (a built-in set is the same table for every run).
    prepare: Callable[[int], PreparedData]


def heldout(data: PreparedData, theta: np.ndarray) -> float:
    """The held-out R² of the clipped predictor, or the accuracy, as every page shows it (evaluation only)."""
    return data.test_quality(theta)["r2" if data.task == "ridge" else "accuracy"]


def heldout_in_units(data: PreparedData, theta: np.ndarray) -> float:
    """The held-out R² in the target's own units, against the test targets as they were before any clipping, of the
    clipped predictor mapped back (evaluation only); the accuracy for a logistic model."""
    if data.task != "ridge":
        return heldout(data, theta)
    original = data.y_test_original if data.y_test_original is not None else data.report.to_target_units(data.y_test)
    rmse = data.test_quality(theta)["rmse"]
    return float(1 - rmse**2 / original.var())


def least_squares_r2(data: PreparedData) -> float:
    """Held-out R² of least squares on the prepared columns, in the target's own units (evaluation only)."""
    theta, *_ = np.linalg.lstsq(data.X_train, data.y_train, rcond=None)
    return heldout_in_units(data, theta)


def customer_target() -> VarianceExplained:
    """R² ≥ half of what least squares reaches held out on the customer table's columns (evaluation-only preparation:
    the data read without noise, the target unclipped)."""
    reference = from_frame(customer_upload(), target="annual_spend", task="ridge", preparation="evaluation")
    return VarianceExplained(round(0.5 * least_squares_r2(reference), 3))


def cases(keys: Sequence[str]) -> list[Case]:
    chosen: list[Case] = []
    if "buzz" in keys:
        buzz = load_builtin("synthetic-buzz")
        chosen.append(Case("synthetic-buzz", "buzz", VarianceExplained(0.85), lambda seed: buzz))
    if "intrusion" in keys:
        intrusion = load_builtin("synthetic-intrusion")
        chosen.append(Case("synthetic-intrusion", "intrusion", Accuracy(0.9), lambda seed: intrusion))
    if "customer" in keys:
        frame = customer_upload()
        chosen.append(
            Case(
                "customer upload",
                "customer",
                customer_target(),
                lambda seed: from_frame(frame, target="annual_spend", task="ridge", noise_seed=1000 + seed),
            )
        )
    return chosen


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
    parser.add_argument("--cases", default="buzz,intrusion,customer", help="which cases, comma-separated")
    args = parser.parse_args()
    options = SearchOptions()
    print(f"γ = {GAMMA}, defaults (λ chosen privately, ceiling {options.ceiling:g}), {args.runs} runs per case\n")
    header = (
        "case | target | median total ε | ε_prep | ε_v | ε_A | generation | released | held-out median | "
        "held-out q10 | held-out in own units, median | meets it held out"
    )
    print(header + (" | oracle ε | ratio" if args.oracle else ""))
    for case in cases(args.cases.split(",")):
        results, held, units = [], [], []
        for seed in range(args.runs):
            data = case.prepare(seed)
            problem = prepared_problem(data, 0.005)
            result = search(problem, "nr", case.target, GAMMA, np.random.default_rng(seed), options)
            results.append(result)
            if result.theta is not None:
                held.append(heldout(data, result.theta))
                units.append(heldout_in_units(data, result.theta))
        quality = np.array(held) if held else np.array([np.nan])
        own = np.array(units) if units else np.array([np.nan])

        median = {
            field: float(np.median([getattr(result, field) for result in results]))
            for field in ("eps_total", "eps_prep", "eps_scale", "eps_test", "eps_hypothesis")
        }
        row = (
            f"{case.name} | {case.target.unit} ≥ {case.target.goal:g} | {median['eps_total']:.3f} | "
            f"{median['eps_prep']:.3f} | {median['eps_scale']:.3f} | {median['eps_test']:.3f} | "
            f"{median['eps_hypothesis']:.3f} | {len(held)}/{args.runs} | {np.median(quality):.3f} | "
            f"{np.quantile(quality, 0.1):.3f} | {np.median(own):.3f} | {np.mean(quality >= case.target.goal):.0%}"
        )
        if args.oracle and case.key != "customer":
            data = case.prepare(0)
            problem = prepared_problem(data, 0.005)
            plan = plan_search(problem.shape, case.target, GAMMA, options, problem.row_bound, problem.target_range)
            query = case.target.query(problem)
            oracle = oracle_epsilon([problem.at_lambda(lam) for lam in plan.lambdas], query, np.random.default_rng(99))
            row += f" | {oracle:.3f} | {(median['eps_total'] - median['eps_prep']) / oracle:.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
