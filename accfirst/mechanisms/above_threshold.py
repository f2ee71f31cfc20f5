"""InteractiveAboveThreshold: test private hypotheses in order, halt at the first good one.

docs/mathematics.md#interactiveabovethreshold, Algorithm 2. With f_t = −min(R(θ_t), α) (the query clipped at α, whose
sensitivity ``Problem.test_sensitivity`` bounds; docs/mathematics.md, "The clipped test"): draw Ŵ = W + Lap(threshold
scale) once; for t = 1, 2, …, halt at the first t with f_t(D) + Lap(query scale) ≥ Ŵ. The ex-post loss of halting at t
is ε_A + ε_t (Lemma 2.8, Thm 3.2, 3.4). The noises are ideal (real-valued) and each comparison is decided exactly
(``ThresholdNoise``).

The calibration (ε_A, W and the two noise scales) is pluggable; the presets of
``CALIBRATIONS`` live in ``calibration.py`` (docs/mathematics.md#exact-calibrations), each guaranteeing that the
output has R ≤ α with probability ≥ 1 − γ:

- ``theorem``: ε_A = 16Δ_R log(2T/γ)/α, W = −α/2, scales 2Δ_R/ε_A and 4Δ_R/ε_A.
- ``paper-code``: the tighter calibration behind the paper's plots,
  b = α/(4 ln(1.5^{3/4}√T/γ)), scales b and 2b, W = −(α/4 + ¾ b ln 1.5 − ½ b ln T),
  ε_A = 2Δ_R/b.
- ``exact``, ``exact-opt``, ``exact-paper``, ``exact-paper-opt``: the noise scale solved
  numerically so that the exact worst-case failure probability is γ (docs/mathematics.md#exact-calibrations), with
  the ratio of the two scales and/or the threshold chosen to minimise ε_A.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from accfirst.errors import AccFirstError

# CALIBRATIONS is re-exported: code that knew it here before calibration.py existed keeps working.
from accfirst.mechanisms.calibration import CALIBRATIONS, AboveThresholdCalibration  # noqa: F401
from accfirst.mechanisms.ideal_noise import (
    GROW,
    ROUNDOFF,
    Interval,
    UniformBits,
    add,
    draw_laplace,
    exact,
    laplace_fast,
    negate,
    resolve,
    scaled_laplace_exact,
)
from accfirst.result import Trace
from accfirst.validation import as_generator, checked, validate_positive

if TYPE_CHECKING:  # a type only: mechanisms do not depend on the learning problems
    from accfirst.erm.generators import Hypothesis

# A lower bound decides a test only when it clears the threshold by more than rounding.
DECISION_MARGIN = 1e-12


class ThresholdNoise:
    """The Laplace noise of a private test, ideal and compared exactly (docs/mathematics.md, "Noise that float64 cannot betray").

    Test t passes when −min(R_t, clip) + Z_t ≥ W + Y (the query clipped at α: ``Problem.test_sensitivity``):
    Z_t ∼ Lap(query scale) fresh per test, Y ∼ Lap(threshold scale) drawn once
    (InteractiveAboveThreshold) or absent (the doubling test), W the threshold. Only these pass/fail decisions leave the test; each is taken on the ideal
    noise (``accfirst.mechanisms.ideal_noise``), so the test's output has exactly the law its
    privacy proof assumes. ``query_noise`` and ``noisy_threshold`` keep the noises' float64
    midpoints for the trace.
    """

    def __init__(
        self,
        threshold: float,
        query_scale: float,
        size: int,
        rng: np.random.Generator,
        threshold_scale: float | None = None,
        clip: float = math.inf,
    ) -> None:
        self._clip = clip
        self._threshold = Fraction(threshold)
        self._threshold_scale = threshold_scale
        self._shared = draw_laplace(rng, 1) if threshold_scale is not None else None
        self._query_scale = query_scale
        self._queries = draw_laplace(rng, size)
        self._bits = UniformBits(rng)
        shared, shared_rad = (
            (0.0, 0.0)
            if self._shared is None or threshold_scale is None
            else laplace_fast(self._shared, threshold_scale)
        )
        self.query_noise, query_rad = laplace_fast(self._queries, query_scale)
        self.noisy_threshold = np.full(size, threshold + shared)
        # Allowance A_t = Z_t − Y − W: test t passes iff R_t ≤ A_t. Python floats: read one at a time.
        allowance = self.query_noise - self.noisy_threshold
        radius = GROW * (
            query_rad + shared_rad + 2.0 * ROUNDOFF * (np.abs(self.query_noise) + np.abs(self.noisy_threshold))
        )
        self._allowance: list[float] = allowance.tolist()
        self._allowance_rad: list[float] = radius.tolist()

    def cannot_pass(self, t: int, bound: float) -> bool:
        """Whether a certified lower bound on R_t already exceeds every allowance A_t the enclosure admits."""
        bound = min(bound, self._clip)
        highest = self._allowance[t] + self._allowance_rad[t]
        return bound - highest > DECISION_MARGIN * max(1.0, abs(highest))

    def passes(self, t: int, risk: float) -> bool:
        """Whether −min(R_t, clip) + Z_t ≥ W + Y for the ideal noises, R_t = ``risk``."""
        risk = min(risk, self._clip)
        margin = self._allowance_rad[t] + 4.0 * ROUNDOFF * (abs(self._allowance[t]) + abs(risk))
        if risk <= self._allowance[t] - margin:
            return True
        if risk > self._allowance[t] + margin:
            return False
        target = Fraction(risk)

        def clears(lo: Fraction, hi: Fraction) -> bool | None:
            return True if lo >= target else False if hi < target else None

        return resolve(lambda precision: self._exact_allowance(t, precision), clears)

    def _exact_allowance(self, t: int, precision: int) -> Interval | None:
        query = scaled_laplace_exact(
            self._bits, ("query", t), int(self._queries[t]), Fraction(self._query_scale), precision
        )
        if query is None:
            return None
        terms = [query, exact(-self._threshold)]
        if self._shared is not None and self._threshold_scale is not None:
            shared = scaled_laplace_exact(
                self._bits, "threshold", int(self._shared[0]), Fraction(self._threshold_scale), precision
            )
            if shared is None:
                return None
            terms.append(negate(shared))
        return add(*terms)


@dataclass(frozen=True)
class SearchOutcome:
    """Where a sequential test halted (0-based ``index``; ``None`` if it never did) and its trace."""

    index: int | None
    hypothesis: Hypothesis | None
    trace: Trace


def sequential_test(
    hypotheses: Iterable[Hypothesis], epsilons: NDArray[np.float64], noise: ThresholdNoise, exact: bool
) -> SearchOutcome:
    """Halt at the first t with −R(θ_t) + Z_t ≥ W + Y (``noise``).

    Shared by InteractiveAboveThreshold (one noisy threshold) and the doubling
    method (a fixed threshold, fresh noise per test). Unless ``exact``, a level
    whose certified lower bound on R already fails the test is not solved: the
    decision is the same, so the output distribution is unchanged.
    """
    risks, bounds = [], []
    for t, hypothesis in enumerate(hypotheses):
        bound = hypothesis.risk_lower_bound
        bounds.append(bound)
        if not exact and noise.cannot_pass(t, bound):
            risks.append(math.nan)
            continue
        risk = hypothesis.excess_risk
        risks.append(risk)
        if noise.passes(t, risk):
            return SearchOutcome(t, hypothesis, _trace(epsilons, risks, bounds, noise))
    return SearchOutcome(None, None, _trace(epsilons, risks, bounds, noise))


def _trace(epsilons: NDArray[np.float64], risks: list[float], bounds: list[float], noise: ThresholdNoise) -> Trace:
    k = len(risks)
    return Trace(
        level=np.arange(1, k + 1),
        epsilon=np.asarray(epsilons[:k], dtype=np.float64),
        excess_risk=np.asarray(risks, dtype=np.float64),
        risk_lower_bound=np.asarray(bounds, dtype=np.float64),
        query_noise=noise.query_noise[:k].copy(),
        noisy_threshold=noise.noisy_threshold[:k].copy(),
    )


def validate_calibration(calibration: object) -> AboveThresholdCalibration:
    """An ``AboveThresholdCalibration`` with ε_A, both noise scales and the clip > 0 and a finite threshold."""
    if not isinstance(calibration, AboveThresholdCalibration):
        raise AccFirstError(
            f"calibration must be an AboveThresholdCalibration (from Calibration.calibrate); got {type(calibration)}"
        )
    for name in ("epsilon", "threshold_scale", "query_scale"):
        validate_positive(f"the calibration's {name}", getattr(calibration, name))
    if not math.isfinite(calibration.threshold):
        raise AccFirstError(f"the calibration's threshold must be finite; got {calibration.threshold!r}")
    if not calibration.clip > 0:
        raise AccFirstError(f"the calibration's clip must be > 0 (∞: no clip); got {calibration.clip!r}")
    return calibration


@checked(calibration=validate_calibration, rng=as_generator)
def interactive_above_threshold(
    hypotheses: Iterable[Hypothesis],
    epsilons: NDArray[np.float64],
    calibration: AboveThresholdCalibration,
    rng: np.random.Generator | int | None = None,
    exact: bool = False,
) -> SearchOutcome:
    """Algorithm 2 on the excess-risk queries f_t = −min(R(θ_t), clip) of ``hypotheses``
    (docs/mathematics.md#interactiveabovethreshold).

    ``calibration`` must come from ``Calibration.calibrate`` with the sensitivity of the query this test reads
    over every hypothesis's feasible set: Δ_R(α) (``Problem.test_sensitivity(α, clipped=True)``) when it clips at
    ``clip = α``, Δ_R of the whole excess risk when it does not clip (``clip = ∞``;
    docs/mathematics.md#the-clipped-test). Its ε_A is the test's privacy only then; the numbers are checked
    (``validate_calibration``), their provenance cannot be. ``epsilons`` label the levels in the trace (1-D, one
    per hypothesis at most). The threshold noise and all the query noises are drawn up front from ``rng``
    (independent draws: the same distribution as drawing each when needed; ``None`` draws from the operating
    system).
    """
    epsilons = np.asarray(epsilons, dtype=np.float64)
    if epsilons.ndim != 1 or epsilons.size == 0:
        raise AccFirstError(f"epsilons must be a non-empty 1-D array, one per level; got shape {epsilons.shape}")
    assert isinstance(rng, np.random.Generator)  # @checked made it one
    noise = ThresholdNoise(
        calibration.threshold,
        calibration.query_scale,
        epsilons.size,
        rng,
        calibration.threshold_scale,
        calibration.clip,
    )
    return sequential_test(hypotheses, epsilons, noise, exact)
