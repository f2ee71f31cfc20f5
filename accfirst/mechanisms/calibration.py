"""Calibrations of the private tests: InteractiveAboveThreshold and the doubling test.

docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#the-doubling-method,
docs/mathematics.md#calibrations. An above-threshold calibration turns (α, γ, T, Δ_R) into ε_A, the threshold and the
two Laplace noise scales of Algorithm 2 (general Laplace AboveThreshold, docs/mathematics.md#exact-calibrations: ε_A =
Δ_R/b₁ + 2Δ_R/b₂ for threshold noise Lap(b₁), query noise Lap(b₂)). In risk units the test halts at the first t with R_t
+ Z_t ≤ s + Y (s = −W); its exact worst case over hypothesis sequences independent of the noise is [derived,
docs/mathematics.md#exact-calibrations]

    γ_fail(b₁, b₂, s; T) = E_Y[1 − (1 − F_{b₂}(s − α + Y))^T],

reached when every R_t lies just above α. The presets:

- ``theorem``: ε_A = 16Δ_R log(2T/γ)/α, s = α/2, b₂ = 2b₁ (Thm 3.2, 3.4); γ_fail is
  1.7·10⁻⁶ at T = 1000, γ = 0.1: it spends almost none of γ.
- ``paper-code``: the authors' code (docs/mathematics.md#the-authors-code-calibration), b₁ = α/(4 ln(1.5^{3/4}√T/γ)), b₂
  = 2b₁, s = α/4 + ¾b₁ ln 1.5 − ½b₁ ln T; γ_fail = 0.0152 at T = 1000, γ = 0.1.
- ``exact``: s = α/2, b₂ = 2b₁, b₁ the largest scale with γ_fail = γ.
- ``exact-opt``: s = α/2, the ratio r = b₂/b₁ chosen to minimise ε_A.
- ``exact-paper``: b₂ = 2b₁, s chosen to minimise ε_A under the authors' criterion γ_live,
  which also counts a noisy threshold below zero (no hypothesis can pass) as failure.
- ``exact-paper-opt``: the same with r also chosen.

Every preset guarantees P(R_out > α) ≤ γ. All scale with α (b₁, b₂, s ∝ α), so
ε_A = c(T, γ, preset)·Δ_R/α; ``calibration_constant`` returns c, solved once per
(T, γ, preset) and cached.

The doubling test (docs/mathematics.md#the-doubling-method, docs/mathematics.md#the-exact-doubling-test) is calibrated
here too: "paper" keeps Thm A.2's ε_test = 2Δ_R log(K/γ)/α; "exact" spends exactly γ over the K independent tests.
"""

from __future__ import annotations

import functools
import itertools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq, minimize, minimize_scalar

from accfirst.errors import AccFirstError
from accfirst.validation import (
    checked,
    count,
    lookup,
    positive,
    validate_alpha,
    validate_gamma,
    validate_positive,
)


@dataclass(frozen=True)
class AboveThresholdCalibration:
    """ε_A, the threshold W on the query f = −min(R, clip), and the Laplace scales of the two noises.

    A calibration at α clips the query at α (``Problem.test_sensitivity``): a hypothesis with R > α
    then reads α, which the failure analysis's worst case, R just above α, already assumes.
    """

    epsilon: float
    threshold: float
    threshold_scale: float
    query_scale: float
    clip: float = math.inf


class Calibration(ABC):
    """Turns (α, γ, T, Δ_R) into an ``AboveThresholdCalibration``.

    ``clips``: whether its test clips the query at α, so that Δ_R may be the smaller
    ``Problem.test_sensitivity`` [derived]. The exact presets do; "theorem" and "paper-code" keep
    the paper's query and Δ_R, so that the paper's figures reproduce. A calibration that clips must
    return ``clip = α`` from ``calibrate``: the runs price its test with the clipped Δ_R(α).
    """

    name: str
    clips: ClassVar[bool] = False

    @abstractmethod
    def calibrate(self, alpha: float, gamma: float, T: int, sensitivity: float) -> AboveThresholdCalibration:
        """The test's parameters for T queries of sensitivity Δ_R (``Problem.test_sensitivity``) at accuracy (α, γ)."""


class TheoremCalibration(Calibration):
    """Algorithm 3's instantiation: ε_A = 16Δ_R log(2T/γ)/α, W = −α/2 (Thm 3.2, 3.4)."""

    name = "theorem"

    def calibrate(self, alpha: float, gamma: float, T: int, sensitivity: float) -> AboveThresholdCalibration:
        epsilon = 16 * sensitivity * math.log(2 * T / gamma) / alpha
        return AboveThresholdCalibration(
            epsilon=epsilon,
            threshold=-alpha / 2,
            threshold_scale=2 * sensitivity / epsilon,
            query_scale=4 * sensitivity / epsilon,
        )


class PaperCodeCalibration(Calibration):
    """The authors' code's calibration, for reproducing the paper's figures
    (docs/mathematics.md#the-authors-code-calibration)."""

    name = "paper-code"

    def calibrate(self, alpha: float, gamma: float, T: int, sensitivity: float) -> AboveThresholdCalibration:
        b = alpha / (4 * math.log(1.5**0.75 * math.sqrt(T) / gamma))
        halt_below = alpha / 4 + 0.75 * b * math.log(1.5) - 0.5 * b * math.log(T)
        return AboveThresholdCalibration(
            epsilon=2 * sensitivity / b, threshold=-halt_below, threshold_scale=b, query_scale=2 * b
        )


# --- γ_fail by quadrature (docs/mathematics.md#exact-calibrations) -------------------------------------------------

# Y ~ Lap(b₁) beyond ±60b₁ has probability e^{-60} ≈ 1e-26: negligible next to any γ.
TAIL_SCALES = 60.0
# Composite 8-point Gauss–Legendre on panels no wider than the smaller noise scale: the
# integrand is smooth on each panel, and the result agrees with adaptive quadrature to
# about 1e-11 relative (tests check it).
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_UNIT_NODES, _UNIT_WEIGHTS = (1 + _NODES) / 2, _WEIGHTS / 2  # on [0, 1]


def _quadrature(
    low: float, high: float, panel: float, breakpoints: tuple[float, ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights on [low, high], split at the breakpoints, equal panels at most ``panel`` wide."""
    cuts = [low, *sorted(p for p in breakpoints if low < p < high), high]
    nodes, weights = [], []
    for a, b in itertools.pairwise(cuts):
        k = math.ceil((b - a) / panel)
        h = (b - a) / k
        nodes.append(a + h * (np.arange(k)[:, None] + _UNIT_NODES).ravel())
        weights.append(np.tile(h * _UNIT_WEIGHTS, k))
    return np.concatenate(nodes), np.concatenate(weights)


def _log_laplace_survival(x: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
    """log(1 − F_b(x)) for the Laplace cdf F_b, accurate in both tails."""
    below = np.log1p(-0.5 * np.exp(np.minimum(x, 0.0) / scale))
    above = -math.log(2.0) - np.maximum(x, 0.0) / scale
    return np.where(x < 0, below, above)


def _failure(b1: float, b2: float, s: float, T: int, live: bool) -> float:
    """γ_fail(b₁, b₂, s; T) at α = 1, or γ_live when ``live`` (docs/mathematics.md#exact-calibrations)."""
    low, high = -TAIL_SCALES * b1, TAIL_SCALES * b1
    dead = 0.0
    if live:
        # A noisy threshold s + Y below zero counts as failure: P(Y ≤ −s) exactly.
        dead = 0.5 * math.exp(-s / b1) if s > 0 else 1.0 - 0.5 * math.exp(s / b1)
        low = max(low, -s)
        if low >= high:
            return dead
    y, w = _quadrature(low, high, min(b1, b2), (0.0, 1.0 - s))
    density = np.exp(-np.abs(y) / b1) / (2 * b1)
    # 1 − (1 − F)^T in the expm1/log1p form: exact for the tiny F of a well-separated test.
    passes = -np.expm1(T * _log_laplace_survival(s - 1.0 + y, b2))
    return dead + float(w @ (density * passes))


@checked(alpha=validate_alpha, T=count("T (number of queries)", 1))
def worst_case_failure(params: AboveThresholdCalibration, alpha: float, T: int, live: bool = False) -> float:
    """γ_fail: the exact worst-case P(halt with R > α) of a calibrated test (docs/mathematics.md#exact-calibrations).

    The supremum over hypothesis sequences independent of the test's noise; it is reached
    when every R_t lies just above α.

    Parameters
    ----------
    params : the test's threshold W = −s and noise scales b₁ (threshold), b₂ (query).
    alpha : the accuracy target α > 0.
    T : the number of queries, ≥ 1.
    live : return the authors' γ_live instead, which also counts a noisy threshold
        below zero as failure (docs/mathematics.md#exact-calibrations).
    """
    b1 = validate_positive("threshold_scale", params.threshold_scale) / alpha
    b2 = validate_positive("query_scale", params.query_scale) / alpha
    return _failure(b1, b2, -params.threshold / alpha, T, live)


@checked(gamma=validate_gamma)
def failure_probability(calibration: str | Calibration, T: int, gamma: float) -> float:
    """The exact worst-case failure probability γ_fail of a calibration at (T, γ)
    (docs/mathematics.md#exact-calibrations).

    Every preset scales with α, so the value holds at every α. At T = 1000, γ = 0.1:
    theorem 1.7·10⁻⁶, paper-code 0.0152, the exact presets without "paper" γ.

    Parameters
    ----------
    calibration : a preset name (see ``CALIBRATIONS``) or a ``Calibration``.
    T : the number of privacy levels tested, ≥ 1.
    gamma : the failure probability the calibration was asked for, in (0, 1).
    """
    params = resolve_calibration(calibration).calibrate(1.0, gamma, T, 1.0)
    return worst_case_failure(params, 1.0, T)


# --- exact calibrations (docs/mathematics.md#exact-calibrations) -------------------------------------------------

# The ratio r = b₂/b₁ is optimised over [1/8, 8] (the optimum lies near 0.5–1.2 for
# T from 10 to 10⁵), the threshold s/α over (0, 1) (γ_live needs s > 0, and s ≥ α
# would let bad hypotheses pass even without noise).
RATIO_RANGE = (1 / 8, 8.0)
HALT_BELOW_RANGE = (1e-3, 1 - 1e-3)
# Relative accuracy of the solved b₁: γ_fail at the solution is γ to about 1e-10.
ROOT_TOLERANCE = 1e-12


@dataclass(frozen=True)
class ExactSolution:
    """The solved calibration at α = 1: threshold scale b₁, ratio r = b₂/b₁, threshold s."""

    threshold_scale: float
    ratio: float
    halt_below: float

    @property
    def constant(self) -> float:
        """c = ε_A·α/Δ_R = (1 + 2/r)/b₁ (docs/mathematics.md#exact-calibrations)."""
        return (1 + 2 / self.ratio) / self.threshold_scale


def _largest_scale(ratio: float, halt_below: float, T: int, gamma: float, live: bool, guess: float) -> float:
    """b₁* = max{b : γ(b, r·b, s) ≤ γ}, by a bracketing root find in log b (γ increases with b).

    The bracket grows geometrically from ``guess``, so a good guess (a nearby solution,
    while optimising r or s) costs only a few evaluations.
    """

    def excess(log_b: float) -> float:
        b = math.exp(log_b)
        return math.log(max(_failure(b, ratio * b, halt_below, T, live), 1e-300)) - math.log(gamma)

    start = math.log(guess)
    direction = 1.0 if excess(start) <= 0 else -1.0  # towards the root
    near, far, step = start, start, 0.02
    while direction * excess(far) <= 0:
        near, far, step = far, far + direction * step, 2 * step
        if far > start + 40:
            raise AccFirstError(
                f"gamma = {gamma:g} is too large for an exact calibration with T = {T}: even unbounded noise "
                "keeps the failure probability below it; use a smaller gamma or more privacy levels"
            )
    low, high = sorted((near, far))
    return math.exp(brentq(excess, low, high, xtol=ROOT_TOLERANCE, rtol=ROOT_TOLERANCE))


@dataclass(frozen=True)
class ExactCalibration(Calibration):
    """An exact calibration (docs/mathematics.md#exact-calibrations): b₁ solved so that the test's failure is exactly γ.

    Parameters
    ----------
    name : the preset's name.
    ratio : r = b₂/b₁, or ``None`` to choose it (minimising ε_A).
    halt_below : s/α, or ``None`` to choose it (only with ``live``).
    live : bound the authors' γ_live (which also counts a noisy threshold below zero)
        instead of γ_fail.
    """

    name: str
    ratio: float | None
    halt_below: float | None
    live: bool
    clips: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.halt_below is None and not self.live:
            # Under γ_fail alone a lower threshold always helps, down to a test that never halts.
            raise AccFirstError("an exact calibration can choose its threshold only under the live criterion")

    @checked(T=count("T (number of privacy levels)", 1), gamma=validate_gamma)
    def solve(self, T: int, gamma: float) -> ExactSolution:
        """The solution at α = 1, cached per (preset, T, γ)."""
        return _solve(self, T, gamma)

    def calibrate(self, alpha: float, gamma: float, T: int, sensitivity: float) -> AboveThresholdCalibration:
        solution = self.solve(T, gamma)
        b1 = solution.threshold_scale * alpha
        return AboveThresholdCalibration(
            epsilon=solution.constant * sensitivity / alpha,
            threshold=-solution.halt_below * alpha,
            threshold_scale=b1,
            query_scale=solution.ratio * b1,
            clip=alpha if self.clips else math.inf,
        )


@functools.lru_cache(maxsize=512)
def _solve(calibration: ExactCalibration, T: int, gamma: float) -> ExactSolution:
    live = calibration.live
    # The theorem's scale (conservative for s = α/2, r = 2) starts the first root find;
    # each later one starts from the previous solution.
    guess = [1 / (8 * math.log(2 * T / gamma))]

    def solution(ratio: float, halt_below: float) -> ExactSolution:
        guess[0] = _largest_scale(ratio, halt_below, T, gamma, live, guess[0])
        return ExactSolution(guess[0], ratio, halt_below)

    def constant(log_ratio: float, halt_below: float) -> float:
        return solution(math.exp(log_ratio), halt_below).constant

    log_ratios = (math.log(RATIO_RANGE[0]), math.log(RATIO_RANGE[1]))
    ratio, halt_below = calibration.ratio, calibration.halt_below
    if ratio is not None and halt_below is not None:
        return solution(ratio, halt_below)
    if halt_below is not None:
        best = minimize_scalar(
            constant, bounds=log_ratios, args=(halt_below,), method="bounded", options={"xatol": 1e-5}
        )
        return solution(math.exp(best.x), halt_below)
    if ratio is not None:
        best = minimize_scalar(
            lambda s: constant(math.log(ratio), s), bounds=HALT_BELOW_RANGE, method="bounded", options={"xatol": 1e-6}
        )
        return solution(ratio, float(best.x))
    joint = minimize(
        lambda v, *_: constant(v[0], v[1]),  # scipy calls fun(x, *args)
        x0=[math.log(2), 0.2],
        method="Nelder-Mead",
        bounds=[log_ratios, HALT_BELOW_RANGE],
        options={"xatol": 1e-4, "fatol": 1e-5},
    )
    return solution(math.exp(joint.x[0]), float(joint.x[1]))


CALIBRATIONS: dict[str, Calibration] = {
    c.name: c
    for c in (
        TheoremCalibration(),
        PaperCodeCalibration(),
        ExactCalibration("exact", ratio=2.0, halt_below=0.5, live=False),
        ExactCalibration("exact-opt", ratio=None, halt_below=0.5, live=False),
        ExactCalibration("exact-paper", ratio=2.0, halt_below=None, live=True),
        ExactCalibration("exact-paper-opt", ratio=None, halt_below=None, live=True),
    )
}


# The preset with the lowest median total ex-post ε, and no fallbacks, at the paper's settings
# on both built-in synthetic sets (benchmarks/bench_calibration.py; docs/benchmarks.md#calibration).
DEFAULT_CALIBRATION = "exact-paper-opt"


def resolve_calibration(calibration: str | Calibration) -> Calibration:
    """A calibration object from its name (or itself)."""
    if isinstance(calibration, Calibration):
        return calibration
    return lookup("calibration", calibration, CALIBRATIONS)


@checked(T=count("T (number of privacy levels)", 1), gamma=validate_gamma)
def calibration_constant(T: int, gamma: float, preset: str | Calibration) -> float:
    """c = ε_A·α/Δ_R of a calibration at (T, γ) (docs/mathematics.md#exact-calibrations): ε_A = c·Δ_R/α (exact presets
    are solved once and cached).

    Parameters
    ----------
    T : the number of privacy levels, ≥ 1.
    gamma : the failure probability, in (0, 1).
    preset : a name in ``CALIBRATIONS`` or a ``Calibration``.
    """
    return resolve_calibration(preset).calibrate(1.0, gamma, T, 1.0).epsilon


@checked(
    T=count("T (number of privacy levels)", 1),
    gamma=validate_gamma,
    sensitivity=positive("sensitivity"),
    alpha=validate_alpha,
)
def calibrated_epsilon(preset: str | Calibration, T: int, gamma: float, sensitivity: float, alpha: float) -> float:
    """ε_A = c(T, γ, preset)·Δ_R/α: what the test of a noise-reduction search costs at this setting
    (docs/mathematics.md#exact-calibrations).

    Reads no data: T, γ, the calibration, the query sensitivity and α are public. ``sensitivity`` must be that
    of the query the preset's test reads: Δ_R(α) of the query clipped at α for a preset that clips
    (``clips_query(preset)``), Δ_R of the whole excess risk for one that does not — what
    ``Problem.test_sensitivity(alpha, clips_query(preset))`` gives (docs/mathematics.md#the-clipped-test). Given the
    clipped Δ_R(α) for a test that does not clip, the price would be too low; this function cannot tell, so
    pass the problem's own. Each argument is checked (T ≥ 1, γ in (0, 1), a finite sensitivity > 0, α > 0).
    """
    return calibration_constant(T, gamma, preset) * sensitivity / alpha


# --- the doubling test (docs/mathematics.md#the-doubling-method, docs/mathematics.md#the-exact-doubling-test)
# ----------------------------------------------

DOUBLING_CALIBRATIONS = ("paper", "exact")


def doubling_calibration(calibration: str | Calibration) -> str:
    """The doubling test that matches a noise-reduction calibration: "exact" for an exact preset, else "paper"."""
    return "exact" if isinstance(resolve_calibration(calibration), ExactCalibration) else "paper"


def clips_query(calibration: str | Calibration) -> bool:
    """Whether a test of this calibration clips its query at α (``Calibration.clips``).

    "exact" and "paper" also name doubling's two tests: its exact test clips, the paper's does not.
    """
    return resolve_calibration(calibration).clips if calibration != "paper" else False


@checked(alpha=validate_alpha, gamma=validate_gamma, K=count("K (number of doubling levels)", 1))
def doubling_test_scale(alpha: float, gamma: float, K: int, calibration: str = "paper") -> float:
    """The Laplace scale b of each of the K doubling tests, threshold −α/2 (docs/mathematics.md#the-doubling-method,
    docs/mathematics.md#the-exact-doubling-test).

    "paper" (Thm A.2): b = α/(2 log(K/γ)). "exact": each test fails with probability at
    most p = ½e^{−(α/2)/b}; the K tests are independent, so p* = 1 − (1 − γ)^{1/K} and
    b = (α/2)/ln(1/(2p*)). Either way one test costs ε_test = Δ_R/b.
    """
    if calibration == "paper":
        return alpha / (2 * math.log(K / gamma))
    if calibration != "exact":
        raise AccFirstError(
            f"unknown doubling calibration {calibration!r}; choose one of {list(DOUBLING_CALIBRATIONS)}"
        )
    per_test = -math.expm1(math.log1p(-gamma) / K)
    if per_test >= 0.5:
        raise AccFirstError(
            f"gamma = {gamma:g} is too large for an exact doubling test over K = {K} levels "
            "(each test could then be pure noise); use a smaller gamma"
        )
    return (alpha / 2) / -math.log(2 * per_test)


def doubling_failure_probability(alpha: float, gamma: float, K: int, calibration: str = "paper") -> float:
    """The exact worst case of the doubling test: 1 − (1 − ½e^{−(α/2)/b})^K
    (docs/mathematics.md#the-exact-doubling-test)."""
    b = doubling_test_scale(alpha, gamma, K, calibration)
    return -math.expm1(K * math.log1p(-0.5 * math.exp(-alpha / (2 * b))))
