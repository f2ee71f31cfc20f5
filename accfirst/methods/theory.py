"""The theory approach: one hypothesis at the ε of the inverted utility theorem
(docs/mathematics.md#the-theory-approach).

No test and no fallback; it promises only the expected excess risk α (Theorems 3.1 and 3.3
inverted), so its γ is recorded for comparison with the other methods and plays no part.
It inverts a Laplace utility theorem and has no Gaussian version. With a relative target κ
(docs/mathematics.md#a-relative-accuracy-target) it runs, like every method, at the privately released α = κ·Ŝ.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np

from accfirst.erm.generators import HypothesisGenerator, make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.erm.theory import theory_epsilon
from accfirst.errors import AccFirstError
from accfirst.methods.base import Comparison, Method, Prediction, Setting
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.result import RunResult
from accfirst.validation import as_generator, checked, validate_alpha, validate_gamma

#: The excess risk α at which the entry points offer the theory approach as the uncertified alternative to a target in
#: R² or accuracy that was refused (docs/mathematics.md#refusals-that-spend-nothing): the paper's, and the explorer's
#: first α. Its ε is set from α and public numbers before the data are read; its R² or accuracy is not promised.
UNCERTIFIED_ALPHA = 0.05

THEORY_NEEDS_LAPLACE = (
    "The theory approach inverts a Laplace utility theorem and has no Gaussian version: deselect it, or choose "
    "Laplace noise."
)


@checked(alpha=validate_alpha, gamma=validate_gamma, rng=as_generator)
def theory_run(
    problem: Problem,
    alpha: float,
    gamma: float = 0.1,
    *,
    generator: str | HypothesisGenerator | None = None,
    rng: np.random.Generator | int | None = None,
) -> RunResult:
    """One hypothesis at ε = E from ``theory_epsilon`` (docs/mathematics.md#the-theory-approach); no test, no fallback.

    Promises only expected excess risk α; ``gamma`` is recorded for comparison
    with the other methods and plays no part.
    """
    started = time.perf_counter()
    gen = make_generator(problem, generator)
    if gen.noise.norm != 1:
        raise AccFirstError(THEORY_NEEDS_LAPLACE)
    epsilon = theory_epsilon(problem, alpha, gen)
    assert isinstance(rng, np.random.Generator)  # @checked made it one
    hypothesis = gen.sample(epsilon, rng)
    return RunResult.untested(
        problem,
        hypothesis.theta,
        alpha=alpha,
        started=started,
        epsilon=epsilon,
        method=Theory.key,
        generator=gen.name,
        calibration="none",
        gamma=gamma,
        noise=gen.noise.name,
    )


class Theory(Method):
    """The theory approach: pure ε fixed in advance, accuracy only in expectation."""

    key = "theory"
    label = "Theory"
    in_sentence = "the theory approach"
    color = "#009E73"
    paper = True
    fixed_epsilon = True
    comparison = Comparison(NoiseReduction.key, "Fig. 1a/b", curve="Theory approach")
    high_probability = False
    noises = frozenset({"laplace"})
    noise_refusal = THEORY_NEEDS_LAPLACE

    def summary_note(self, summary: Mapping[str, object]) -> str:
        note = " The theory approach promises the target only on average, not with probability 1 − γ."
        radius = summary.get("median_eps_radius")
        # docs/mathematics.md#a-private-radius: a bound below ‖θ*‖ costs up to R(0)
        if isinstance(radius, (int, float)) and radius > 0:
            note += (
                " With a bound on the model's size bought privately, which is too small with a small probability β, "
                "that average is within α + β·R(0), R(0) the excess risk of predicting zero."
            )
        kappa = summary.get("kappa")
        if isinstance(kappa, float) and not math.isnan(kappa):
            note += " With a relative target it aims at the privately released α = κ·Ŝ, like the other methods."
        return note

    def run(self, setting: Setting, rng: np.random.Generator, exact: bool = False) -> RunResult:
        return theory_run(setting.problem, setting.alpha, setting.gamma, generator=setting.options.generator, rng=rng)

    def declared_bound(self, setting: Setting) -> tuple[float, float]:
        return theory_epsilon(setting.problem, setting.alpha, setting.options.generator), 0.0

    def predict(self, shape: ProblemShape, alpha: float, gamma: float, options: SearchOptions) -> Prediction:
        """Its ε = E exactly: no test."""
        return Prediction(0.0, theory_epsilon(shape, alpha, options.generator))
