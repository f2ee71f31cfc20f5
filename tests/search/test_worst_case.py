"""Every calibration meets its guarantee in the worst case, and the exact ones spend γ
(docs/mathematics.md#calibrations).

The problem puts every hypothesis just above α: ridge with output perturbation on
features scaled down to 1e-9, at privacy levels so small that every noisy θ is
projected onto the sphere ‖θ‖ = M, where R(θ) = ½λM² = ½ up to 1e-8; α = ½ − 1e-6.
Every halt is then a failure, and the failure share estimates γ_fail (docs/mathematics.md#exact-calibrations).

Each configuration makes 2,000 runs and two one-sided exact binomial tests at 1e-3:
the share must not exceed γ, and must not fall below the exact worst-case failure
probability (which is γ itself for ``exact`` and ``exact-opt``, so a silently
conservative solver fails). False-failure rate ≤ 2e-3 per configuration for its seed
(≤ 3e-3 for the "paper" presets, which add a third test). About 4 s per configuration.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from accfirst import RidgeProblem, doubling, doubling_levels, noise_reduction
from accfirst.mechanisms.calibration import CALIBRATIONS, doubling_failure_probability, failure_probability

RUNS = 2000
ALPHA, GAMMA, T = 0.5 - 1e-6, 0.1, 10
SIGNIFICANCE = 1e-3


@pytest.fixture(scope="module")
def sphere_problem() -> RidgeProblem:
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(50, 3))
    X *= 1e-9 / np.abs(X).sum(axis=1, keepdims=True)
    return RidgeProblem(X, rng.uniform(-1, 1, size=50), 0.005)


def check_share(failures: int, expected: float) -> None:
    """Not above γ, not below the exact worst case ``expected`` (one-sided exact tests)."""
    assert expected <= GAMMA * (1 + 1e-9)
    assert stats.binomtest(failures, RUNS, GAMMA, alternative="greater").pvalue > SIGNIFICANCE, failures / RUNS
    below = stats.binomtest(failures, RUNS, expected, alternative="less").pvalue
    assert below > SIGNIFICANCE, (failures / RUNS, expected)


def assert_just_above_alpha(risks: np.ndarray) -> None:
    assert np.all(risks > ALPHA) and np.all(risks < ALPHA + 1e-5)


@pytest.mark.parametrize("calibration", sorted(CALIBRATIONS))
def test_noise_reduction_worst_case(calibration: str, sphere_problem: RidgeProblem) -> None:
    grid = np.geomspace(1e-3, 1e-2, T)
    failures = dead_or_failed = 0
    for seed in range(RUNS):
        result = noise_reduction(
            sphere_problem, ALPHA, GAMMA, grid, generator="output", rng=seed, calibration=calibration, exact=True
        )
        assert_just_above_alpha(result.trace.excess_risk)
        failed = not result.fallback
        failures += failed
        # A noisy threshold on f = −R above zero lets no R ≥ 0 pass without noise.
        dead_or_failed += failed or result.trace.noisy_threshold[0] > 0
    expected = failure_probability(calibration, T, GAMMA)
    if calibration in ("exact", "exact-opt"):
        assert expected == pytest.approx(GAMMA, rel=1e-8)
    check_share(failures, expected)
    if calibration.startswith("exact-paper"):
        # Exact under the authors' criterion: failures and dead thresholds together spend γ.
        assert stats.binomtest(dead_or_failed, RUNS, GAMMA).pvalue > SIGNIFICANCE, dead_or_failed / RUNS


@pytest.mark.parametrize("calibration", ["paper", "exact"])
def test_doubling_worst_case(calibration: str, sphere_problem: RidgeProblem) -> None:
    eps_min, eps_max = 1e-4, 1e-4 * 2**7
    K = doubling_levels(eps_min, eps_max).size
    failures = 0
    for seed in range(RUNS):
        result = doubling(
            sphere_problem,
            ALPHA,
            GAMMA,
            eps_min,
            eps_max,
            generator="output",
            rng=seed,
            exact=True,
            calibration=calibration,
        )
        assert_just_above_alpha(result.trace.excess_risk)
        failures += not result.fallback
    expected = doubling_failure_probability(ALPHA, GAMMA, K, calibration)
    if calibration == "exact":
        assert expected == pytest.approx(GAMMA, rel=1e-12)
    check_share(failures, expected)
