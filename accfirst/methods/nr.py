"""Noise reduction: CovNR / OutputNR tested by InteractiveAboveThreshold (Algorithms 3 and 5,
docs/mathematics.md#noise-reduction, docs/mathematics.md#interactiveabovethreshold).

Hypotheses θ_1, θ_2, … come from one noise-reduction chain and are generated only as they
are tested; the first one that passes the private test is released. With ``noise="gaussian"``
(docs/mathematics.md#brownian-noise-reduction; derived, consistent with Rogers et al. 2023) the hypotheses carry
Gaussian noise on the variance-matched grid T_k = 2(Δ₁/ε_k)² of the same ε grid, one Brownian path, and the generation
part of the ex-post loss is ℰ_BM(ρ_k) of the normal-mixture boundary (ρ̃ = ρ_1): an (ε, δ)-ex-post guarantee with δ
recorded in the result (docs/mathematics.md, “Brownian noise reduction”).
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import ArrayLike

from accfirst.erm.generators import HypothesisGenerator, make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.above_threshold import interactive_above_threshold
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import (
    DEFAULT_CALIBRATION,
    AboveThresholdCalibration,
    Calibration,
    calibrated_epsilon,
    clips_query,
    resolve_calibration,
)
from accfirst.mechanisms.noise_reduction import validate_epsilons
from accfirst.methods.base import (
    Method,
    Prediction,
    Setting,
    generation_cost,
    predicted_generation,
    searched_result,
)
from accfirst.methods.options import SearchOptions, validate_fallback
from accfirst.result import RunResult
from accfirst.validation import as_generator, checked, validate_alpha, validate_gamma


def priced_test(
    calibration: Calibration, problem: Problem, alpha: float, gamma: float, T: int
) -> AboveThresholdCalibration:
    """The test's parameters, priced with Δ_R(α) where the calibration clips its query (``Calibration.clips``).

    Refuses a calibration that says it clips but returns a test that does not clip at α: pricing the
    clipped Δ_R(α) for an unclipped query would under-charge the test (docs/mathematics.md, "The clipped test").
    """
    params = calibration.calibrate(alpha, gamma, T, problem.test_sensitivity(alpha, clipped=calibration.clips))
    if calibration.clips and params.clip != alpha:
        raise AccFirstError(
            f"calibration {calibration.name!r} says its test clips the query at α = {alpha:g} but it returned "
            f"clip = {params.clip:g}; a calibration with clips = True must return clip = α"
        )
    return params


@checked(
    alpha=validate_alpha, gamma=validate_gamma, epsilons=validate_epsilons, rng=as_generator, fallback=validate_fallback
)
def noise_reduction(
    problem: Problem,
    alpha: float,
    gamma: float,
    epsilons: ArrayLike,
    *,
    generator: str | HypothesisGenerator | None = None,
    rng: np.random.Generator | int | None = None,
    calibration: str | Calibration = DEFAULT_CALIBRATION,
    exact: bool = False,
    noise: str = "laplace",
    delta: float = DEFAULT_DELTA,
    fallback: str = "nothing",
) -> RunResult:
    """CovNR / OutputNR: the most private hypothesis on the grid that passes the test.

    Algorithms 3 and 5 (docs/mathematics.md#noise-reduction, docs/mathematics.md#interactiveabovethreshold), or their
    Brownian versions (docs/mathematics.md#brownian-noise-reduction). Hypotheses θ_1, θ_2, … come from one
    noise-reduction chain and are generated only as they are tested; the ex-post loss of halting at t is ε_A + ε_t
    (Laplace) or the (ε, δ)-ex-post ε_A + ℰ_BM(ρ_t) (Gaussian). When no level passes, nothing is released and the
    run costs its top level (docs/mathematics.md#what-a-failed-run-releases), unless ``fallback="exact"``.

    Parameters
    ----------
    problem : the ERM problem.
    alpha, gamma : target excess risk α > 0 and failure probability γ ∈ (0, 1).
    epsilons : ε_1 < … < ε_T (see ``epsilon_grid``).
    generator : "covariance", "output", a generator, or ``None`` for the paper's pairing.
    rng : a Generator or seed; the chain and the test draw from independent children of it.
    calibration : a preset of ``CALIBRATIONS`` (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#exact-calibrations) or a ``Calibration``; the
        default "exact-paper-opt" paid the least total ε on the built-in data.
    exact : solve every tested level (slower; the trace then holds every true excess risk).
        The output is the same either way.
    noise : "laplace" (the paper's) or "gaussian" (Brownian, on the variance-matched grid).
    delta : δ of the Gaussian run's (ε, δ)-ex-post guarantee, in (0, 1); unused for Laplace.
    fallback : "nothing" (the default: no level passed, no model released) or "exact" (the paper's: θ* at ε = ∞).
    """
    started = time.perf_counter()
    eps = np.asarray(epsilons)
    gen = make_generator(problem, generator, noise)
    cost = generation_cost(gen, eps, delta, independent=False)
    calib = resolve_calibration(calibration)
    assert isinstance(rng, np.random.Generator)  # @checked made it one
    chain_rng, test_rng = rng.spawn(2)
    params = priced_test(calib, problem, alpha, gamma, eps.size)
    outcome = interactive_above_threshold(gen.chain(cost.levels, chain_rng), cost.label, params, test_rng, exact)
    return searched_result(
        method=NoiseReduction.key,
        problem=problem,
        generator=gen,
        calibration=calib.name,
        alpha=alpha,
        gamma=gamma,
        outcome=outcome,
        cost=cost,
        eps_test=params.epsilon,
        started=started,
        fallback=fallback,
    )


class NoiseReduction(Method):
    """Noise reduction (Algorithms 3 and 5): the paper's method, on the ε grid of the search options."""

    key = "nr"
    label = "Noise reduction"
    in_sentence = "noise reduction"
    short_label = "NR"
    color = "#0072B2"
    paper = True
    tests_accuracy = True

    def run(self, setting: Setting, rng: np.random.Generator, exact: bool = False) -> RunResult:
        return noise_reduction(
            setting.problem,
            setting.alpha,
            setting.gamma,
            setting.grid(),
            rng=rng,
            calibration=setting.options.calibration,
            exact=exact,
            **setting.search_keywords(),
        )

    def declared_bound(self, setting: Setting) -> tuple[float, float]:
        """(ℰ̄, δ): the ex-post loss of a run that halts at its top level (docs/mathematics.md#the-ex-post-filter);
        reads no data.

        ℰ̄ = ε_A + ε_T (Laplace, δ = 0) or ε_A + ℰ_BM(ρ_T) (Gaussian; ε_A + ℰ_BM(ρ_R + ρ_T) after a Gaussian
        private radius): every outcome but the fallback costs at most this.
        """
        eps, options, problem = setting.grid(), setting.options, setting.problem
        cost = generation_cost(make_generator(problem, options.generator, options.noise), eps, options.delta, False)
        params = priced_test(resolve_calibration(options.calibration), problem, setting.alpha, setting.gamma, eps.size)
        return cost.bound(params.epsilon)

    def predict(self, shape: ProblemShape, alpha: float, gamma: float, options: SearchOptions) -> Prediction:
        """The test's ε_A = c(T, γ)·Δ_R(α)/α exactly, and the predicted level that passes (``predicted_generation``)."""
        return Prediction(
            calibrated_epsilon(
                options.calibration,
                options.T,
                gamma,
                shape.test_sensitivity(alpha, clipped=clips_query(options.calibration)),
                alpha,
            ),
            predicted_generation(shape, alpha, options.generator),
        )
