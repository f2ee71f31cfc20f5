"""Benchmark of the core engine at the paper's settings. Prints figures; asserts nothing.

Synthetic ridge (synthetic-buzz, n = 100,000, p = 77) and logistic
(synthetic-intrusion, n = 100,000, p = 38), λ = 0.005, γ = 0.1, α = 0.05, T = 1000,
the docs/mathematics.md#the-epsilon-grid grid. Reports: problem build time (the data is read once), median and
90th-percentile seconds per trial for CovNR, OutputNR, doubling and theory, the peak
memory of one trial (tracemalloc), and the median ex-post ε table at α ∈ {0.05, 0.1}.

Usage: python benchmarks/bench_core.py [--trials 30]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from accfirst import LogisticProblem, RidgeProblem, epsilon_grid, run_one, run_trials, trial_rng
from accfirst.datasets import load_builtin
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import paper_methods
from accfirst.methods.theory import Theory

LAM, GAMMA, ALPHA, T = 0.005, 0.1, 0.05, 1000


def build(name: str, cls):
    """The problem on all 100,000 rows (training and test parts together), as in the paper."""
    data = load_builtin(name)
    X, y = np.vstack([data.X_train, data.X_test]), np.concatenate([data.y_train, data.y_test])
    cls(X[:100], y[:100], LAM)  # warm up BLAS so the build time measures the work
    started = time.perf_counter()
    problem = cls(X, y, LAM)
    return problem, time.perf_counter() - started


def trial_seconds(problem, method: str, trials: int, exact: bool = False) -> np.ndarray:
    seconds = []
    for trial in range(trials):
        started = time.perf_counter()
        run_one(problem, method, ALPHA, GAMMA, trial_rng(0, method, ALPHA, trial), T=T, exact=exact)
        seconds.append(time.perf_counter() - started)
    return np.array(seconds)


def peak_megabytes(problem, method: str) -> float:
    run_one(problem, method, ALPHA, GAMMA, trial_rng(1, method, ALPHA, 0), T=T)
    tracemalloc.start()
    run_one(problem, method, ALPHA, GAMMA, trial_rng(1, method, ALPHA, 1), T=T)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()

    ridge, ridge_build = build("synthetic-buzz", RidgeProblem)
    logistic, logistic_build = build("synthetic-intrusion", LogisticProblem)
    print(
        f"problem build (data read once): ridge {ridge_build:.3f} s (n={ridge.n}, p={ridge.p}), "
        f"logistic {logistic_build:.3f} s (n={logistic.n}, p={logistic.p})"
    )
    print(
        f"grid: ridge ε ∈ [{epsilon_grid(ridge, ALPHA)[0]:.2e}, {epsilon_grid(ridge, ALPHA)[-1]:.3g}], "
        f"logistic ε ∈ [{epsilon_grid(logistic, ALPHA)[0]:.2e}, {epsilon_grid(logistic, ALPHA)[-1]:.3g}], T={T}"
    )

    print(f"\nseconds per trial over {args.trials} trials (α={ALPHA}, γ={GAMMA}, λ={LAM})")
    print(f"{'task':10} {'method':22} {'median':>9} {'p90':>9} {'peak MB':>9}")
    cases = [
        ("ridge", ridge, NoiseReduction.key, "CovNR"),
        ("ridge", ridge, Doubling.key, "doubling (covariance)"),
        ("ridge", ridge, Theory.key, "theory (covariance)"),
        ("logistic", logistic, NoiseReduction.key, "OutputNR"),
        ("logistic", logistic, Doubling.key, "doubling (output)"),
        ("logistic", logistic, Theory.key, "theory (output)"),
    ]
    for task, problem, method, label in cases:
        seconds = trial_seconds(problem, method, args.trials)
        print(
            f"{task:10} {label:22} {np.median(seconds):9.4f} {np.quantile(seconds, 0.9):9.4f} "
            f"{peak_megabytes(problem, method):9.1f}"
        )
    for task, problem in (("ridge", ridge), ("logistic", logistic)):
        seconds = trial_seconds(problem, NoiseReduction.key, max(3, args.trials // 10), exact=True)
        print(f"{task:10} {'NR, every level solved':22} {np.median(seconds):9.4f}   (reference without the shortcut)")

    print("\nmedian ex-post ε (e^ε) on synthetic-buzz (ridge), 20 trials, theorem calibration")
    methods = list(paper_methods())
    df = run_trials(ridge, [0.05, 0.1], GAMMA, methods, 20, seed=0, T=T)
    table = df.groupby(["alpha", "method"]).eps_total.median().unstack("method")[methods]
    for alpha, row in table.iterrows():
        cells = "  ".join(f"{m}: ε={row[m]:.3f} (e^ε={np.exp(row[m]):.3g})" for m in table.columns)
        print(f"α={alpha:<5} {cells}")
    stops = df[df.method == NoiseReduction.key].groupby("alpha").stop_index.median()
    print("median NR stop level:", ", ".join(f"α={a}: {s:.0f}/{T}" for a, s in stops.items()))


if __name__ == "__main__":
    main()
