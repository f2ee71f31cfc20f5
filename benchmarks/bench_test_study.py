"""The cheapest private accuracy test at the default. Prints figures; asserts nothing.

(a) The AboveThreshold budget split re-optimised for the smaller Δ_R. Every exact calibration spends
exactly γ; "exact-paper-opt" (the default) minimises the test's constant c = ε_A·α/Δ_R alone. With a
private radius the test is a smaller part of the total, so a higher threshold s (the test halts on
noisier, earlier levels: a smaller ε_t) may pay for its larger c. Candidates under the same criterion
(the authors' γ_live): s/α fixed at 0.3, 0.4, 0.5 with the ratio r = b₂/b₁ re-optimised; and fewer levels
T (30, 50), whose c is smaller and whose grid is coarser. Median total ε of noise reduction at the
package defaults with the private radius, 30 trials, on synthetic-buzz and synthetic-intrusion.

(b) Gaussian AboveThreshold with pure ex-post privacy for bounded queries (Lebensold, Precup & Balle,
AISTATS 2024) [derived here for our queries]. Clip the query to f = −min(R, α) ∈ [−α, 0] (1-Lipschitz:
sensitivity still Δ_R; a hypothesis with R > α still reads −α, so the worst case of the accuracy
analysis is unchanged). With threshold noise N(0, σ₁²), query noise N(0, σ₂²), threshold τ = −sα, the
ex-post loss of halting at k is at most

    ε_G(k) = max_{b ∈ [−α, 0]} ln ∫φ_σ₁(y − Δ)Φ_σ₂(τ + y)^{k−1}Φ̄_σ₂(τ + y − b − 2Δ)dy
                               − ln ∫φ_σ₁(y)Φ_σ₂(τ + y)^{k−1}Φ̄_σ₂(τ + y − b)dy,

the loss of the pair D′ = (0, …, 0, b), D = (−Δ, …, −Δ, b + Δ): for a fixed D′ the neighbour that
moves the first k − 1 queries down by Δ and the k-th up by Δ is the worst (monotonicity), the shift
y → y − Δ turns the ratio into a posterior mean of an increasing function of y, and the posterior is
stochastically largest when the first k − 1 queries sit at the top of their range, 0 (Φ is log-concave:
monotone likelihood ratio). The accuracy calibration is that of docs/mathematics.md#exact-calibrations with Gaussian
cdfs. The script prints ε_G(k)·α/Δ at the halting indices the default's runs reach, against the Laplace c, checks ε_G on
the worst-case pair by Monte Carlo and on random pairs by quadrature.

Usage: python benchmarks/bench_test_study.py [--trials 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp
from scipy.stats import norm

from accfirst import SearchOptions, run_trials
from accfirst.datasets import load_builtin
from accfirst.erm.problem import Problem
from accfirst.erm.problems import PROBLEMS
from accfirst.interpret import median_with_inf
from accfirst.mechanisms.calibration import CALIBRATIONS, ExactCalibration, calibration_constant
from accfirst.methods.nr import NoiseReduction

LAM, GAMMA = 0.005, 0.1
DATASETS = ("synthetic-buzz", "synthetic-intrusion")
ALPHAS = (0.01, 0.05, 0.1)
THRESHOLDS = (0.3, 0.4, 0.5)
LEVELS = (30, 50)
# The Gaussian test's grid over y (threshold noise) and its scan of configurations.
Y_SCALES, Y_POINTS = 12.0, 20001
GAUSSIAN_S = (0.05, 0.1, 0.2, 0.3)
GAUSSIAN_R = (0.75, 1.0, 1.5, 2.0)


def build(name: str) -> Problem:
    data = load_builtin(name)
    return PROBLEMS[data.task](data.X_train, data.y_train, LAM)


# --- (a) ----------------------------------------------------------------------------------------


def candidates() -> dict[str, SearchOptions]:
    """The default and each candidate, as search options (candidate calibrations registered for this run)."""
    options = {"default": SearchOptions(radius_mode="private")}
    for s in THRESHOLDS:
        name = f"live s={s:g}"
        CALIBRATIONS[name] = ExactCalibration(name, ratio=None, halt_below=s, live=True)
        options[name] = SearchOptions(radius_mode="private", calibration=name)
    for T in LEVELS:
        options[f"T={T}"] = SearchOptions(radius_mode="private", T=T)
    return options


def study_a(trials: int, seed: int) -> tuple[pd.DataFrame, dict[tuple[str, float], pd.DataFrame]]:
    rows, defaults = [], {}
    options = candidates()
    for name in DATASETS:
        problem = build(name)
        for alpha in ALPHAS:
            row: dict[str, object] = {"dataset": name, "alpha": alpha}
            for label, option in options.items():
                frame = run_trials(problem, [alpha], GAMMA, [NoiseReduction.key], trials, seed, **option.to_dict())
                row[label] = median_with_inf(frame["eps_total"])
                row[f"{label} fb"] = float(frame["fallback"].mean())
                if label == "default":
                    defaults[(name, alpha)] = frame
            rows.append(row)
            print(f"  (a) {name} α = {alpha:g} done", flush=True)
    return pd.DataFrame(rows), defaults


# --- (b) ----------------------------------------------------------------------------------------


def _grid(s1: float) -> np.ndarray:
    return np.linspace(-Y_SCALES * s1, Y_SCALES * s1, Y_POINTS)


def gaussian_failure(s: float, s1: float, s2: float, T: int) -> float:
    """Worst-case P(halt with R > α) at α = 1: every query at −1, halt iff −1 + Z ≥ −s + Y
    (docs/mathematics.md#exact-calibrations, Gaussian)."""
    y = _grid(s1)
    weights = norm.pdf(y, scale=s1)
    weights /= weights.sum()
    passes = norm.sf((1 - s + y) / s2)
    with np.errstate(divide="ignore"):  # a sure pass: log1p(−1) = −∞, and 1 − e^{−∞} = 1
        return float(weights @ -np.expm1(T * np.log1p(-passes)))


def gaussian_calibration(s: float, ratio: float, T: int, gamma: float) -> tuple[float, float]:
    """σ₁, σ₂ = ratio·σ₁ at α = 1 with worst-case failure exactly γ."""
    log_s1 = brentq(
        lambda v: math.log(max(gaussian_failure(s, math.exp(v), ratio * math.exp(v), T), 1e-300)) - math.log(gamma),
        math.log(1e-3),
        math.log(3.0),
    )
    return math.exp(log_s1), ratio * math.exp(log_s1)


def _log_halt(y: np.ndarray, k: int, s: float, s1: float, s2: float, first: float, last: float, shift: float) -> float:
    """ln P(halt at k) at α = 1 for queries (first, …, first, last), threshold noise shifted by ``shift``."""
    tau = -s
    log_density = norm.logpdf(y - shift, scale=s1)
    return float(logsumexp(log_density + (k - 1) * log_ndtr((tau + y - first) / s2) + log_ndtr(-(tau + y - last) / s2)))


def gaussian_loss(k: int, s: float, s1: float, s2: float, delta: float, bottoms: int = 41) -> float:
    """ε_G(k) at α = 1 (module doc): the worst b ∈ [−1, 0] for the pair (0, …, 0, b) / (−Δ, …, −Δ, b + Δ)."""
    y = _grid(s1)
    return max(
        _log_halt(y, k, s, s1, s2, 0.0, b + 2 * delta, delta) - _log_halt(y, k, s, s1, s2, 0.0, b, 0.0)
        for b in np.linspace(-1.0, 0.0, bottoms)
    )


def best_gaussian(T: int, k: int, delta: float) -> tuple[float, float, float, float]:
    """The configuration (s, σ₁, σ₂) of least ε_G(k) over the scan, and that ε_G(k)."""
    best = (math.inf, 0.0, 0.0, 0.0)
    for s in GAUSSIAN_S:
        for ratio in GAUSSIAN_R:
            s1, s2 = gaussian_calibration(s, ratio, T, GAMMA)
            loss = gaussian_loss(k, s, s1, s2, delta)
            if loss < best[0]:
                best = (loss, s, s1, s2)
    return best[1], best[2], best[3], best[0]


def monte_carlo_check(rng: np.random.Generator, draws: int = 2_000_000) -> tuple[float, float]:
    """ε_G(2) of a test with a large Δ, by quadrature and by simulating the worst-case pair (halting at 2)."""
    s, s1, s2, delta, k = 0.1, 0.3, 0.3, 0.15, 2
    y = _grid(s1)
    bottoms = np.linspace(-1.0, 0.0, 41)
    losses = [
        _log_halt(y, k, s, s1, s2, 0.0, b + 2 * delta, delta) - _log_halt(y, k, s, s1, s2, 0.0, b, 0.0) for b in bottoms
    ]
    b = float(bottoms[int(np.argmax(losses))])

    def halts_at_k(queries: np.ndarray) -> int:
        threshold = -s + rng.normal(0.0, s1, size=draws)
        above = queries[None, :] + rng.normal(0.0, s2, size=(draws, k)) >= threshold[:, None]
        return int(((~above[:, :-1]).all(axis=1) & above[:, -1]).sum())

    neighbour = halts_at_k(np.array([0.0] * (k - 1) + [b]))
    worst = halts_at_k(np.array([-delta] * (k - 1) + [b + delta]))
    return max(losses), math.log(worst / neighbour)


def random_pairs_check(rng: np.random.Generator, pairs: int = 200) -> float:
    """The largest ln P_D(k)/P_D′(k) over random neighbouring query sequences in [−1, 0], by quadrature, ÷ ε_G(k)."""
    s, s1, s2, delta = 0.1, 0.3, 0.3, 0.15
    y = _grid(s1)
    bounds = {k: gaussian_loss(k, s, s1, s2, delta) for k in range(1, 6)}
    worst = 0.0
    for _ in range(pairs):
        k = int(rng.integers(1, 6))
        other = rng.uniform(-1.0, 0.0, size=k)
        moved = np.clip(other + rng.uniform(-delta, delta, size=k), -1.0, 0.0)

        def log_halt(queries: np.ndarray) -> float:
            below = sum(log_ndtr((-s + y - q) / s2) for q in queries[:-1])
            return float(logsumexp(norm.logpdf(y, scale=s1) + below + log_ndtr(-(-s + y - queries[-1]) / s2)))

        worst = max(worst, (log_halt(moved) - log_halt(other)) / bounds[k])
    return worst


def study_b(defaults: dict[tuple[str, float], pd.DataFrame]) -> pd.DataFrame:
    rows = []
    T = SearchOptions().T
    laplace = calibration_constant(T, GAMMA, SearchOptions().calibration)
    for (name, alpha), frame in defaults.items():
        halted = frame[~frame["fallback"]]
        k = int(halted["stop_index"].median())
        unit = float(halted["eps_test"].median()) / laplace  # Δ_R/α of a typical run: ε_A = c·Δ_R/α
        s, s1, s2, loss = best_gaussian(T, k, unit)
        rows.append(
            {
                "dataset": name,
                "alpha": alpha,
                "median k": k,
                "Laplace c": laplace,
                "Gaussian ε_G(k)·α/Δ": loss / unit,
                "best s/α": s,
                "σ₁/α": s1,
                "σ₂/α": s2,
                "Gaussian ÷ Laplace": loss / unit / laplace,
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    table, defaults = study_a(args.trials, args.seed)
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.4g}".format):
        print(f"\n(a) median total ε with the private radius, {args.trials} trials (fb: fallback share)")
        print(table.to_string(index=False))
        labels = [c for c in table.columns if c not in ("dataset", "alpha") and not c.endswith(" fb")]
        saving = {label: float(np.exp(np.log(table[label] / table["default"]).mean())) for label in labels}
        print("geometric mean against the default: " + ", ".join(f"{k}: {v:.3f}" for k, v in saving.items()))
        study = study_b(defaults)
        print("\n(b) Gaussian AboveThreshold, pure ex-post [derived], at the default's median halting index")
        print(study.to_string(index=False))
    rng = np.random.default_rng(args.seed)
    formula, simulated = monte_carlo_check(rng)
    print(f"\nworst-case pair (Δ = 0.15α, k = 2): ε_G by quadrature {formula:.4f}, by Monte Carlo {simulated:.4f}")
    print(f"random neighbouring pairs: largest loss ÷ ε_G(k) = {random_pairs_check(rng):.4f} (≤ 1 expected)")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
