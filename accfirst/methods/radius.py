"""The private radius of a run: whether to buy one, at what ε_R and β, and the run around it
(docs/mathematics.md#a-private-radius). [derived]

With ``radius_mode="private"`` a method that uses a radius runs on a privately released upper
bound R on ‖θ*‖ below its ceiling C (the free radius R₀ of docs/mathematics.md#the-free-radius, or a smaller public
radius): ``accfirst.erm.radius`` releases it, the method runs on the ball of radius R with
failure probability γ − β, and the run's bill gets the radius's part.

The rule (docs/mathematics.md#a-private-radius) reads public quantities only — the problem's kind, n, p, λ and ceiling,
α, γ and the search options, never ‖θ*‖ or any other statistic of the data. It predicts the
run's total (``Method.predict``) on the radius r = min(C, r₀ + m) that a release with margin m
gives around a stated prior guess r₀ (half the ceiling for ridge, ¾ for logistic: ``GUESS_SHARES``),
adds what the radius costs, and minimises over the
noise scale and β; it skips the radius (ε_R = 0, the run stays on the ceiling) unless the
prediction saves at least ``MIN_SAVING`` of the total without it (e.g. small n).

Privacy: the radius and the method compose sequentially. A Laplace radius adds a pure ε_R to the
ex-post loss. A Gaussian radius at ρ_R (with ``noise="gaussian"``) is accounted jointly with the
run's Brownian loss: the radius's privacy loss and the run's are two pieces of one Brownian
motion in ρ-time, so stopping at level k costs ε_A + ℰ_BM(ρ_R + ρ_k) with the run's δ
(``accfirst.methods.base.generation_cost``). Under a privacy filter the radius is part of the
search's declared bound (``RadiusStep.declared_bound``), not a round of its own: a Gaussian
radius cannot be charged apart from the search's Brownian loss without paying the (ε, δ)
conversion twice, and the radius is then spent only when the search is admitted.

Accuracy: with probability ≥ 1 − β, R ≥ ‖θ*‖ and the ball's minimiser is θ* itself, so the
method's guarantee (≥ 1 − (γ − β)) holds relative to the true θ*: ≥ 1 − γ together. Every
run's recorded excess risk is measured against the ceiling's θ* (evaluation only).
docs/mathematics.md, "A private radius".
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from accfirst.erm.generators import generator_class
from accfirst.erm.problem import Problem
from accfirst.erm.radius import norm_sensitivity, radius_margin, release_radius, smallest_radius
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import GAUSSIAN, brownian_expost_epsilon, variance_matched_rhos
from accfirst.methods.base import Prediction, Setting
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import METHODS
from accfirst.result import RunResult

# The rule's stated prior guess of ‖θ*‖ as a share of the ceiling, per task: public, the same for every dataset.
# R₀ is reached only when every row sits at the maximiser of the bound in docs/mathematics.md#the-free-radius: u = ½
# with |y| = 1 for ridge, which real targets' spread keeps far from; z = 1.28 for logistic, whose z/(1 + e^z) is flat
# around it (≥ 0.19 on [0.5, 2.4]), so that logistic minimisers come much closer to R₀.
GUESS_SHARES = {"ridge": 0.5, "logistic": 0.75}
# The least predicted saving, as a share of the total without a radius, for which the rule buys one.
MIN_SAVING = 0.03
# What the rule tries: β as shares of γ, and the radius's noise scale (Laplace b; Gaussian σ = √2·b,
# the same variance) as shares of the ceiling.
BETA_SHARES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3)
SCALE_SHARES = tuple(np.geomspace(1e-3, 1.0, 61))


@dataclass(frozen=True)
class RadiusPlan:
    """What the radius step does, decided from public quantities only (docs/mathematics.md#a-private-radius).

    ``epsilon`` is ε_R (0: skipped, the method runs on the ceiling), the scale of the radius's
    Laplace noise being Δ_N/ε_R; a Gaussian radius draws noise of the same variance, at
    ρ_R = ε_R²/4 (``level``). ``beta`` is P(R < ‖θ*‖). ``radius`` is the radius the rule predicts
    (around its guess ``guess``), ``cost`` the ε the radius is predicted to add (ε_R for Laplace;
    for Gaussian what it adds to the run's Brownian loss), ``predicted`` the predicted total with
    it and ``predicted_ceiling`` without it (NaN when the method makes no prediction).
    """

    noise: str
    ceiling: float
    sensitivity: float
    guess: float
    epsilon: float = 0.0
    beta: float = 0.0
    radius: float = math.nan
    cost: float = 0.0
    predicted: float = math.nan
    predicted_ceiling: float = math.nan

    @property
    def skipped(self) -> bool:
        return self.epsilon == 0

    @property
    def level(self) -> float:
        """The radius's privacy level: ε_R (Laplace) or ρ_R = ε_R²/4 (Gaussian)."""
        return radius_level(self.epsilon, self.noise)


def radius_level(epsilon: float, noise: str) -> float:
    """The privacy level of a radius whose noise has the variance of Lap(Δ_N/ε_R): ε_R, or ρ_R = ε_R²/4 (Gaussian)."""
    return epsilon**2 / 4 if noise == GAUSSIAN.name else epsilon


def fixed_range(shape: ProblemShape, alpha: float, options: SearchOptions) -> SearchOptions:
    """The options with the ε range fixed from the ceiling's problem, before the radius is released.

    The grid's default ends (1/n, 4E) would otherwise move with the released radius; fixed, the
    run's worst case on any released radius is at most the ceiling's, which a filter admits.
    """
    grid = options.grid(shape, alpha)
    return dataclasses.replace(options, eps_min=float(grid[0]), eps_max=float(grid[-1]))


def _radius_cost(epsilon: float, shape: ProblemShape, prediction: Prediction, options: SearchOptions) -> float:
    """What a radius bought at ε_R = ``epsilon`` adds to a run predicted as ``prediction``.

    Laplace: ε_R. Gaussian (ρ_R = ε_R²/4): ℰ_BM(ρ_R + ρ̂) − ℰ_BM(ρ̂), ρ̂ the level matched to the
    predicted generation ε and the boundary's ρ̃ matched to ε_1 (``options.eps_min``, fixed).
    """
    if options.noise != GAUSSIAN.name:
        return epsilon
    l1, l2 = generator_class(shape, options.generator).sensitivities(shape)
    assert options.eps_min is not None  # fixed by fixed_range
    first, reached = (
        float(variance_matched_rhos([value], l1, l2)[0]) for value in (options.eps_min, prediction.generation)
    )
    joint = brownian_expost_epsilon(np.array([reached, reached + epsilon**2 / 4]), options.delta, rho_ref=first)
    return float(joint[1] - joint[0])


@functools.lru_cache(maxsize=256)
def plan_radius(shape: ProblemShape, method: str, alpha: float, gamma: float, options: SearchOptions) -> RadiusPlan:
    """The private radius's ε_R and β for a run of ``method`` on a ceiling of this ``shape``
    (docs/mathematics.md#a-private-radius).

    ``shape`` is the public constants of the ceiling's problem (its radius is the ceiling C);
    ``options`` carry any stated ``radius_epsilon``/``radius_beta`` (the rule chooses the rest).
    Minimises the predicted total ε_R + ε̂(r; γ − β) over the noise scale and β, with
    r = min(C, r₀ + m), r₀ the task's guess (``GUESS_SHARES``) and m the release's margin, and skips the
    radius unless it saves ``MIN_SAVING`` of the prediction on C. Reads no data; cached.
    """
    ceiling = shape.norm_bound
    sensitivity = norm_sensitivity(shape, ceiling)
    skip = RadiusPlan(options.noise, ceiling, sensitivity, GUESS_SHARES[shape.name] * ceiling)
    options = fixed_range(shape, alpha, options)
    runner = METHODS[method]
    on_ceiling = runner.predict(shape, alpha, gamma, options)
    if on_ceiling is None:
        return skip
    stated = options.radius_epsilon is not None and options.radius_beta is not None
    if options.radius_beta is not None and not options.radius_beta < gamma:
        raise AccFirstError(f"radius_beta ({options.radius_beta:g}) must be smaller than γ ({gamma:g})")
    betas = [options.radius_beta] if options.radius_beta is not None else [share * gamma for share in BETA_SHARES]
    scales = (
        [sensitivity / options.radius_epsilon]
        if options.radius_epsilon is not None
        else [share * ceiling for share in SCALE_SHARES]
    )
    floor = smallest_radius(shape)
    best = dataclasses.replace(skip, predicted=math.inf, predicted_ceiling=on_ceiling.total)
    for beta in betas:
        for scale in scales:
            epsilon = sensitivity / scale
            margin = radius_margin(sensitivity, radius_level(epsilon, options.noise), beta, options.noise)
            radius = min(ceiling, max(skip.guess + margin, floor))
            prediction = runner.predict(shape.with_radius(radius), alpha, gamma - beta, options)
            assert prediction is not None  # a method that predicts on the ceiling predicts on every radius
            cost = _radius_cost(epsilon, shape, prediction, options)
            if cost + prediction.total < best.predicted:
                best = dataclasses.replace(
                    best, epsilon=epsilon, beta=beta, radius=radius, cost=cost, predicted=cost + prediction.total
                )
    if stated or best.predicted <= (1 - MIN_SAVING) * on_ceiling.total:
        return best
    return dataclasses.replace(skip, radius=ceiling, predicted=on_ceiling.total, predicted_ceiling=on_ceiling.total)


class _Bill(TypedDict, total=False):
    """What a bought radius changes in a run's result (``RadiusStep.bill``)."""

    gamma: float
    eps_radius: float
    eps_total: float
    excess_risk: float
    success: bool
    r0: float


@dataclass(frozen=True)
class RadiusStep:
    """The radius a run's method works on, and what it changes in the run (docs/mathematics.md#a-private-radius).

    ``ceiling`` is the problem on the radius the options give (its own, or R₀); ``plan`` the
    private radius's plan (``None`` unless ``radius_mode="private"`` and the method uses a
    radius); ``gamma`` and ``options`` are what the method gets: γ − β and the ε range fixed
    from the ceiling when a radius is bought, the request's otherwise.
    """

    ceiling: Problem
    method: str
    alpha: float
    plan: RadiusPlan | None
    requested_gamma: float
    gamma: float
    options: SearchOptions

    @property
    def bought(self) -> RadiusPlan | None:
        """The plan of the radius released before the run; ``None`` when none is."""
        return self.plan if self.plan is not None and not self.plan.skipped else None

    @property
    def private(self) -> bool:
        """Whether a radius is released before the run."""
        return self.bought is not None

    @property
    def gaussian(self) -> bool:
        return self.bought is not None and self.bought.noise == GAUSSIAN.name

    @property
    def setting(self) -> Setting:
        """What the method is asked on the ceiling: α, the γ left to it and its options."""
        return Setting(self.ceiling, self.alpha, self.gamma, self.options)

    def _joint(self, problem: Problem) -> Problem:
        """``problem`` carrying a Gaussian radius's ρ_R, so that the run's Brownian loss continues from it."""
        plan = self.bought
        return problem.with_spent_rho(plan.level) if plan is not None and plan.noise == GAUSSIAN.name else problem

    def problem(self, rng: np.random.Generator) -> Problem:
        """The problem the method runs on: the ceiling's, or the ball of a radius released now from ``rng``.

        The release draws its noise from ``rng``'s state, like every release: fresh for every run made
        from one generator (docs/mathematics.md#a-private-radius). A method that spawns its streams from
        ``rng``'s seed sequence (noise reduction, doubling) draws the same numbers with or without a radius.
        If the method's worst case on the released radius exceeded the ceiling's (the theory approach's
        ridge bound is not monotone in R), the run stays on the ceiling: a choice made from the release alone.
        """
        plan = self.bought
        if plan is None:
            return self.ceiling
        radius = release_radius(
            float(np.linalg.norm(self.ceiling.theta_star)),
            plan.sensitivity,
            plan.level,
            plan.beta,
            plan.ceiling,
            smallest_radius(self.ceiling),
            plan.noise,
            rng,
        )
        if radius >= plan.ceiling:
            return self._joint(self.ceiling)
        released = self.ceiling.with_radius(radius)
        runner, setting = METHODS[self.method], self.setting
        if runner.declared_bound(setting.on(released))[0] > runner.declared_bound(setting)[0]:
            return self._joint(self.ceiling)
        return self._joint(released)

    def declared_bound(self) -> tuple[float, float]:
        """(ℰ̄, δ) of the whole run before it runs: the radius's part plus the method's worst case on the ceiling.

        Valid for every released radius: the run's ε range is fixed from the ceiling, the test's
        Δ_R grows with the radius, and a radius whose worst case would exceed the ceiling's is not
        used (``problem``). A Gaussian radius is inside the method's Brownian bound.
        """
        bound, delta = METHODS[self.method].declared_bound(self.setting.on(self._joint(self.ceiling)))
        plan = self.bought
        return bound + (plan.epsilon if plan is not None and plan.noise != GAUSSIAN.name else 0.0), delta

    def bill(self, result: RunResult, problem: Problem) -> RunResult:
        """The method's ``result`` on ``problem`` with the radius's part: ε_R in ``eps_radius`` and the total.

        A Gaussian radius's part is already in the result (the joint Brownian loss). γ is the
        requested one, and when the released radius cut θ* off (probability ≤ β) the excess risk
        is measured against the ceiling's θ* (evaluation only).
        """
        plan = self.bought
        if plan is None:
            return result
        changes: _Bill = {"gamma": self.requested_gamma}
        if plan.noise != GAUSSIAN.name:
            changes |= {"eps_radius": plan.epsilon, "eps_total": result.eps_total + plan.epsilon}
        if float(np.linalg.norm(self.ceiling.theta_star)) > problem.norm_bound:
            changes |= {"r0": self.ceiling.zero_risk}
            if result.theta is not None:  # a run that released nothing has no risk to measure
                risk = float(self.ceiling.excess_risk(result.theta))
                changes |= {"excess_risk": risk, "success": risk <= result.alpha}
        return dataclasses.replace(result, **changes)

    def run(self, rng: np.random.Generator, exact: bool = False, alpha: float | None = None) -> RunResult:
        """The method's run on this step's radius (released now from ``rng`` when private), with the radius's part.

        ``alpha`` is the step's own unless given: a relative target plans its radius at the smallest α it can
        release and runs at the released one, which is no smaller (``accfirst.methods.relative``).
        """
        run_on = self.problem(rng)
        setting = Setting(run_on, self.alpha if alpha is None else alpha, self.gamma, self.options)
        return self.bill(METHODS[self.method].run(setting, rng, exact), run_on)


def radius_step(ceiling: Problem, method: str, alpha: float, gamma: float, options: SearchOptions) -> RadiusStep:
    """The ``RadiusStep`` of a run of ``method`` on ``ceiling`` (the problem on the radius the options give)."""
    if options.radius_mode != "private" or not METHODS[method].uses_radius:
        return RadiusStep(ceiling, method, alpha, None, gamma, gamma, options)
    plan = plan_radius(ceiling.shape, method, alpha, gamma, options)
    if plan.skipped:
        return RadiusStep(ceiling, method, alpha, plan, gamma, gamma, options)
    fixed = fixed_range(ceiling.shape, alpha, options)
    return RadiusStep(ceiling, method, alpha, plan, gamma, gamma - plan.beta, fixed)
