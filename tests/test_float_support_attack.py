"""The float support attack on every released-value path (docs/mathematics.md, "Noise that float64 cannot betray").

An attacker who has read the code checks, for each released float64, whether the neighbouring
dataset could have produced it. Pure ε-DP allows the neighbour to be ruled out no more often than
the true dataset: never. Each test counts, over many releases, how often each is ruled out.

Against numpy's Laplace sampler (what accfirst added before; ``numpy_laplace_can_produce``
replays it bit for bit) the neighbour is ruled out most of the time: the check has teeth. A
release on a lattice can be any lattice point under any input, so the check asks only whether
the value is a point of the lattice of its noise scale (``on_lattice``), and neither dataset is
ever ruled out. Deterministic: fixed seeds, and the counts asserted are exact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accfirst import LogisticProblem, RidgeProblem
from accfirst.accounting.counts import release_counts
from accfirst.erm.generators import CovariancePerturbation, OutputPerturbation
from accfirst.erm.theory import theory_epsilon
from accfirst.mechanisms.brownian import GAUSSIAN
from accfirst.mechanisms.lattice import lattice_spacing
from accfirst.mechanisms.noise_reduction import LAPLACE
from accfirst.methods.grid import epsilon_grid
from accfirst.methods.nr import noise_reduction
from accfirst.methods.theory import theory_run
from tests.attacks import neighbour, numpy_laplace_can_produce, numpy_laplace_value, on_lattice
from tests.data import make_logistic_data, make_ridge_data


def test_the_check_replays_numpy_laplace_and_rules_the_neighbour_out() -> None:
    """x + Lap(1) by numpy against x + 1: the neighbour is ruled out in most releases, the truth never."""
    draws = np.random.default_rng(0).laplace(0.0, 1.0, 3000)
    uniforms = np.random.default_rng(0).random(3000)
    replayed = [numpy_laplace_value(int(u * 2**53), 0.0, 1.0) for u in uniforms]
    np.testing.assert_array_equal(draws, replayed)
    truth_out = sum(not numpy_laplace_can_produce(y, 0.0, 1.0) for y in draws)
    neighbour_out = sum(not numpy_laplace_can_produce(y, 1.0, 1.0) for y in draws)
    assert truth_out == 0
    assert neighbour_out > 0.75 * draws.size  # measured: 82%


def test_laplace_mechanism_never_rules_either_input_out() -> None:
    """x + Lap(1) on the lattice, for x = 0 and for its neighbour x = 1: 3,000 releases each."""
    spacing = lattice_spacing(1.0)
    for centre in (0.0, 1.0):
        released = LAPLACE.perturb(np.full(3000, centre), 1.0, 1.0, np.random.default_rng(1))
        assert np.all(on_lattice(released, spacing))  # so both inputs can produce every one


@pytest.fixture(scope="module")
def logistic_pair() -> tuple[LogisticProblem, LogisticProblem]:
    X, y = make_logistic_data(3, 5000, 10)
    return LogisticProblem(X, y, 0.005), LogisticProblem(*neighbour(X, y), 0.005)


def test_output_perturbation_of_the_theory_approach(logistic_pair) -> None:
    """The issue's case: θ* + noise at the theory ε on a 5,000-row logistic problem, 200 releases.

    numpy's sampler let the attacker rule the neighbour out in some releases (one impossible
    coordinate is enough); the lattice rules out neither dataset in any."""
    problem, other = logistic_pair
    gen = OutputPerturbation(problem)
    epsilon = theory_epsilon(problem, 0.05, gen)
    scale = gen.sensitivity / epsilon
    rng = np.random.default_rng(2)
    old = problem.theta_star + rng.laplace(0.0, scale, (200, problem.p))
    ruled_out = [any(not numpy_laplace_can_produce(v, c, scale) for v, c in zip(row, other.theta_star)) for row in old]
    assert 0 < sum(ruled_out) < 200
    spacing = lattice_spacing(scale)
    for seed in range(200):
        theta = theory_run(problem, 0.05, rng=seed).theta
        assert np.linalg.norm(theta) < problem.norm_bound  # not projected: θ is the release itself
        assert np.all(on_lattice(theta, spacing))


def test_output_noise_reduction_releases_its_stopping_level_on_its_lattice(logistic_pair) -> None:
    problem, _ = logistic_pair
    gen = OutputPerturbation(problem)
    grid = epsilon_grid(problem, 0.1, T=100)
    checked = 0
    for seed in range(60):
        result = noise_reduction(problem, 0.1, 0.1, grid, rng=seed)
        if result.stop_index is None or np.linalg.norm(result.theta) >= problem.norm_bound:
            continue
        spacing = lattice_spacing(gen.sensitivity / grid[result.stop_index - 1])
        assert np.all(on_lattice(result.theta, spacing))
        checked += 1
    assert checked >= 50


def test_covariance_perturbation() -> None:
    """(XᵀX, Xᵀy) + noise, p = 6: numpy's sampler rules the neighbour out, the lattice neither."""
    X, y = make_ridge_data(4, 2000, 6)
    here, there = RidgeProblem(X, y, 0.005), RidgeProblem(*neighbour(X, y), 0.005)
    gen, other = CovariancePerturbation(here), CovariancePerturbation(there)
    epsilon = 0.5
    scale = gen.sensitivity / epsilon
    rng = np.random.default_rng(5)
    old = gen.private_vector() + rng.laplace(0.0, scale, (40, gen.private_vector().size))
    ruled_out = [
        any(not numpy_laplace_can_produce(v, c, scale) for v, c in zip(row, other.private_vector())) for row in old
    ]
    assert sum(ruled_out) == 40
    spacing = lattice_spacing(scale)
    for _ in range(200):
        released = gen.noise.perturb(gen.private_vector(), gen.noise_sensitivity, epsilon, rng)
        assert np.all(on_lattice(released, spacing))


def test_gaussian_release_and_the_brownian_chain() -> None:
    rng = np.random.default_rng(6)
    rho = 0.3
    deviation = 1.0 / math.sqrt(2 * rho)
    for centre in (0.0, 1.0):
        released = GAUSSIAN.perturb(np.full(3000, centre), 1.0, rho, rng)
        assert np.all(on_lattice(released, lattice_spacing(deviation)))
    rhos = np.geomspace(0.01, 10.0, 25)
    chain = GAUSSIAN.chain(np.full(500, 7.0), 1.0, rhos, rng)
    for k, level in enumerate(rhos):
        assert np.all(on_lattice(chain.release(k), lattice_spacing(1.0 / math.sqrt(2 * level))))


@pytest.mark.parametrize("method", ["nr", "doubling"])
def test_count_releases(method: str) -> None:
    counts = np.random.default_rng(7).integers(50, 5000, 40)
    frame = release_counts(counts, 0.1, 1.0, 1e-6, method=method, rng=8)
    released = frame.dropna(subset=["released"])
    assert len(released) > 10
    for value, sigma in zip(released["released"], released["sigma"]):
        assert on_lattice(np.array([value]), lattice_spacing(sigma))[0]
