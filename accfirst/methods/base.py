"""The small base every accuracy-first method stands on: what it is, what it can do, how it runs.

A method (noise reduction, doubling, the theory approach, the Gibbs posterior, docs/mathematics.md#the-theory-approach,
docs/mathematics.md#noise-reduction, docs/mathematics.md#interactiveabovethreshold,
docs/mathematics.md#the-doubling-method, docs/mathematics.md#brownian-noise-reduction,
docs/mathematics.md#the-gibbs-posterior) is one class in one file of this package, registered once in
``accfirst.methods.registry``. Everything the rest of the package and the app need to know about a method comes from its
class: its run, the bound it declares to a privacy filter before it runs (docs/mathematics.md#the-ex-post-filter), its
capabilities (does it test accuracy privately? is its ε fixed in advance? which noise does it accept? does its guarantee
hold with probability 1 − γ?), its label and colour, how the paper's figures compare it (``Comparison``), and the checks
it makes of the search options.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.generators import NOISES, CovariancePerturbation, HypothesisGenerator, generator_class
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.above_threshold import SearchOutcome
from accfirst.mechanisms.brownian import brownian_expost_epsilon, variance_matched_rhos
from accfirst.methods.options import SearchOptions
from accfirst.result import RunResult
from accfirst.validation import validate_delta


@dataclass(frozen=True)
class Setting:
    """What one run is asked: the problem, the target excess risk α, the failure probability γ and the options.

    Built at the boundary from validated values (``accfirst.methods.pipeline``); a method reads it as it is.
    """

    problem: Problem
    alpha: float
    gamma: float
    options: SearchOptions

    def grid(self) -> NDArray[np.float64]:
        """The ε grid of this setting (docs/mathematics.md#the-epsilon-grid); doubling spans the same range."""
        return self.options.grid(self.problem, self.alpha)

    def on(self, problem: Problem) -> Setting:
        """The same request on another problem (a released radius, the ceiling)."""
        return dataclasses.replace(self, problem=problem)

    def search_keywords(self) -> dict[str, Any]:
        """The options a searching method passes on to its run."""
        options = self.options
        return {
            "generator": options.generator,
            "noise": options.noise,
            "delta": options.delta,
            "fallback": options.fallback,
        }


@dataclass(frozen=True)
class Comparison:
    """How the paper's Fig. 1 sets a method against its partner (noise reduction): what a figure needs of it.

    ``partner`` is the key of the method it is drawn against; ``note`` what the comparison is, the paper's panels
    ("Fig. 1a/b") or what a reader must know of its guarantee ("ε, δ"); ``curve`` names the curve of α it is drawn as
    when its ε is fixed in advance from public quantities (the theory approach's E(α)), empty when its runs are drawn
    as a band; ``risk_factor`` asks the report for the comparison in e^ε too; ``delta_caveat`` says that its figures
    set an (ε, δ) guarantee beside pure ones, which the figure and the report then explain.
    """

    partner: str
    note: str
    curve: str = ""
    risk_factor: bool = False
    delta_caveat: bool = False


class Method(ABC):
    """One accuracy-first method: its capabilities as class attributes, its run and its declared bound.

    Subclasses set every class attribute below and implement ``run`` and ``declared_bound``;
    ``check`` refuses search options the method cannot honour (before any work starts).
    """

    #: The key of the method in frames, links and the command line ("nr").
    key: ClassVar[str]
    #: Its display name ("Noise reduction") and how a sentence names it ("noise reduction").
    label: ClassVar[str]
    in_sentence: ClassVar[str]
    #: A shorter name where room is scarce (a phone's table), or "" for ``in_sentence``.
    short_label: ClassVar[str] = ""
    #: The colour every figure gives it (colour-blind-safe, distinct in greyscale).
    color: ClassVar[str]
    #: One of the paper's three methods: selected by default in the app and on the command line.
    paper: ClassVar[bool] = False
    #: Tests its hypotheses privately: its ε has a testing part, and it has a search to show.
    tests_accuracy: ClassVar[bool] = False
    #: Its ε is set before it runs, not paid after it (no ex-post accounting).
    fixed_epsilon: ClassVar[bool] = False
    #: Meets α with probability ≥ 1 − γ (the theory approach promises only the expected excess risk).
    high_probability: ClassVar[bool] = True
    #: Its privacy or its test depends on the radius of the feasible set (docs/mathematics.md#a-public-norm-bound,
    #: docs/mathematics.md#a-private-radius): it runs on the radius the search options choose. The Gibbs posterior
    #: keeps the problem's own.
    uses_radius: ClassVar[bool] = True
    #: The noise families it can draw its hypotheses with (``SearchOptions.noise``); empty when the
    #: search options' noise does not apply to it (it draws from a distribution of its own).
    noises: ClassVar[frozenset[str]] = frozenset(NOISES)
    #: Why it refuses the noises it does not accept.
    noise_refusal: ClassVar[str] = ""
    #: How Fig. 1 compares it with noise reduction; ``None`` when Fig. 1 does not (noise reduction itself).
    comparison: ClassVar[Comparison | None] = None
    #: Where its (ε, δ) figures come from, for a reader of a figure with δ > 0.
    delta_note: ClassVar[str] = (
        "(ε, δ)-ex-post privacy of Brownian noise reduction: derived; consistent with Rogers et al. 2023."
    )

    def summary_note(self, summary: Mapping[str, object]) -> str:
        """Sentences (each with a leading space) that a stakeholder needs about one summary row of this method.

        ``summary`` is a row of ``accfirst.interpret.summarise_runs``; empty by default.
        """
        return ""

    def delta_refusal(self, task: str, delta: float) -> str | None:
        """Why it cannot run on a ``task`` ("ridge", "logistic") problem with δ = ``delta`` (``None``: it can)."""
        return None

    def check(self, options: SearchOptions) -> None:
        """Raise ``AccFirstError`` if this method cannot run with ``options``."""
        if self.noises and options.noise not in self.noises:
            raise AccFirstError(self.noise_refusal)

    @abstractmethod
    def run(self, setting: Setting, rng: np.random.Generator, exact: bool = False) -> RunResult:
        """One run of ``setting`` (its α, γ and options validated at the boundary); ``exact`` solves every tested level."""

    @abstractmethod
    def declared_bound(self, setting: Setting) -> tuple[float, float]:
        """(ℰ̄, δ): the most a run can lose unless it falls back, known before it runs
        (docs/mathematics.md#the-ex-post-filter). Reads no data."""

    def predict(self, shape: ProblemShape, alpha: float, gamma: float, options: SearchOptions) -> Prediction | None:
        """A prediction of a run's median ε on a problem of this ``shape``, from public quantities only
        (docs/mathematics.md#a-private-radius).

        The private radius's rule compares it across radii; ``None`` (the default) when the
        method makes none, and the rule then spends nothing on a radius.
        """
        return None

    def __repr__(self) -> str:
        return f"<method {self.key!r}: {self.label}>"


@dataclass(frozen=True)
class Prediction:
    """A predicted median ε of a run, in its testing and generation parts (docs/mathematics.md#a-private-radius); reads
    no data."""

    test: float
    generation: float

    @property
    def total(self) -> float:
        return self.test + self.generation


# The level at which the first private model passes the test, predicted from public constants only
# (docs/mathematics.md, "A private radius"): output perturbation's excess risk ½ξᵀHξ with
# E‖ξ‖² = 2p(Δ_θ/ε)² and tr H/p ≈ (κ + pλ)/p reaches HALT_SHARE·α at ε = Δ_θ·√((κ + pλ)/(HALT_SHARE·α)),
# κ the loss's curvature over p; covariance perturbation halts near its cliff, COVARIANCE_FACTOR × 8√p/(nλ).
# Fitted to noise reduction on the built-in data at R₀ (HALT_SHARE 0.19–0.40, COVARIANCE_FACTOR 0.8–2.2).
HALT_SHARE = 0.3
COVARIANCE_FACTOR = 1.5


def predicted_generation(shape: ProblemShape, alpha: float, generator: str | None) -> float:
    """ε_t at which a private model of ``generator`` first passes a test at α, predicted (see the constants above)."""
    p = shape.p
    if generator_class(shape, generator) is CovariancePerturbation:
        return COVARIANCE_FACTOR * 8 * math.sqrt(p) / (shape.n * shape.lam)
    curvature = shape.kind.loss_curvature / p
    return shape.theta_sensitivity * math.sqrt((curvature + p * shape.lam) / (HALT_SHARE * alpha))


@dataclass(frozen=True)
class GenerationCost:
    """The noise levels of a run's hypotheses and what each costs (docs/mathematics.md#noise-reduction,
    docs/mathematics.md#the-doubling-method, docs/mathematics.md#brownian-noise-reduction).

    ``levels`` go to the generator (ε_t, or ρ_t variance-matched to ε_t for Gaussian
    noise); ``label`` is each level's own ε (ε_t, or ℰ_BM(ρ_t)), the trace's x axis;
    ``loss`` is the generation part of the ex-post loss when halting at each level;
    ``delta`` the δ of the guarantee (0 for Laplace); ``radius`` the part a Gaussian private
    radius adds to the joint loss at each level (0 without one).
    """

    levels: NDArray[np.float64]
    label: NDArray[np.float64]
    loss: NDArray[np.float64]
    delta: float
    radius: NDArray[np.float64]

    def bound(self, eps_test: float) -> tuple[float, float]:
        """(ℰ̄, δ) of a run that halts at its last level after tests costing ``eps_test``
        (docs/mathematics.md#the-ex-post-filter)."""
        return eps_test + float(self.loss[-1] + self.radius[-1]), self.delta


def generation_cost(
    generator: HypothesisGenerator, epsilons: NDArray[np.float64], delta: float, independent: bool
) -> GenerationCost:
    """The ``GenerationCost`` of ``generator`` on the ε grid ``epsilons``.

    ``independent`` levels (doubling) add up: Σ_{j≤k} ε_j for Laplace, ℰ_BM(Σ_{j≤k} ρ_j)
    for Gaussian; otherwise (one noise-reduction chain) level k costs ε_k or ℰ_BM(ρ_k).

    When a Gaussian release spent ρ_R on the rows before the run (``Problem.spent_rho``, a private
    radius), the run's Brownian privacy loss continues from it: the joint loss at level k is
    ℰ_BM(ρ_R + ρ_k) with the same boundary, and ``radius`` holds what the earlier release adds,
    ℰ_BM(ρ_R + ρ_k) − ℰ_BM(ρ_k) [derived; docs/mathematics.md, "A private radius"]. The boundary's ρ̃ = ρ_1
    is fixed before that release: ρ_1 matches ε_1 through Δ₂/Δ₁, which no radius changes.
    """
    spent = generator.problem.spent_rho
    if generator.noise.norm == 1:
        if spent:
            raise AccFirstError("a run with Laplace noise cannot continue a Gaussian release's Brownian clock")
        loss = np.cumsum(epsilons) if independent else epsilons
        return GenerationCost(epsilons, epsilons, loss, 0.0, np.zeros_like(loss))
    delta = validate_delta(delta)
    rhos = variance_matched_rhos(epsilons, generator.sensitivity, generator.l2_sensitivity)
    clock = np.cumsum(rhos) if independent else rhos
    own = brownian_expost_epsilon(rhos, delta, rho_ref=rhos[0])
    loss = brownian_expost_epsilon(clock, delta, rho_ref=rhos[0])
    radius = brownian_expost_epsilon(spent + clock, delta, rho_ref=rhos[0]) - loss if spent else np.zeros_like(loss)
    return GenerationCost(rhos, own, loss, delta, radius)


def searched_result(
    *,
    method: str,
    problem: Problem,
    generator: HypothesisGenerator,
    calibration: str,
    alpha: float,
    gamma: float,
    outcome: SearchOutcome,
    cost: GenerationCost,
    eps_test: float,
    started: float,
    fallback: str,
) -> RunResult:
    """The record of a run whose hypotheses went through a private test: the halting one, or what a fallback releases.

    Halting at level t costs ``eps_test`` plus the generation part ``cost.loss`` at t and what a Gaussian
    private radius adds there (``cost.radius``) (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#the-doubling-method, docs/mathematics.md#brownian-noise-reduction). When no level passed,
    ``fallback`` "nothing" releases nothing at the declared top, the cost of halting at the last level
    (docs/mathematics.md#what-a-failed-run-releases); "exact" releases θ* at ε = ∞ (the paper's Algorithm 3).
    """
    halted = outcome.index is not None
    last = outcome.index if outcome.index is not None else -1
    eps_radius = float(cost.radius[last])
    fields: dict[str, Any] = {
        "method": method,
        "generator": generator.name,
        "calibration": calibration,
        "gamma": gamma,
        "T": cost.levels.size,
        "stop_index": last + 1 if halted else None,
        "eps_test": eps_test,
        "eps_radius": eps_radius,
        "fallback": not halted,
        "trace": outcome.trace,
        "noise": generator.noise.name,
        "delta": cost.delta,
    }
    if not halted and fallback != "exact":
        top, _ = cost.bound(eps_test)
        return RunResult.nothing(
            problem, alpha=alpha, started=started, eps_hypothesis=float(cost.loss[last]), eps_total=top, **fields
        )
    theta = problem.theta_star.copy() if outcome.hypothesis is None else outcome.hypothesis.theta
    eps_hypothesis = float(cost.loss[last]) if halted else math.inf
    return RunResult.released(
        problem,
        theta,
        alpha=alpha,
        started=started,
        eps_hypothesis=eps_hypothesis,
        eps_total=eps_test + eps_hypothesis + eps_radius,
        **fields,
    )
