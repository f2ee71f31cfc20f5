"""Benchmark of the private preparation (issue 19). Prints a table; asserts nothing.

A realistic mixed table generated from public parameters (``tests.data.mixed_table``: six numeric
columns, one heavy-tailed, a 0/1 flag, three text columns, 5% gaps; 62,500 rows, so 50,000
train the model), prepared for ridge regression (``spend``) and logistic regression (``churn``):

- evaluation only: the preparation that reads the data exactly (reads the data; every ε excludes it);
- declared: the ranges and levels stated in a schema (public), the centres private;
- private at ε_prep ∈ {0.05, 0.1, 0.2, 0.5}, and at the default (150 × total weight / n).

For each: ε_prep; the held-out quality of the exact model θ* (R² or accuracy, evaluation only),
median and smallest over ``--preparations`` noise seeds (one private preparation is one draw);
and noise reduction (the package's defaults, ``--trials`` runs on the first preparation) at
α ∈ {0.05, 0.1}: the median ε of the run, the median total ε_prep + ε_run, and the median
held-out quality of the model it releases.

Usage: python benchmarks/bench_preparation.py [--rows 62500] [--trials 20] [--preparations 5] [--seed 2026]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: its tests.data generates the table

from accfirst import LogisticProblem, RidgeProblem
from accfirst.datasets import ColumnSpec, PreparedData, Schema, from_frame
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import search, trial_rng
from tests.data import PLAN_EFFECT, REGION_EFFECT, mixed_table

LAM = 0.005
ALPHAS = (0.05, 0.1)
BUDGETS = (0.05, 0.1, 0.2, 0.5)
# Public knowledge a data owner could state without looking: plausible bounds and the level lists.
DECLARED = {
    "age": ColumnSpec(range=(18, 100)),
    "income": ColumnSpec(range=(0, 200_000)),
    "visits": ColumnSpec(range=(0, 12)),
    "score": ColumnSpec(range=(0, 100)),
    "tenure": ColumnSpec(range=(0, 25)),
    "member": ColumnSpec(range=(0, 1)),
    "region": ColumnSpec(levels=tuple(REGION_EFFECT)),
    "plan": ColumnSpec(levels=tuple(PLAN_EFFECT)),
    "colour": ColumnSpec(levels=tuple(f"c{i}" for i in range(30))),
    "spend": ColumnSpec(range=(0, 1_500)),
}
TASKS = {
    "ridge": ({"target": "spend", "task": "ridge"}, "churn", "r2"),
    "logistic": ({"target": "churn", "task": "logistic", "positive_class": "yes"}, "spend", "accuracy"),
}


def preparations(other: str) -> dict[str, dict]:
    """The from_frame options of each row of the table (``other``: the target left out)."""
    schema = Schema({name: spec for name, spec in DECLARED.items() if name != other}, positive_class="yes")
    rows = {"evaluation only": {"preparation": "evaluation"}, "declared": {"schema": schema}}
    rows |= {f"private ε_prep = {budget:g}": {"prep_epsilon": budget} for budget in BUDGETS}
    return rows | {"private, default budget": {}}


def quality(data: PreparedData, theta: np.ndarray, metric: str) -> float:
    return data.test_quality(theta)[metric]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=62_500)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--preparations", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    table = mixed_table(args.rows, args.seed)
    options = SearchOptions()
    for task, (target, other, metric) in TASKS.items():
        frame = table.drop(columns=other)
        print(f"\n{task}: {len(frame):,} rows; quality = held-out {metric} (evaluation only); NR = noise reduction")
        header = f"{'preparation':28} {'ε_prep':>7} {'p':>3} {'θ* ' + metric + ' (min)':>17} {'prep s':>6}"
        for alpha in ALPHAS:
            header += f" | α={alpha:g}: {'ε_run':>6} {'total':>6} {metric:>8}"
        print(header)
        for name, extra in preparations(other).items():
            problem_class = RidgeProblem if task == "ridge" else LogisticProblem
            seeds = range(args.seed, args.seed + args.preparations)
            started = time.perf_counter()
            prepared = [from_frame(frame, **target, noise_seed=seed, **extra) for seed in seeds]
            seconds = (time.perf_counter() - started) / len(prepared)
            problems = [problem_class(data.X_train, data.y_train, LAM) for data in prepared]
            exact = [quality(data, problem.theta_star, metric) for data, problem in zip(prepared, problems)]
            data, problem = prepared[0], problems[0]
            prep = 0.0 if data.preparation.mode == "evaluation" else data.prep_epsilon
            line = f"{name:28} {prep:7.3f} {data.p:3} {np.median(exact):9.3f} ({min(exact):.3f}) {seconds:6.2f}"
            for alpha in ALPHAS:
                runs = [
                    search(
                        problem,
                        NoiseReduction.key,
                        alpha,
                        0.1,
                        trial_rng(args.seed, NoiseReduction.key, alpha, trial),
                        options,
                    )
                    for trial in range(args.trials)
                ]
                eps = np.median([run.eps_total for run in runs])
                released = np.median([quality(data, run.theta, metric) for run in runs])
                line += f" | {'':7}{eps:6.3f} {eps + prep:6.3f} {released:8.3f}"
            print(line)
    print(
        "\nε_prep of 'evaluation only' is shown as 0: it is not 0, it is unbounded (the preparation reads the data "
        "without noise), and its totals exclude it."
    )


if __name__ == "__main__":
    main()
