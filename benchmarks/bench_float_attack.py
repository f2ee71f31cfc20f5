"""The float support attack at scale, before (numpy's float64 noise) and after (releases on a lattice). Prints figures.

An attacker who has read the code checks, for each released float64, whether the neighbouring
dataset could have produced it (tests/attacks.py). Pure ε-DP allows the neighbour to be ruled out
no more often than the true dataset: never. For each released-value path this prints how often
each dataset is ruled out, over many releases, for numpy's sampler (replayed bit for bit; only
its Laplace sampler, whose uniforms can be inverted) and for the lattice. Then how often a
release needed the exact (decimal) path, what that costs, and empirical privacy-loss lower
bounds at a million releases.

Usage: python benchmarks/bench_float_attack.py [--releases 10000]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accfirst import LogisticProblem, RidgeProblem
from accfirst.accounting.counts import release_counts
from accfirst.datasets import load_builtin
from accfirst.erm.generators import CovariancePerturbation, OutputPerturbation
from accfirst.erm.theory import theory_epsilon
from accfirst.mechanisms import lattice
from accfirst.mechanisms import noise_reduction as noise_reduction_module
from accfirst.mechanisms.brownian import GAUSSIAN
from accfirst.mechanisms.lattice import lattice_spacing
from accfirst.mechanisms.noise_reduction import LAPLACE
from accfirst.methods.nr import NoiseReduction
from accfirst.search.experiments import run_one, trial_rng
from tests.attacks import epsilon_lower_bound, neighbour, numpy_laplace_can_produce, on_lattice
from tests.data import make_logistic_data, make_ridge_data


def numpy_rates(truth: np.ndarray, other: np.ndarray, scale: float, releases: int, seed: int) -> tuple[float, float]:
    """Share of numpy-noised releases of ``truth`` that rule out (truth, other): one impossible coordinate suffices."""
    rng = np.random.default_rng(seed)
    out = np.zeros(2)
    for _ in range(releases):
        row = truth + rng.laplace(0.0, scale, truth.size)
        for i, centre in enumerate((truth, other)):
            out[i] += any(not numpy_laplace_can_produce(v, c, scale) for v, c in zip(row, centre))
    return out[0] / releases, out[1] / releases


def lattice_rate(rows: list[np.ndarray], spacing: float) -> float:
    """Share of releases with a coordinate off the lattice: a release either dataset cannot produce."""
    return float(np.mean([not np.all(on_lattice(row, spacing)) for row in rows]))


def report(path: str, before: tuple[float, float] | None, after: float, releases: int) -> None:
    old = "not checked" if before is None else f"truth {before[0]:6.1%}  neighbour {before[1]:6.1%}"
    print(f"{path:44} {releases:>8}   numpy: {old:32}   lattice: truth {after:.1%}  neighbour {after:.1%}")


@contextlib.contextmanager
def counting_decisions():
    """Counts the lattice cells decided (every coordinate of every release) and those that needed the exact path."""
    counts = {"cells": 0, "exact": 0}
    fast, exact = lattice.nearest_fast, lattice.nearest_exact

    def counted_fast(centre, *arguments):
        counts["cells"] += np.size(centre)
        return fast(centre, *arguments)

    def counted_exact(*arguments):
        counts["exact"] += 1
        return exact(*arguments)

    modules = (lattice, noise_reduction_module)
    for module in modules:
        module.nearest_fast, module.nearest_exact = counted_fast, counted_exact
    try:
        yield counts
    finally:
        for module in modules:
            module.nearest_fast, module.nearest_exact = fast, exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=10_000)
    args = parser.parse_args()
    n = args.releases

    print("share of releases in which each dataset is ruled out (pure ε-DP: the neighbour never)")
    print(f"{'path':44} {'releases':>8}")
    released = [LAPLACE.perturb(np.zeros(1), 1.0, 1.0, np.random.default_rng(s)) for s in range(n)]
    report(
        "x + Lap(1) vs x + 1",
        numpy_rates(np.zeros(1), np.ones(1), 1.0, n, 0),
        lattice_rate(released, lattice_spacing(1.0)),
        n,
    )

    X, y = make_logistic_data(3, 5000, 10)
    problem, other = LogisticProblem(X, y, 0.005), LogisticProblem(*neighbour(X, y), 0.005)
    gen = OutputPerturbation(problem)
    epsilon = theory_epsilon(problem, 0.05, gen)
    scale = gen.sensitivity / epsilon
    m = min(n, 2000)
    released = [
        gen.noise.perturb(problem.theta_star, gen.sensitivity, epsilon, np.random.default_rng(s)) for s in range(m)
    ]
    before = numpy_rates(problem.theta_star, other.theta_star, scale, m, 1)
    report("output perturbation (theory, logistic n=5000)", before, lattice_rate(released, lattice_spacing(scale)), m)

    grid = np.geomspace(1 / problem.n, 4 * epsilon, 100)
    chains = [
        gen.noise.chain(problem.theta_star, gen.sensitivity, grid, np.random.default_rng(s)) for s in range(m // 10)
    ]
    off = [
        not np.all(on_lattice(chain.release(t), lattice_spacing(gen.sensitivity / grid[t])))
        for chain in chains
        for t in range(grid.size)
    ]
    before = numpy_rates(problem.theta_star, other.theta_star, gen.sensitivity / grid[-1], m, 2)
    print(f"(OutputNR: numpy checked on {m} top-level releases, the lattice on every level of {len(chains)} chains)")
    report("OutputNR, T=100, every level", before, float(np.mean(off)), len(off))

    Xr, yr = make_ridge_data(4, 2000, 6)
    cov = CovariancePerturbation(RidgeProblem(Xr, yr, 0.005))
    cov_other = CovariancePerturbation(RidgeProblem(*neighbour(Xr, yr), 0.005))
    k = min(n, 500)
    released = [cov.noise.perturb(cov.private_vector(), 4.0, 0.5, np.random.default_rng(s)) for s in range(k)]
    before = numpy_rates(cov.private_vector(), cov_other.private_vector(), 8.0, k, 3)
    report("covariance perturbation (p=6, ε=0.5)", before, lattice_rate(released, lattice_spacing(8.0)), k)

    released = [GAUSSIAN.perturb(np.zeros(1), 1.0, 0.5, np.random.default_rng(s)) for s in range(n)]
    report("Gaussian release (σ = 1)", None, lattice_rate(released, lattice_spacing(1.0)), n)
    frame = release_counts(np.random.default_rng(5).integers(50, 5000, 200), 0.1, 1.0, 1e-6, rng=6)
    frame = frame.dropna(subset=["released"])
    off = [not on_lattice(np.array([v]), lattice_spacing(s))[0] for v, s in zip(frame["released"], frame["sigma"])]
    report("counts (Brownian NR, certified stop)", None, float(np.mean(off)), len(frame))

    print("\nthe exact (decimal) path: lattice cells the float64 enclosure could not settle")
    buzz = load_builtin("synthetic-buzz")
    buzz_problem = RidgeProblem(
        np.vstack([buzz.X_train, buzz.X_test]), np.concatenate([buzz.y_train, buzz.y_test]), 0.005
    )
    for noise in ("laplace", "gaussian"):
        runs = 20
        with counting_decisions() as counts:
            started = time.perf_counter()
            for trial in range(runs):
                run_one(
                    buzz_problem,
                    NoiseReduction.key,
                    0.05,
                    0.1,
                    trial_rng(0, NoiseReduction.key, 0.05, trial),
                    T=1000,
                    noise=noise,
                )
            seconds = (time.perf_counter() - started) / runs
        print(
            f"CovNR ({noise}) on synthetic-buzz, T=1000, {runs} runs: {counts['exact']} of {counts['cells']:,} cells "
            f"decided exactly; {seconds:.3f} s per run"
        )

    print("\nempirical privacy-loss lower bound (Clopper–Pearson, 99.9%), 10⁶ releases per dataset, 70 cells")
    edges = np.linspace(-8.0, 9.0, 69)
    for epsilon in (0.5, 1.0, 2.0):
        here = LAPLACE.perturb(np.zeros(10**6), 1.0, epsilon, np.random.default_rng(7))
        there = LAPLACE.perturb(np.ones(10**6), 1.0, epsilon, np.random.default_rng(8))
        bound = epsilon_lower_bound(histogram(here, edges / epsilon), histogram(there, edges / epsilon))
        print(f"Laplace mechanism, claimed ε = {epsilon}: lower bound {bound:.3f}")
    eps = np.array([0.25, 0.5, 1.0, 2.0])
    here = LAPLACE.chain(np.zeros(10**6), 1.0, eps, np.random.default_rng(9))
    there = LAPLACE.chain(np.ones(10**6), 1.0, eps, np.random.default_rng(10))
    for t, level in enumerate(eps):
        bound = epsilon_lower_bound(
            histogram(here.release(t), edges / level), histogram(there.release(t), edges / level)
        )
        print(f"noise reduction, level {t + 1} (ε_t = {level}): lower bound {bound:.3f}")


def histogram(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.histogram(values, bins=np.concatenate([[-np.inf], edges, [np.inf]]))[0]


if __name__ == "__main__":
    main()
