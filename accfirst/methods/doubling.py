"""The doubling method: independent hypotheses at doubling privacy levels (Algorithm 4, Thm A.2,
docs/mathematics.md#the-doubling-method).

The paper's baseline. Level k draws an independent ε_k-DP hypothesis, ε_k = ε_min·2^{k−1}, and
tests it with the Laplace mechanism. With ``noise="gaussian"`` the independent Gaussian levels'
privacy losses add up to a Brownian motion in ρ-time observed at ρ_1 + … + ρ_k, so the same
time-uniform boundary as noise reduction's covers the data-dependent stop (docs/mathematics.md#brownian-noise-reduction;
docs/mathematics.md, “Brownian noise reduction”).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.generators import HypothesisGenerator, make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.above_threshold import ThresholdNoise, sequential_test
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import clips_query, doubling_calibration, doubling_test_scale
from accfirst.methods.base import (
    Comparison,
    Method,
    Prediction,
    Setting,
    generation_cost,
    predicted_generation,
    searched_result,
)
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions, validate_fallback
from accfirst.result import RunResult
from accfirst.validation import as_generator, checked, positive, validate_alpha, validate_gamma

# 2^k for the ex-post loss must stay finite in float64.
MAX_DOUBLING_LEVELS = 1000


@checked(eps_min=positive("eps_min"), eps_max=positive("eps_max"))
def doubling_levels(eps_min: float, eps_max: float) -> NDArray[np.float64]:
    """ε_k = ε_min·2^{k−1}, k = 1…K, K = ⌈log₂(ε_max/ε_min)⌉ + 1 (docs/mathematics.md#the-doubling-method)."""
    low, high = eps_min, eps_max
    if not low < high:
        raise AccFirstError(f"eps_min must be smaller than eps_max; got eps_min={low:g}, eps_max={high:g}")
    K = math.ceil(math.log2(high) - math.log2(low)) + 1
    if K > MAX_DOUBLING_LEVELS:
        raise AccFirstError(
            f"eps_max/eps_min = 2^{K - 1} needs {K} doubling levels; at most {MAX_DOUBLING_LEVELS} are supported "
            "(narrow the ε range)"
        )
    return np.asarray(low * 2.0 ** np.arange(K), dtype=np.float64)


def priced_test(
    problem: Problem | ProblemShape, alpha: float, gamma: float, K: int, calibration: str
) -> tuple[float, float, float]:
    """(b, ε_test, clip): each of the K tests' Laplace scale, its price and the level its query is clipped at.

    The exact test clips at α and is priced Δ_R(α)/b; the paper's reads R whole, Δ_R/b, clip ∞
    (docs/mathematics.md#the-doubling-method, docs/mathematics.md#the-exact-doubling-test; docs/mathematics.md, "The
    clipped test"). Price and clip come from the one ``clips_query``.
    """
    scale = doubling_test_scale(alpha, gamma, K, calibration)
    clips = clips_query(calibration)
    return scale, problem.test_sensitivity(alpha, clipped=clips) / scale, alpha if clips else math.inf


@checked(alpha=validate_alpha, gamma=validate_gamma, rng=as_generator, fallback=validate_fallback)
def doubling(
    problem: Problem,
    alpha: float,
    gamma: float,
    eps_min: float,
    eps_max: float,
    *,
    generator: str | HypothesisGenerator | None = None,
    rng: np.random.Generator | int | None = None,
    exact: bool = False,
    calibration: str = "paper",
    noise: str = "laplace",
    delta: float = DEFAULT_DELTA,
    fallback: str = "nothing",
) -> RunResult:
    """The doubling method (Algorithm 4, Thm A.2, docs/mathematics.md#the-doubling-method).

    Level k draws an independent ε_k-DP hypothesis and tests it with the Laplace
    mechanism: halt if −min(R, α) + Lap(b) ≥ −α/2. Ex-post loss at halt k: k·ε_test + (2^k − 1)·ε_1
    with ε_test = Δ_R(α)/b (Laplace) or the (ε, δ)-ex-post k·ε_test + ℰ_BM(ρ_1 + … + ρ_k)
    (Gaussian, see the module doc). When no level passes, nothing is released and the run costs its last level
    (docs/mathematics.md#what-a-failed-run-releases), unless ``fallback="exact"`` (θ* at ε = ∞).

    Parameters are as for ``noise_reduction``; the levels come from ``doubling_levels``.
    ``calibration`` is "paper" (b = α/(2 log(K/γ)), Thm A.2) or "exact" (the K tests
    spend exactly γ, docs/mathematics.md#the-exact-doubling-test); it is recorded in the result.
    """
    started = time.perf_counter()
    levels = doubling_levels(eps_min, eps_max)
    K = levels.size
    gen = make_generator(problem, generator, noise)
    cost = generation_cost(gen, levels, delta, independent=True)
    assert isinstance(rng, np.random.Generator)  # @checked made it one
    sample_rng, test_rng = rng.spawn(2)
    scale, eps_test, clip = priced_test(problem, alpha, gamma, K, calibration)
    query_noise = ThresholdNoise(-alpha / 2, scale, K, test_rng, clip=clip)
    hypotheses = (gen.sample(float(level), sample_rng) for level in cost.levels)
    outcome = sequential_test(hypotheses, cost.label, query_noise, exact)
    steps = outcome.index + 1 if outcome.index is not None else K
    return searched_result(
        method=Doubling.key,
        problem=problem,
        generator=gen,
        calibration=calibration,
        alpha=alpha,
        gamma=gamma,
        outcome=outcome,
        cost=cost,
        eps_test=steps * eps_test,
        started=started,
        fallback=fallback,
    )


class Doubling(Method):
    """The doubling baseline over the same ε range as noise reduction's grid.

    It uses its exact test when noise reduction uses an exact calibration, else the paper's
    (docs/mathematics.md#the-exact-doubling-test), so that the two are compared on equal terms.
    """

    key = "doubling"
    label = "Doubling"
    in_sentence = "doubling"
    color = "#E69F00"
    paper = True
    tests_accuracy = True
    comparison = Comparison(NoiseReduction.key, "Fig. 1c/d", risk_factor=True)

    def run(self, setting: Setting, rng: np.random.Generator, exact: bool = False) -> RunResult:
        low, high = _range(setting)
        return doubling(
            setting.problem,
            setting.alpha,
            setting.gamma,
            low,
            high,
            rng=rng,
            exact=exact,
            calibration=doubling_calibration(setting.options.calibration),
            **setting.search_keywords(),
        )

    def declared_bound(self, setting: Setting) -> tuple[float, float]:
        """(ℰ̄, δ): the ex-post loss of a run that halts at its last level K (docs/mathematics.md#the-doubling-method,
        docs/mathematics.md#the-ex-post-filter); reads no data.

        ℰ̄ = K·ε_test + (2^K − 1)·ε_1 (Laplace, δ = 0) or K·ε_test + ℰ_BM(ρ_1 + … + ρ_K) (Gaussian).
        """
        levels, options, problem = doubling_levels(*_range(setting)), setting.options, setting.problem
        cost = generation_cost(make_generator(problem, options.generator, options.noise), levels, options.delta, True)
        _, eps_test, _ = priced_test(
            problem, setting.alpha, setting.gamma, levels.size, doubling_calibration(options.calibration)
        )
        return cost.bound(levels.size * eps_test)

    def predict(self, shape: ProblemShape, alpha: float, gamma: float, options: SearchOptions) -> Prediction:
        """Tests up to the first level at or above the predicted passing ε (``predicted_generation``), each Δ_R(α)/b."""
        grid = options.grid(shape, alpha)
        levels = doubling_levels(float(grid[0]), float(grid[-1]))
        _, eps_test, _ = priced_test(shape, alpha, gamma, levels.size, doubling_calibration(options.calibration))
        steps = min(
            int(np.searchsorted(levels, predicted_generation(shape, alpha, options.generator))) + 1, levels.size
        )
        return Prediction(steps * eps_test, float(levels[:steps].sum()))


def _range(setting: Setting) -> tuple[float, float]:
    """The ε range doubling spans: that of the setting's grid (docs/mathematics.md#the-epsilon-grid)."""
    grid = setting.grid()
    return float(grid[0]), float(grid[-1])
