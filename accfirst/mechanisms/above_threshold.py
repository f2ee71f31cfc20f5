"""InteractiveAboveThreshold: test private hypotheses in order, halt at the first good one.

SPEC §6, Algorithm 2. With f_t = −R(θ_t): draw Ŵ = W + Lap(threshold scale) once;
for t = 1, 2, …, halt at the first t with f_t(D) + Lap(query scale) ≥ Ŵ. The ex-post
loss of halting at t is ε_A + ε_t (Lemma 2.8, Thm 3.2, 3.4).

The calibration (ε_A, W and the two noise scales) is pluggable; the presets of
``CALIBRATIONS`` live in ``calibration.py`` (SPEC §12.3), each guaranteeing that the
output has R ≤ α with probability ≥ 1 − γ:

- ``theorem``: ε_A = 16Δ_R log(2T/γ)/α, W = −α/2, scales 2Δ_R/ε_A and 4Δ_R/ε_A.
- ``paper-code``: the tighter calibration behind the paper's plots,
  b = α/(4 ln(1.5^{3/4}√T/γ)), scales b and 2b, W = −(α/4 + ¾ b ln 1.5 − ½ b ln T),
  ε_A = 2Δ_R/b.
- ``exact``, ``exact-opt``, ``exact-paper``, ``exact-paper-opt``: the noise scale solved
  numerically so that the exact worst-case failure probability is γ (SPEC §12.2), with
  the ratio of the two scales and/or the threshold chosen to minimise ε_A.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

# CALIBRATIONS is re-exported: code that knew it here before calibration.py existed keeps working.
from accfirst.mechanisms.calibration import CALIBRATIONS, AboveThresholdCalibration  # noqa: F401
from accfirst.result import Trace

if TYPE_CHECKING:  # a type only: mechanisms do not depend on the learning problems
    from accfirst.erm.generators import Hypothesis

# A lower bound decides a test only when it clears the threshold by more than rounding.
DECISION_MARGIN = 1e-12


@dataclass(frozen=True)
class SearchOutcome:
    """Where a sequential test halted (0-based ``index``; ``None`` if it never did) and its trace."""

    index: int | None
    hypothesis: Hypothesis | None
    trace: Trace


def sequential_test(
    hypotheses: Iterable[Hypothesis],
    epsilons: NDArray[np.float64],
    query_noise: NDArray[np.float64],
    noisy_threshold: NDArray[np.float64],
    exact: bool,
) -> SearchOutcome:
    """Halt at the first t with −R(θ_t) + query_noise[t] ≥ noisy_threshold[t].

    Shared by InteractiveAboveThreshold (one noisy threshold) and the doubling
    method (a fixed threshold, fresh noise per test). Unless ``exact``, a level
    whose certified lower bound on R already fails the test is not solved: the
    decision is the same, so the output distribution is unchanged.
    """
    risks, bounds = [], []
    for t, hypothesis in enumerate(hypotheses):
        # Halting needs R ≤ query_noise − threshold.
        allowance = query_noise[t] - noisy_threshold[t]
        bound = hypothesis.risk_lower_bound
        bounds.append(bound)
        if not exact and bound - allowance > DECISION_MARGIN * max(1.0, abs(allowance)):
            risks.append(math.nan)
            continue
        risk = hypothesis.excess_risk
        risks.append(risk)
        if -risk + query_noise[t] >= noisy_threshold[t]:
            return SearchOutcome(t, hypothesis, _trace(epsilons, risks, bounds, query_noise, noisy_threshold))
    return SearchOutcome(None, None, _trace(epsilons, risks, bounds, query_noise, noisy_threshold))


def _trace(epsilons, risks, bounds, query_noise, noisy_threshold) -> Trace:
    k = len(risks)
    return Trace(
        level=np.arange(1, k + 1),
        epsilon=np.asarray(epsilons[:k], dtype=np.float64),
        excess_risk=np.asarray(risks, dtype=np.float64),
        risk_lower_bound=np.asarray(bounds, dtype=np.float64),
        query_noise=np.asarray(query_noise[:k], dtype=np.float64),
        noisy_threshold=np.asarray(noisy_threshold[:k], dtype=np.float64),
    )


def interactive_above_threshold(
    hypotheses: Iterable[Hypothesis],
    epsilons: NDArray[np.float64],
    calibration: AboveThresholdCalibration,
    rng: np.random.Generator,
    exact: bool = False,
) -> SearchOutcome:
    """Algorithm 2 on the excess-risk queries f_t = −R(θ_t) of ``hypotheses`` (SPEC §6).

    The threshold noise and all T query noises are drawn up front from ``rng``
    (independent draws: the same distribution as drawing each when needed).
    """
    T = epsilons.size
    noisy_threshold = calibration.threshold + rng.laplace(0.0, calibration.threshold_scale)
    query_noise = rng.laplace(0.0, calibration.query_scale, size=T)
    return sequential_test(hypotheses, epsilons, query_noise, np.full(T, noisy_threshold), exact)
