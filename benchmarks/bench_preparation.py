"""Benchmark of the private preparation. Prints tables; asserts nothing.

``--shape``: what the preparation leaves a certificate, on three tables — the customer
upload (``tests.data.customer_upload``, 5,000 rows), the mixed table (5,000 rows) and the real
diabetes table — prepared for ridge regression with no table budget stated (what the statistics need),
at the default table budget (the preparation takes at most a quarter of it), and, for the customer
table, with ranges a data owner could declare without looking (free), over ``--preparations`` noise
seeds (median [smallest, largest]): ε_prep; ρ, the public bound on a prepared row's Euclidean norm
(``PreparedData.row_bound``, docs/mathematics.md#preparing-the-data-privately); the held-out R² of the exact model θ* at
λ = 0.002 and 0.0005 (evaluation only); the prepared target's variance on [−1, 1]; and the share of
each numeric column's training values clipped to its range (evaluation only: it reads the values).

``--runs``: a realistic mixed table generated from public parameters (``tests.data.mixed_table``: six numeric
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

Usage: python benchmarks/bench_preparation.py [--shape] [--runs] [--rows 62500] [--trials 20] [--preparations 5]
[--seed 2026] (neither section named: both)
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
from accfirst.datasets.builtin import _RECIPES
from accfirst.datasets.columns import read_table
from accfirst.datasets.prepare.private import build, plan_private, release
from accfirst.datasets.preprocess import preparation_options
from accfirst.datasets.upload import UploadLimits
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import search, trial_rng
from tests.data import PLAN_EFFECT, REGION_EFFECT, customer_upload, mixed_table

LAM = 0.005
SHAPE_LAMS = (0.002, 0.0005)
SHAPE_ROWS = 5_000
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


# Ranges the owner of the customer table could state from what the columns mean, without reading them.
CUSTOMER_RANGES = {
    "age": (18, 100),
    "tenure_months": (0, 240),
    "income": (0, 300_000),
    "visits": (0, 40),
    "satisfaction": (1, 10),
}
# The ``--shape`` settings: ``from_frame`` options besides the task and the noise seed.
SHAPE_SETTINGS = {"no table budget": {"budget": None}, "default budget": {}}


def shape_tables(seed: int) -> dict[str, tuple[object, str, dict[str, dict]]]:
    """The ``--shape`` tables (a frame, its ridge target, the settings to prepare it with)."""
    diabetes = _RECIPES["diabetes"]
    declared = {"default budget, declared ranges": {"ranges": CUSTOMER_RANGES}}
    return {
        "customer": (customer_upload(), "annual_spend", SHAPE_SETTINGS | declared),
        "mixed": (mixed_table(SHAPE_ROWS, seed).drop(columns="churn"), "spend", SHAPE_SETTINGS),
        "diabetes": (diabetes.table(), diabetes.options["target"], SHAPE_SETTINGS),
    }


def shape_one(frame, target: str, noise_seed: int, setting: dict) -> dict[str, object]:
    """One private preparation's figures (see the module docstring)."""
    options = preparation_options(task="ridge", noise_seed=noise_seed, **setting)
    plan = plan_private(read_table(frame, target, UploadLimits()), None, options)
    preparation = release(plan)
    columns, train_rows = plan.context.columns, plan.context.train
    train, test = build(plan, columns, train_rows), build(plan, columns, plan.test)
    X_test, y_test = test.X[test.present], test.y[test.present]
    figures: dict[str, object] = {"ε_prep": preparation.epsilon, "ρ": plan.scaling.row_bound()}
    for lam in SHAPE_LAMS:
        residual = y_test - X_test @ RidgeProblem(train.X, train.y, lam).theta_star
        figures[f"R² λ={lam:g}"] = 1 - residual @ residual / np.sum((y_test - y_test.mean()) ** 2)
    figures["var y"] = float(train.y[train.present].var())
    clipped = {}
    for column in (*plan.kept, plan.target):
        if column.kind == "numeric" and column.has_range:
            values = columns[column.name][train_rows]
            values = values[np.isfinite(values)]
            clipped[column.name] = float(np.mean((values < column.low) | (values > column.high)))
    figures["clipped"] = clipped
    return figures


def spread(values: list[float]) -> str:
    return f"{np.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def shape(args: argparse.Namespace) -> None:
    print(
        f"\nshape: ridge, {args.preparations} noise seeds: median [smallest, largest]; "
        "R² = held-out R² of θ* (evaluation only); clipped = share of training values outside the range"
    )
    for name, (frame, target, settings) in shape_tables(args.seed).items():
        for setting, options in settings.items():
            seeds = range(args.seed, args.seed + args.preparations)
            runs = [shape_one(frame, target, seed, options) for seed in seeds]
            keys = [key for key in runs[0] if key != "clipped"]
            figures = "; ".join(f"{key} {spread([run[key] for run in runs])}" for key in keys)
            print(f"{name} ({len(frame):,} rows), {setting}: {figures}")
            # A column a preparation left out (its released numbers made it useless) is missing from its run.
            names = list(dict.fromkeys(column for run in runs for column in run["clipped"]))
            shares = {column: [run["clipped"][column] for run in runs if column in run["clipped"]] for column in names}
            print("  clipped: " + "; ".join(f"{column} {spread(values)}" for column, values in shares.items()))


def runs(args: argparse.Namespace) -> None:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="store_true", help="what the preparation leaves a certificate")
    parser.add_argument("--runs", action="store_true", help="noise reduction on the prepared mixed table")
    parser.add_argument("--rows", type=int, default=62_500)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--preparations", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    both = not (args.shape or args.runs)
    if args.shape or both:
        shape(args)
    if args.runs or both:
        runs(args)


if __name__ == "__main__":
    main()
