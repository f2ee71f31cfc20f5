"""Algorithm 1 (docs/mathematics.md#noise-reduction): marginals, keep frequencies, increments, order, float64.

Each statistical assertion uses a fixed seed and a p-value threshold of 1e-3
(Bonferroni-corrected where several levels are checked), so with a correct sampler
a test fails with probability ≤ 1e-3 for a given seed; the seeds are fixed, so the
outcome is deterministic. ``test_marginal_test_detects_integer_noise`` shows the same
test rejects noise cast to integers (the bug in the authors' published code).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from accfirst import AccFirstError, laplace_noise_reduction
from accfirst.mechanisms.lattice import lattice_spacing
from accfirst.mechanisms.noise_reduction import LAPLACE, _SortedSearch

SAMPLES = 20_000
ALPHA = 1e-3
GRIDS = {
    "geometric": np.geomspace(0.05, 20.0, 60),
    "linear": np.linspace(0.1, 5.0, 40),
    "irregular": np.array([0.01, 0.011, 0.5, 0.51, 0.9, 3.0, 3.001, 40.0]),
    "paper-like": np.geomspace(1e-5, 70.0, 1000),
}


def marginal_pvalue(samples: np.ndarray, scale: float) -> float:
    return stats.kstest(samples, stats.laplace(scale=scale).cdf).pvalue


def moved(out: np.ndarray, sensitivity: float, eps: np.ndarray) -> np.ndarray:
    """(T − 1, d): whether a coordinate was re-drawn between levels t and t + 1.

    Level t releases its value rounded to the lattice of spacing g_t: a kept value moves by at
    most (g_t + g_{t+1})/2 (less than 2⁻¹⁶ of the noise scale), a re-drawn one by fresh Laplace
    noise, which falls that close with probability below 2⁻¹⁵.
    """
    spacing = np.array([lattice_spacing(sensitivity / e) for e in eps])
    return np.abs(np.diff(out, axis=0)) > (0.5 * (spacing[:-1] + spacing[1:]))[:, None]


@pytest.mark.parametrize("grid_name", list(GRIDS))
def test_every_release_is_laplace_around_the_private_value(grid_name: str) -> None:
    eps = GRIDS[grid_name]
    sensitivity = 2.0
    v = np.linspace(-3, 3, SAMPLES)
    out = laplace_noise_reduction(v, sensitivity, eps, np.random.default_rng(11))
    assert out.dtype == np.float64 and out.shape == (eps.size, SAMPLES)
    levels = np.unique(np.linspace(0, eps.size - 1, 8).round().astype(int))
    threshold = ALPHA / levels.size
    for t in levels:
        noise = out[t] - v
        assert marginal_pvalue(noise, sensitivity / eps[t]) > threshold, (grid_name, t)


def test_marginal_test_detects_integer_noise() -> None:
    eps = GRIDS["geometric"]
    out = laplace_noise_reduction(np.zeros(SAMPLES), 2.0, eps, np.random.default_rng(11))
    t = 40
    assert marginal_pvalue(out[t], 2.0 / eps[t]) > ALPHA
    assert marginal_pvalue(np.trunc(out[t]), 2.0 / eps[t]) < 1e-12


@pytest.mark.parametrize("grid_name", ["geometric", "irregular"])
def test_consecutive_levels_agree_with_probability_ratio_squared(grid_name: str) -> None:
    eps = GRIDS[grid_name]
    out = laplace_noise_reduction(np.zeros(SAMPLES), 1.0, eps, np.random.default_rng(5))
    redrawn = moved(out, 1.0, eps)
    checks = range(eps.size - 1)
    for t in checks:
        kept = int(np.count_nonzero(~redrawn[t]))
        expected = (eps[t] / eps[t + 1]) ** 2
        assert stats.binomtest(kept, SAMPLES, expected).pvalue > ALPHA / len(checks), t


def test_redraws_add_fresh_laplace_noise_of_the_lower_level() -> None:
    eps = np.array([0.2, 0.4, 0.8])
    out = laplace_noise_reduction(np.zeros(4 * SAMPLES), 1.0, eps, np.random.default_rng(9))
    redrawn = moved(out, 1.0, eps)
    for t in range(2):
        changed = (out[t] - out[t + 1])[redrawn[t]]
        assert changed.size > SAMPLES
        assert marginal_pvalue(changed, 1.0 / eps[t]) > ALPHA / 2


def test_keep_decisions_are_independent_across_levels() -> None:
    eps = np.array([0.5, 0.7, 1.0])
    out = laplace_noise_reduction(np.zeros(4 * SAMPLES), 1.0, eps, np.random.default_rng(2))
    keep_low, keep_high = ~moved(out, 1.0, eps)
    table = np.array(
        [
            [np.sum(keep_low & keep_high), np.sum(keep_low & ~keep_high)],
            [np.sum(~keep_low & keep_high), np.sum(~keep_low & ~keep_high)],
        ]
    )
    assert stats.chi2_contingency(table).pvalue > ALPHA


def literal_algorithm_1(v: np.ndarray, sensitivity: float, eps: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 1 exactly as printed: one coin per coordinate per level."""
    out = np.empty((eps.size, v.size))
    out[-1] = v + rng.laplace(0, sensitivity / eps[-1], v.size)
    for t in range(eps.size - 2, -1, -1):
        keep = rng.random(v.size) < (eps[t] / eps[t + 1]) ** 2
        out[t] = np.where(keep, out[t + 1], out[t + 1] + rng.laplace(0, sensitivity / eps[t], v.size))
    return out


def test_redraw_counts_match_the_literal_algorithm() -> None:
    eps = np.geomspace(0.01, 10.0, 200)
    fast = laplace_noise_reduction(np.zeros(SAMPLES), 1.0, eps, np.random.default_rng(3))
    slow = literal_algorithm_1(np.zeros(SAMPLES), 1.0, eps, np.random.default_rng(4))
    fast_counts = np.count_nonzero(moved(fast, 1.0, eps), axis=0)
    slow_counts = np.count_nonzero(np.diff(slow, axis=0), axis=0)
    assert stats.ks_2samp(fast_counts, slow_counts).pvalue > ALPHA
    for t in (0, 100, 198):
        assert stats.ks_2samp(fast[t], slow[t]).pvalue > ALPHA


def test_lazy_chain_releases_match_and_only_move_forward() -> None:
    eps = np.geomspace(0.1, 10.0, 30)
    full = laplace_noise_reduction(np.arange(50.0), 3.0, eps, np.random.default_rng(8))
    chain = LAPLACE.chain(np.arange(50.0), 3.0, eps, np.random.default_rng(8))
    assert np.array_equal(chain.release(4), full[4])
    assert np.array_equal(chain.release(17), full[17])
    with pytest.raises(AccFirstError, match="increasing level order"):
        chain.release(3)


def test_same_seed_same_releases() -> None:
    eps = np.geomspace(0.1, 10.0, 30)
    a = laplace_noise_reduction(np.ones(10), 1.0, eps, np.random.default_rng(1))
    b = laplace_noise_reduction(np.ones(10), 1.0, eps, np.random.default_rng(1))
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    ("epsilons", "sensitivity", "message"),
    [
        ([1.0, 0.5], 1.0, "strictly increasing"),
        ([0.0, 1.0], 1.0, "> 0"),
        ([], 1.0, "non-empty"),
        ([0.1, np.nan], 1.0, "finite"),
        ([0.1, 1.0], 0.0, "sensitivity"),
        ([0.1, 1.0], -2.0, "sensitivity"),
    ],
)
def test_bad_arguments_raise(epsilons, sensitivity, message) -> None:
    with pytest.raises(AccFirstError, match=message):
        laplace_noise_reduction(np.zeros(3), sensitivity, epsilons, np.random.default_rng(0))


@pytest.mark.parametrize("grid_name", [*GRIDS, "one level"])
def test_sorted_search_agrees_with_numpy(grid_name: str) -> None:
    """The chain's re-draw search is numpy's searchsorted, faster: the same answer for every value,
    including values equal to a key, 0, and values above the last key."""
    keys = (GRIDS.get(grid_name, np.array([2.0]))) ** 2
    rng = np.random.default_rng(12)
    values = np.concatenate([rng.random(5000) * keys[-1] * 1.2, keys, [0.0, keys[-1] * 2]])
    expected = np.searchsorted(keys, values, side="left") - 1
    np.testing.assert_array_equal(_SortedSearch(keys).below(values), expected)
