"""Noise reduction against the Gibbs posterior, how often a logistic Gibbs run releases,
and the reported ε against the exact privacy loss in one dimension. Prints
figures; asserts nothing.

Ridge part: ridge on the training part of synthetic-buzz (n = 80,000, p = 77) and of diabetes
(n = 354, p = 10), λ = 0.005, γ = 0.1, the docs/mathematics.md#the-epsilon-grid grid, α ∈ {0.01, 0.05, 0.1}.
Median ε over the trials (∞ on fallback; docs/mathematics.md#what-a-run-reports) and the share of runs that met α, for:
noise reduction (covariance perturbation) with the theorem's and the paper code's test
calibration at the paper's T = 1000 and with the package's default (exact-paper-opt,
T = 100; pure ε, ex-post); the Gibbs posterior at δ = 10⁻⁶ (docs/mathematics.md#the-gibbs-posterior, the smaller of
the derived (ε, δ) and the exponential mechanism's pure ε) and at δ = 0 (pure ε only). The
Gibbs ε is fixed before the run, so its median is its value. Different guarantees: compare a
row at δ > 0 with the pure ones with care.

Logistic part: the share of ``gibbs_run`` calls that release (no error, the δ asked for), the
median seconds per run, and, from the same sampler's diagnostics (``run_chains``: read from the
data, never released), the share of proposals kept (pooled over the runs) and the proximal steps
(1: exact rejection), δ = 10⁻⁶, γ = 0.1, on: the skewed one-dimensional posterior (n = 20
rows x ~ U(−1, 1) with y = sign(x), a new dataset per run, λ = 0.002, α chosen so that βn = 13.5),
and synthetic-intrusion's training part (n = 80,000, p = 38, λ = 0.005) at α = 0.05 and 0.1.

Privacy part (docs/mathematics.md#the-gibbs-posteriors-privacy): one-feature checks (δ = 10⁻⁶, γ = 0.1, the
radius M): the ε a run reports against the largest exact privacy loss a search over neighbouring datasets finds
(tests/erm/gibbs_exact.py), at the δ the run reports, for the Gaussian profile this package uses and for
Herbst's bound with twice the Lipschitz constant, 2(M + 1), resp. 2, and the pure ε β(M + 1)², on the ball of
radius M, β without the lattice's allowance. A ratio is at least 1 for a valid bound.

Usage: python benchmarks/bench_gibbs.py [--trials 20] [--runs 100] [--part ridge|logistic|privacy|all]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from accfirst import AccFirstError, LogisticProblem, RidgeProblem, gibbs_run, run_trials
from accfirst.datasets import load_builtin
from accfirst.erm import gibbs
from accfirst.erm.proximal_sampler import run_chains
from accfirst.interpret import format_delta, median_with_inf
from accfirst.methods.gibbs import GibbsPosterior
from accfirst.methods.nr import NoiseReduction
from tests.erm.gibbs_exact import worst_logistic, worst_ridge

LAM, GAMMA, PAPER_T = 0.005, 0.1, 1000
ALPHAS = (0.01, 0.05, 0.1)
# (label, method, search options)
ARMS = (
    (
        "noise reduction, theorem calibration, T = 1000 (pure ε)",
        NoiseReduction.key,
        {"calibration": "theorem", "T": PAPER_T},
    ),
    (
        "noise reduction, paper-code calibration, T = 1000 (pure ε)",
        NoiseReduction.key,
        {"calibration": "paper-code", "T": PAPER_T},
    ),
    ("noise reduction, default calibration and T (pure ε)", NoiseReduction.key, {}),
    (f"Gibbs posterior, δ = {format_delta(1e-6)}", GibbsPosterior.key, {"delta": 1e-6}),
    ("Gibbs posterior, δ = 0 (exponential mechanism, pure ε)", GibbsPosterior.key, {"delta": 0.0}),
)


def ridge_part(trials: int) -> None:
    for name in ("synthetic-buzz", "diabetes"):
        data = load_builtin(name, noise_seed=0)  # a real table: repeatable, so the figures are comparable
        problem = RidgeProblem(data.X_train, data.y_train, LAM)
        print(f"\n{name}: ridge, n = {problem.n:,}, p = {problem.p}, λ = {LAM}, γ = {GAMMA}, {trials} trials")
        print(f"| method | {' | '.join(f'α = {a}' for a in ALPHAS)} |")
        print(f"| --- | {' | '.join('---' for _ in ALPHAS)} |")
        for label, method, options in ARMS:
            frame = run_trials(problem, ALPHAS, GAMMA, [method], trials, 0, **options)
            cells = []
            for alpha in ALPHAS:
                rows = frame[frame["alpha"] == alpha]
                cells.append(f"{median_with_inf(rows['eps_total']):.3g} ({rows['success'].mean():.0%} met α)")
            print(f"| {label} | {' | '.join(cells)} |")


def skewed_problem(seed: int) -> LogisticProblem:
    """The skewed case: 20 rows x ~ U(−1, 1), separable labels y = sign(x), λ = 0.002."""
    x = np.random.default_rng(seed).uniform(-1, 1, size=(20, 1))
    return LogisticProblem(x, np.where(x[:, 0] > 0, 1.0, -1.0), 0.002)


def release_row(label: str, problems: Callable[[int], LogisticProblem], alpha: float, runs: int) -> str:
    released, seconds, kept, looked, steps = 0, [], 0, 0, []
    for k in range(runs):
        problem = problems(k)
        started = time.perf_counter()
        try:
            run = gibbs_run(problem, alpha, GAMMA, 1e-6, np.random.default_rng(10_000 + k))
        except AccFirstError:
            run = None
        seconds.append(time.perf_counter() - started)
        if run is not None and run.delta < 1:
            released += 1
            plan = gibbs.logistic_plan(problem, alpha, GAMMA, 1e-6)
            chains = run_chains(problem, plan.beta, 1, np.random.default_rng(k), plan.tv_bound, plan.spacing)
            kept, looked = kept + chains.steps, looked + chains.proposals
            steps.append(chains.steps)
    cells = [f"{released / runs:.1%}", f"{np.median(seconds):.3f}"]
    cells += [f"{kept / looked:.2f}", f"{np.median(steps):g}"] if steps else ["–", "–"]
    return f"| {label} | {runs} | {' | '.join(cells)} |"


def logistic_part(runs: int) -> None:
    print(f"\nLogistic Gibbs runs that release (δ = 10⁻⁶, γ = {GAMMA})")
    print("| case | runs | released | median s | proposals kept | proximal steps |")
    print("| --- | --- | --- | --- | --- | --- |")
    skewed_alpha = float(stats.chi2.isf(GAMMA, 1)) / (2 * 13.5)  # βn = 13.5 at n = 20, p = 1
    print(release_row("skewed 1-D, n = 20, βn = 13.5, λ = 0.002", skewed_problem, skewed_alpha, runs))
    data = load_builtin("synthetic-intrusion")
    intrusion = LogisticProblem(data.X_train, data.y_train, LAM)
    for alpha in (0.05, 0.1):
        label = f"synthetic-intrusion, n = {intrusion.n:,}, p = {intrusion.p}, α = {alpha}"
        print(release_row(label, lambda _: intrusion, alpha, max(runs // 5, 10)))


def herbst(rho: float, delta: float) -> float:
    """Herbst's conversion of ρ-zCDP: ρ + 2√(ρ ln(1/δ))."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


RIDGE_CHECKS = ((100, 0.1, 0.1), (1000, 0.01, 0.05), (1000, 0.01, 0.01), (10_000, 0.01, 0.2), (10_000, 0.001, 0.005))
LOGISTIC_CHECKS = ((100, 0.01, 0.2), (1000, 0.01, 0.05), (1000, 0.001, 0.05), (1000, 0.01, 0.01), (10_000, 0.001, 0.01))


def privacy_part() -> None:
    delta = 1e-6
    print("\nOne-feature checks, δ = 10⁻⁶, γ = 0.1, radius M: reported ε / the largest exact loss found")
    print("| | n | λ | α | Herbst, 2L | Gaussian profile, G |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n, lam, alpha in RIDGE_CHECKS:
        top = 1 / math.sqrt(lam)
        herbst_beta, _ = gibbs._ridge_beta(n, 1, lam, top, alpha, GAMMA)
        pure, derived = herbst_beta * (top + 1) ** 2, herbst(2 * herbst_beta * (top + 1) ** 2 / (n * lam), delta)
        herbst_epsilon, herbst_delta = (pure, 0.0) if pure <= derived else (derived, delta)
        herbst_found, _ = worst_ridge(n, lam, herbst_beta, top, herbst_delta)
        plan = gibbs._ridge_plan(n, 1, lam, top, alpha, GAMMA, delta)
        found, _ = worst_ridge(n, lam, plan.sampler.beta, plan.sampler.radius, plan.delta)
        cells = [
            f"{herbst_epsilon:.4g} / {herbst_found:.4g} = {herbst_epsilon / herbst_found:.2f}×",
            f"{plan.epsilon:.4g} / {found:.4g} = ",
        ]
        print(
            f"| ridge | {n:,} | {lam:g} | {alpha:g} | {cells[0]} | {cells[1]}{plan.epsilon / found:.2f}× |", flush=True
        )
    for n, lam, alpha in LOGISTIC_CHECKS:
        herbst_beta = gibbs.chi_square_beta(n, 1, alpha, GAMMA)
        herbst_epsilon = herbst(2 * herbst_beta / (n * lam), delta / 1.01)
        herbst_found, _ = worst_logistic(n, lam, herbst_beta, delta / 1.01)
        plan = gibbs._logistic_plan(n, 1, lam, alpha, GAMMA, delta)
        found, _ = worst_logistic(n, lam, plan.beta, delta / 1.01)
        cells = [
            f"{herbst_epsilon:.4g} / {herbst_found:.4g} = {herbst_epsilon / herbst_found:.2f}×",
            f"{plan.epsilon:.4g} / {found:.4g} = ",
        ]
        print(
            f"| logistic | {n:,} | {lam:g} | {alpha:g} | {cells[0]} | {cells[1]}{plan.epsilon / found:.2f}× |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--part", choices=("ridge", "logistic", "privacy", "all"), default="all")
    args = parser.parse_args()
    if args.part in ("ridge", "all"):
        ridge_part(args.trials)
    if args.part in ("logistic", "all"):
        logistic_part(args.runs)
    if args.part in ("privacy", "all"):
        privacy_part()


if __name__ == "__main__":
    main()
