"""A relative accuracy target: keep at least 1 − κ of what the best model gains over predicting nothing
(docs/mathematics.md#a-relative-accuracy-target).

[derived] The user asks for excess risk R(θ) ≤ κ·R(0), R(0) = L(0) − L(θ*) the excess risk of
the all-zero model. R(0) reads the data, so a run first releases a private lower bound Ŝ of it
(``accfirst.mechanisms.lower_bound``; Laplace, or Gaussian under ``noise="gaussian"``) with
sensitivity Δ_S = W/n on the radius in force (``Problem.zero_risk_sensitivity``), sets the
public α = κ·Ŝ and runs the method with failure probability γ − β_S. With probability
≥ 1 − β_S, Ŝ ≤ R(0); the method meets α with probability ≥ 1 − (γ − β_S); together
R(θ) ≤ α ≤ κ·R(0) with probability ≥ 1 − γ. Privacy: ε_S + the method's ex-post loss
(sequential composition; docs/mathematics.md, “A relative accuracy target”).

The rule (``scale_plan``) reads only public quantities — the problem's class, n, λ, the
radius in force, the row bound ρ, κ, γ and the search options (with the test budget) — never the data:

- the *floor*: Ŝ at or below the scale S where c·Δ_R(κS)/(κS) = budget (c the calibration constant
  of the private test at γ − β_S, Δ_R(α) the sensitivity of its query at α = κS,
  ``ProblemShape.test_sensitivity_on``; c·Δ_R/(κ·budget) for a test that does not clip) would make the
  test alone cost more than the test budget (default ε = 10): the data show no signal a private
  model could keep at this budget and n. The run then stops with a ``NoSignal`` result, θ = 0,
  ε_S still charged;
- (ε_S, β_S) minimise the predicted total ε_S + (the test's cost at the scale s_ref − margin) at the
  design point s_ref, the R(0) of data on which the test would cost a tenth of the budget; β_S over
  the shares ``BETA_SHARES`` of γ, ε_S (or ρ_S) over a fine grid.

Gaussian variant [derived]: Ŝ gets N(0, Δ_S²/(2ρ_S)) noise, a ρ_S-zCDP release whose privacy loss
exceeds ε_S = ρ_S + 2√(ρ_S ln(1/δ)) with probability ≤ δ (δ the search options'). The run's own
guarantee is (ε_run(o), δ_run)-ex-post given Ŝ, so by a union bound over the two tails the whole
run is (ε_S + ε_run(o), δ + δ_run)-ex-post: both parts are recorded, δ added to the run's δ.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
from scipy.optimize import brentq

from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.mechanisms.calibration import calibration_constant, clips_query
from accfirst.mechanisms.lower_bound import lower_bound_margin, noise_family, private_lower_bound
from accfirst.methods.options import SearchOptions
from accfirst.methods.radius import radius_step
from accfirst.result import RunResult
from accfirst.teaching.composition import zcdp_to_dp
from accfirst.validation import checked, validate_gamma, validate_probability

#: ε_S is designed for data on which the test at κ would cost this share of the test budget.
DESIGN_SHARE = 0.1
#: β_S is chosen among these shares of γ.
BETA_SHARES = (0.02, 0.05, 0.1, 0.2, 0.3)
# The grid of privacy levels (ε_S, or ρ_S) searched for the least predicted total: 0.5% apart.
LEVEL_GRID = np.geomspace(1e-9, 1e6, 7001)


@dataclass(frozen=True)
class RelativeTarget:
    """The target R(θ) ≤ κ·R(0): keep at least 1 − κ of the loss reduction the best model achieves
    (docs/mathematics.md#a-relative-accuracy-target).

    κ in (0, 1); 0.1 keeps at least 90% of what the best model gains over predicting nothing. The
    test budget that sets the no-signal floor is a search option (``SearchOptions.test_budget``).
    """

    kappa: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "kappa", validate_probability("kappa (the relative target)", self.kappa))

    @property
    def share_kept(self) -> float:
        """1 − κ: the least share of the best model's gain over predicting nothing that the model keeps."""
        return 1.0 - self.kappa


@dataclass(frozen=True)
class ScalePlan:
    """The public decisions of a relative run (docs/mathematics.md#a-relative-accuracy-target): how Ŝ is released and
    what the method gets.

    ``level`` is ε_S (Laplace) or ρ_S (Gaussian); ``epsilon`` and ``delta`` what the release is charged
    (Laplace: ε_S and 0; Gaussian: ρ_S + 2√(ρ_S ln(1/δ)) and δ); ``margin`` the shift that makes Ŝ a lower
    bound with probability 1 − ``beta``; ``floor`` the Ŝ at or below which the data show no signal;
    ``gamma`` the failure probability left for the method (γ − β_S).
    """

    kappa: float
    noise: str
    sensitivity: float
    level: float
    epsilon: float
    delta: float
    beta: float
    margin: float
    floor: float
    gamma: float


@checked(gamma=validate_gamma)
def scale_plan(problem: Problem, target: RelativeTarget, gamma: float, options: SearchOptions) -> ScalePlan:
    """The (ε_S, β_S) and the floor of a relative run on ``problem`` (the radius in force), from public quantities.

    Reads the problem's class, n, λ, radius and row bound only (docs/mathematics.md#a-relative-accuracy-target): two datasets with
    the same public quantities get the same plan. ``gamma`` is the run's γ; a private radius takes its β_R from what is
    left, γ − β_S (``relative_run``).
    """
    return _plan(
        problem.shape,
        target.kappa,
        gamma,
        options.T,
        options.calibration,
        options.noise,
        options.delta,
        options.test_budget,
    )


@functools.lru_cache(maxsize=256)
def _plan(
    shape: ProblemShape,
    kappa: float,
    gamma: float,
    T: int,
    calibration: str,
    noise: str,
    delta: float,
    budget: float,
) -> ScalePlan:
    """``scale_plan`` on the public quantities alone (cached)."""
    clips = clips_query(calibration)
    n, radius, lam = shape.n, shape.norm_bound, shape.lam

    def test_cost(scale: float, constant: float) -> float:
        """c·Δ_R(κS)/(κS): the test's ε at α = κS, for a scale S > 0."""
        alpha = kappa * scale
        return constant * shape.test_sensitivity_on(radius, n, lam, alpha, clipped=clips) / alpha

    def smallest_scale(constant: float, cost: float) -> float:
        """The least scale S at which the test costs at most ``cost`` (its cost decreases in S)."""
        high = constant * shape.risk_sensitivity_on(radius, n) / (kappa * cost)  # without clipping
        if test_cost(high, constant) >= cost:  # clipping gains nothing here
            return high
        log_high = math.log(high)
        return math.exp(brentq(lambda x: test_cost(math.exp(x), constant) - cost, log_high - 60, log_high, xtol=1e-12))

    sensitivity = shape.zero_risk_sensitivity
    design = smallest_scale(calibration_constant(T, gamma, calibration), budget * DESIGN_SHARE)
    gaussian = noise_family(noise).norm == 2
    charged = np.array([zcdp_to_dp(level, delta) for level in LEVEL_GRID]) if gaussian else LEVEL_GRID
    best: tuple[float, float, int] | None = None
    for beta in (share * gamma for share in BETA_SHARES):
        margins = lower_bound_margin(noise, sensitivity, LEVEL_GRID, beta)
        left = design - margins
        usable = left > 0
        total = np.full(LEVEL_GRID.size, np.inf)
        constant = calibration_constant(T, gamma - beta, calibration)
        total[usable] = charged[usable] + [test_cost(float(scale), constant) for scale in left[usable]]
        index = int(np.argmin(total))
        if best is None or total[index] < best[0]:
            best = (float(total[index]), beta, index)
    assert best is not None  # BETA_SHARES is not empty
    _, beta, index = best
    level = float(LEVEL_GRID[index])
    floor = smallest_scale(calibration_constant(T, gamma - beta, calibration), budget)
    return ScalePlan(
        kappa=kappa,
        noise=noise,
        sensitivity=sensitivity,
        level=level,
        epsilon=float(charged[index]),
        delta=delta if gaussian else 0.0,
        beta=beta,
        margin=float(lower_bound_margin(noise, sensitivity, level, beta)),
        floor=floor,
        gamma=gamma - beta,
    )


def release_scale(problem: Problem, plan: ScalePlan, rng: np.random.Generator) -> float:
    """Ŝ = R(0) + noise − margin, P(Ŝ > R(0)) = β_S (docs/mathematics.md#a-relative-accuracy-target): the one place a
    relative run reads R(0)."""
    return private_lower_bound(problem.zero_risk, plan.sensitivity, plan.level, plan.beta, plan.noise, rng)


class _Bill(TypedDict):
    """A relative run's own fields: κ, the released scale, what releasing it cost and the requested γ."""

    kappa: float
    scale: float
    eps_scale: float
    gamma: float


@dataclass(frozen=True)
class NoSignal(RunResult):
    """A relative run that stopped after releasing Ŝ: at this test budget and n no private model could keep the signal.

    Ŝ (``scale``) fell at or below the public ``floor``: α = κ·Ŝ would make the private test cost
    more than the budget (docs/mathematics.md#a-relative-accuracy-target). Nothing is learnt: θ = 0 (predicting
    nothing), ``alpha`` is NaN (none was set), ``eps_total`` is ε_S (plus any preparation or radius) and ``success`` is
    false. ``excess_risk`` and ``r0`` are R(0), evaluation only.
    """

    floor: float = math.nan

    @property
    def message(self) -> str:
        """What the result means, in words a stakeholder can read."""
        return no_signal_message(self.kappa, self.n, self.eps_scale)


def no_signal_message(kappa: float, n: int, eps_scale: float) -> str:
    """The sentence of a ``NoSignal`` result (κ, n and the ε_S it spent)."""
    return (
        f"The data show no signal a private model could keep at this budget and n = {n:,}: the private bound on "
        f"what the best model gains over predicting nothing is so small that keeping {1 - kappa:.0%} of it would "
        f"cost more privacy than the test budget allows. Nothing was learnt; measuring it spent ε = {eps_scale:.3g}."
    )


def relative_run(
    problem: Problem,
    method: str,
    target: RelativeTarget,
    gamma: float,
    rng: np.random.Generator,
    options: SearchOptions,
    exact: bool = False,
) -> RunResult:
    """One run of ``method`` at the relative target κ: release Ŝ, then run at α = κ·Ŝ and γ − β_S
    (docs/mathematics.md#a-relative-accuracy-target).

    ``problem`` carries the radius in force (the ceiling of ``accfirst.methods.pipeline.feasible_problem``).
    With ``radius_mode="private"`` the radius is planned at the smallest α the run can release, κ times
    the floor, and γ − β_S, before Ŝ sets α: every choice stays public and the declared bound holds for
    every Ŝ; the method then runs at α = κ·Ŝ (no smaller) and γ − β_S − β_R.
    The record has ``eps_scale`` = ε_S in its total, ``kappa``, ``scale`` = Ŝ and the released
    ``alpha``, the user's γ, and ``success`` = R(θ) ≤ κ·R(0) (evaluation only). Ŝ at or below the
    plan's floor gives a ``NoSignal`` result.
    """
    started = time.perf_counter()
    plan = scale_plan(problem, target, gamma, options)
    # Planned before Ŝ is released, from public quantities: a method that refuses the setting (e.g. a
    # radius too small for it) refuses here, before ε_S is spent.
    step = radius_step(problem, method, plan.kappa * plan.floor, plan.gamma, options)
    step.declared_bound()
    scale_rng, run_rng = rng.spawn(2)
    scale = release_scale(problem, plan, scale_rng)
    bill = _Bill(kappa=plan.kappa, scale=scale, eps_scale=plan.epsilon, gamma=gamma)
    if scale <= plan.floor:
        return NoSignal.released(
            problem,
            np.zeros(problem.p),
            alpha=math.nan,
            started=started,
            method=method,
            generator="none",
            calibration="none",
            T=0,
            stop_index=None,
            eps_test=0.0,
            eps_hypothesis=0.0,
            eps_total=plan.epsilon,
            fallback=False,
            noise=plan.noise,
            delta=plan.delta,
            floor=plan.floor,
            **bill,
        )
    result = step.run(run_rng, exact, alpha=plan.kappa * scale)
    return dataclasses.replace(
        result,
        eps_total=result.eps_total + plan.epsilon,
        delta=min(result.delta + plan.delta, 1.0),
        success=result.excess_risk <= plan.kappa * result.r0,
        **bill,
    )


def relative_bound(
    problem: Problem, method: str, target: RelativeTarget, gamma: float, options: SearchOptions
) -> tuple[float, float]:
    """(ℰ̄, δ) of a relative run before it runs (docs/mathematics.md#the-ex-post-filter,
    docs/mathematics.md#a-relative-accuracy-target): ε_S plus the method's bound at α = κ·floor.

    A run that goes on has Ŝ above the floor, and the method's bound (a private radius's part included,
    planned at that α) grows as α shrinks; a run that stops pays ε_S alone. Reads no data.
    """
    plan = scale_plan(problem, target, gamma, options)
    bound, delta = radius_step(problem, method, plan.kappa * plan.floor, plan.gamma, options).declared_bound()
    return plan.epsilon + bound, min(delta + plan.delta, 1.0)
