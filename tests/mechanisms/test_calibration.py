"""Exact calibrations of the above-threshold and doubling tests (docs/mathematics.md#calibrations).

Monte Carlo checks compare a computed probability with the share of simulated worst-case
runs (every hypothesis just above α) and allow 4 standard errors: each such check fails
for a correct implementation with probability ≤ 6.4e-5 for its fixed seed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate

from accfirst import AccFirstError, interactive_above_threshold
from accfirst.mechanisms.calibration import (
    CALIBRATIONS,
    AboveThresholdCalibration,
    ExactCalibration,
    _solve,
    calibrated_epsilon,
    calibration_constant,
    doubling_failure_probability,
    doubling_test_scale,
    failure_probability,
    worst_case_failure,
)

EXACT = ("exact", "exact-opt", "exact-paper", "exact-paper-opt")

# The reference constants of docs/mathematics.md#exact-calibrations: c = ε_A·α/Δ_R.
REFERENCE_CONSTANTS = {
    (100, 0.1): (121.6, 39.27, 51.03, 40.04, 32.68, 30.11),
    (1000, 0.05): (169.5, 54.03, 75.44, 58.40, 46.21, 41.75),
    (1000, 0.1): (158.5, 48.48, 69.45, 52.16, 41.89, 37.11),
    (10000, 0.1): (195.3, 57.69, 87.87, 63.92, 51.10, 43.82),
}
PRESETS = ("theorem", "paper-code", *EXACT)


@pytest.mark.parametrize(("T", "gamma"), sorted(REFERENCE_CONSTANTS))
def test_spec_table_is_regenerated_to_three_digits(T: int, gamma: float) -> None:
    for preset, reference in zip(PRESETS, REFERENCE_CONSTANTS[T, gamma]):
        assert calibration_constant(T, gamma, preset) == pytest.approx(reference, rel=1e-3), preset


def test_the_constant_is_epsilon_a_times_alpha_over_sensitivity() -> None:
    for preset in PRESETS:
        c = calibration_constant(300, 0.1, preset)
        params = CALIBRATIONS[preset].calibrate(0.03, 0.1, 300, 2e-4)
        assert params.epsilon == pytest.approx(c * 2e-4 / 0.03, rel=1e-12)
        # ε_A = Δ/b₁ + 2Δ/b₂ (docs/mathematics.md#exact-calibrations) for every preset.
        assert params.epsilon == pytest.approx(2e-4 / params.threshold_scale + 4e-4 / params.query_scale, rel=1e-12)


def test_theorem_and_paper_code_failure_probabilities_match_the_spec() -> None:
    assert failure_probability("theorem", 1000, 0.1) == pytest.approx(1.7e-6, rel=0.03)
    assert failure_probability("paper-code", 1000, 0.1) == pytest.approx(0.0152, rel=0.005)


@pytest.mark.parametrize(("T", "gamma"), [(2, 0.1), (30, 0.2), (1000, 0.1), (100_000, 0.01)])
def test_exact_presets_spend_exactly_gamma(T: int, gamma: float) -> None:
    for preset in EXACT:
        params = CALIBRATIONS[preset].calibrate(1.0, gamma, T, 1.0)
        fail = worst_case_failure(params, 1.0, T)
        if preset.startswith("exact-paper"):
            # Exact under the authors' criterion, which also counts a dead threshold.
            assert worst_case_failure(params, 1.0, T, live=True) == pytest.approx(gamma, rel=1e-8)
            assert fail < gamma
        else:
            assert fail == pytest.approx(gamma, rel=1e-8), preset


def test_optimised_presets_are_local_optima() -> None:
    T, gamma = 1000, 0.1
    opt = CALIBRATIONS["exact-opt"].solve(T, gamma)
    paper_opt = CALIBRATIONS["exact-paper-opt"].solve(T, gamma)
    for factor in (0.9, 1.1):
        nearby = ExactCalibration("nearby", ratio=opt.ratio * factor, halt_below=0.5, live=False)
        assert nearby.solve(T, gamma).constant > opt.constant
        for ratio, halt_below in [
            (paper_opt.ratio * factor, paper_opt.halt_below),
            (paper_opt.ratio, paper_opt.halt_below * factor),
        ]:
            nearby = ExactCalibration("nearby", ratio=ratio, halt_below=halt_below, live=True)
            assert nearby.solve(T, gamma).constant > paper_opt.constant
    c = {preset: calibration_constant(T, gamma, preset) for preset in PRESETS}
    assert c["exact-opt"] < c["exact"] < c["theorem"] and c["exact-paper-opt"] < c["exact-paper"]


def test_quadrature_agrees_with_adaptive_quadrature() -> None:
    rng = np.random.default_rng(5)
    for _ in range(40):
        b1, ratio, s = 10 ** rng.uniform(-2.5, -0.3), 10 ** rng.uniform(-1, 1), rng.uniform(0.02, 0.98)
        T, live = int(10 ** rng.uniform(0, 4.5)), bool(rng.integers(2))
        b2 = ratio * b1

        def integrand(y: float, b1: float = b1, b2: float = b2, s: float = s, T: int = T, live: bool = live) -> float:
            if live and y < -s:
                passes = 1.0
            else:
                F = 0.5 * math.exp((s - 1 + y) / b2) if s - 1 + y < 0 else 1 - 0.5 * math.exp(-(s - 1 + y) / b2)
                passes = -math.expm1(T * math.log1p(-F)) if F < 1 else 1.0
            return math.exp(-abs(y) / b1) / (2 * b1) * passes

        reference, _ = integrate.quad(
            integrand,
            -60 * b1,
            60 * b1,
            points=[p for p in (0, 1 - s, -s) if abs(p) < 60 * b1],
            epsabs=0,
            epsrel=1e-12,
            limit=1000,
        )
        params = AboveThresholdCalibration(0.0, -s, b1, b2)
        assert worst_case_failure(params, 1.0, T, live) == pytest.approx(reference, rel=1e-8, abs=1e-300)


def simulated_failures(params: AboveThresholdCalibration, T: int, runs: int, rng: np.random.Generator):
    """Worst-case runs at α = 1, every R_t just above α: (failures, failures or dead thresholds)."""
    s = -params.threshold
    fails = dead = 0
    for chunk in np.array_split(np.arange(runs), max(1, runs * T // 2_000_000)):
        Y = rng.laplace(0.0, params.threshold_scale, size=chunk.size)
        Z = rng.laplace(0.0, params.query_scale, size=(chunk.size, T))
        failed = (1.0 + Z <= s + Y[:, None]).any(axis=1)
        fails += int(failed.sum())
        dead += int((failed | (s + Y < 0)).sum())
    return fails, dead


@pytest.mark.parametrize(
    ("T", "gamma", "preset"),
    [
        (1000, 0.1, "paper-code"),
        (1000, 0.1, "exact-opt"),
        (100, 0.2, "exact"),
        (30, 0.1, "exact-paper-opt"),
        (300, 0.05, "exact-paper"),
    ],
)
def test_failure_probability_matches_monte_carlo(T: int, gamma: float, preset: str) -> None:
    """4 standard errors on 20,000 simulated worst-case runs (two checks: ≤ 1.3e-4 false failures)."""
    runs = 20_000
    params = CALIBRATIONS[preset].calibrate(1.0, gamma, T, 1.0)
    fails, dead = simulated_failures(params, T, runs, np.random.default_rng(T))
    for observed, criterion in [(fails, False), (dead, True)]:
        expected = worst_case_failure(params, 1.0, T, live=criterion)
        error = math.sqrt(expected * (1 - expected) / runs)
        assert abs(observed / runs - expected) <= 4 * error, (criterion, observed / runs, expected)


def test_exact_doubling_test_follows_the_spec() -> None:
    for K, ratio in [(5, 0.81), (10, 0.84), (18, 0.86), (25, 0.87)]:
        # ε_test ∝ 1/b, so the exact test's cost relative to Thm A.2's is b_paper/b_exact.
        assert doubling_test_scale(1.0, 0.1, K, "paper") / doubling_test_scale(1.0, 0.1, K, "exact") == pytest.approx(
            ratio, abs=0.005
        )
        assert doubling_failure_probability(0.05, 0.1, K, "exact") == pytest.approx(0.1, rel=1e-12)
        assert doubling_failure_probability(0.05, 0.1, K, "paper") < 0.05


@pytest.mark.parametrize("calibration", ["paper", "exact"])
def test_doubling_failure_probability_matches_monte_carlo(calibration: str) -> None:
    """4 standard errors on 100,000 worst-case doubling runs: ≤ 6.4e-5 false failures."""
    alpha, gamma, K, runs = 0.05, 0.1, 12, 100_000
    b = doubling_test_scale(alpha, gamma, K, calibration)
    noise = np.random.default_rng(K).laplace(0.0, b, size=(runs, K))
    share = float((-alpha + noise >= -alpha / 2).any(axis=1).mean())
    expected = doubling_failure_probability(alpha, gamma, K, calibration)
    assert abs(share - expected) <= 4 * math.sqrt(expected * (1 - expected) / runs)


def test_exact_solutions_are_cached() -> None:
    calibration_constant(777, 0.1, "exact-paper-opt")
    hits = _solve.cache_info().hits
    calibration_constant(777, 0.1, "exact-paper-opt")
    CALIBRATIONS["exact-paper-opt"].calibrate(0.2, 0.1, 777, 3.0)
    assert _solve.cache_info().hits == hits + 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: calibration_constant(1000, 1.2, "exact"), "gamma"),
        (lambda: calibration_constant(0, 0.1, "exact"), "at least 1"),
        (lambda: calibration_constant(1000, 0.1, "loose"), "unknown calibration"),
        (lambda: calibration_constant(2, 0.9, "exact"), "too large"),
        (lambda: ExactCalibration("x", ratio=2.0, halt_below=None, live=False), "live criterion"),
        (lambda: doubling_test_scale(0.05, 0.1, 10, "tight"), "unknown doubling calibration"),
        (lambda: doubling_test_scale(0.05, 0.8, 2, "exact"), "too large"),
    ],
)
def test_bad_arguments_are_refused(call, message) -> None:
    with pytest.raises(AccFirstError, match=message):
        call()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("exact", 0, 0.1, 0.01, 0.05), "T"),
        (("exact", 100, 1.5, 0.01, 0.05), "gamma"),
        (("exact", 100, 0.1, float("nan"), 0.05), "sensitivity"),
        (("exact", 100, 0.1, -0.01, 0.05), "sensitivity"),
        (("exact", 100, 0.1, 0.01, 0.0), "alpha"),
        (("no-such-preset", 100, 0.1, 0.01, 0.05), "calibration"),
    ],
)
def test_calibrated_epsilon_checks_what_it_is_given(arguments, message) -> None:
    with pytest.raises(AccFirstError, match=message):
        calibrated_epsilon(*arguments)


def test_above_threshold_refuses_a_calibration_whose_numbers_cannot_price_a_test() -> None:
    good = CALIBRATIONS["exact"].calibrate(0.05, 0.1, 10, 0.01)
    hypotheses, levels = [], np.ones(10)
    for bad, message in (
        (dataclasses.replace(good, query_scale=-1.0), "query_scale"),
        (dataclasses.replace(good, threshold_scale=math.inf), "threshold_scale"),
        (dataclasses.replace(good, epsilon=0.0), "epsilon"),
        (dataclasses.replace(good, threshold=math.nan), "threshold"),
        (dataclasses.replace(good, clip=0.0), "clip"),
        ({"epsilon": 1.0}, "AboveThresholdCalibration"),
    ):
        with pytest.raises(AccFirstError, match=message):
            interactive_above_threshold(hypotheses, levels, bad, 0)
    with pytest.raises(AccFirstError, match="1-D"):
        interactive_above_threshold(hypotheses, np.ones((2, 5)), good, 0)
    assert interactive_above_threshold(hypotheses, levels, good).index is None  # rng omitted: the OS; no hypothesis
