"""Guidance when privacy is weak: why, in numbers, and fixes with their predicted ε.

docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#private-hypothesis-generators,
docs/mathematics.md#noise-reduction, docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#calibrations,
docs/mathematics.md#a-public-norm-bound. The ex-post ε of noise reduction has two parts: the test's ε_A = c·Δ_R/α (c =
``calibration_constant(T, γ, preset)``, Δ_R = (R + 1)²/n for ridge, 2R/n for logistic, R the feasible radius: M = 1/√λ
or √(2 ln 2/λ), or a public radius) and the level ε_t at which the released model first passed the test. A fix changes
α, λ, R or n; its predicted median ε scales the measured testing part exactly and the generation part by a scaling law
of the generator:

- output perturbation: the noise is Lap(Δ_θ/ε) and the excess risk is about quadratic in it,
  ½ξᵀ∇²Lξ with E‖ξ‖² = 2p(Δ_θ/ε)², so the level that reaches risk ∝ α is
  ε ∝ Δ_θ·√((κ + pλ)/α), κ the data term's curvature tr(A/n) (ridge; ¼ of it for logistic).
  It is not public; rows with ‖x‖₁ ≤ 1 have ‖x‖₂² between ‖x‖₁²/p and 1, and the lower end,
  κ = 1/p (logistic 1/(4p)), predicted the reruns best (within 5%; the upper end ran 7–12% low);
- covariance perturbation: on small data the level is set by a cliff rather than by α: while
  the noise's spectral norm, about 2√p·(4/ε)/n, exceeds the smallest curvature λ of H, the
  noisy problem is indefinite and its solution lies on the sphere. Below 2ε_c,
  ε_c = 8√p/(nλ), the measured level scales with ε_c (∝ 1/(nλ)) and not with α; above it the
  quadratic law ε ∝ 1/√α holds as for output perturbation. A small public radius R also
  bounds the risk of those sphere solutions and can remove the cliff altogether (then ε_t
  drops far); the prediction keeps the measured level and is an upper estimate (``Fix.at_most``). A larger α
  below the cliff is an upper estimate for the same reason: a sphere solution whose risk the larger α admits
  passes at the first levels (``below_cliff``);
- n·k rows from the same population: every part scales as 1/k (Δ_R, Δ_θ and the noise on
  A/n all carry 1/n).

The radius the runs used is the median of their released radii (M, R₀, a public or a private
radius, docs/mathematics.md#a-public-norm-bound, docs/mathematics.md#a-private-radius). With a private radius
(``radius_mode="private"``) a prediction re-plans it at the new setting with the rule of
docs/mathematics.md#a-private-radius and adds its ε_R; the radius moves with the rule's margin around the norm the
released radii imply (their median less the margin; the rule's guess when none was bought).

These laws were checked against reruns (``benchmarks/bench_guidance.py``). The guidance reads
only public constants (n, p, λ, R, α, γ, T) and the runs' released ε and radii: post-processing,
no further look at the data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from accfirst.erm.generators import CovariancePerturbation, default_generator_name
from accfirst.erm.problem import Problem
from accfirst.erm.radius import radius_margin
from accfirst.erm.shape import ProblemShape
from accfirst.interpret import format_epsilon, format_exp_epsilon, own_delta
from accfirst.mechanisms.calibration import clips_query
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import feasible_problem
from accfirst.methods.radius import RadiusPlan, plan_radius
from accfirst.methods.registry import METHODS, method_keys, method_label
from accfirst.methods.relative import RelativeTarget, scale_plan
from accfirst.validation import validate_alpha, validate_positive

# Guidance appears when the best pure-ε search pays more than this median ε, or a risk factor
# e^ε above RISK_FACTOR (an adversary's 1% prior would pass 50%), or when noise reduction loses.
WEAK_EPSILON = 5.0
RISK_FACTOR = 100.0
# The α fix aims at a median ε a stakeholder calls meaningful privacy.
TARGET_EPSILON = 2.0
ROWS_FACTOR = 4
# The public radius offered: a third of M, rounded up to one significant digit.
RADIUS_SHARE = 1 / 3


@dataclass(frozen=True)
class Fix:
    """One suggested change with the median ε it is predicted to give.

    ``changes`` maps the app's URL keys ("alpha", "lam", "radius", "rmode") to new values (``None``:
    no radius); empty
    for advice the app cannot apply (more rows). ``at_most`` marks a prediction that is an
    upper estimate (a public radius with covariance perturbation: it may remove the cliff).
    """

    title: str
    predicted_eps: float
    sentence: str
    changes: dict[str, float | str | None] = field(default_factory=dict)
    at_most: bool = False


@dataclass(frozen=True)
class Advice:
    """Why the privacy is weak (one sentence from the numbers) and the fixes, for ``method``."""

    method: str
    eps: float
    why: str
    fixes: tuple[Fix, ...]


@dataclass(frozen=True)
class Constants:
    """The public constants a prediction starts from or arrives at."""

    alpha: float
    lam: float
    radius: float
    n: float


def feasible_radius(problem: Problem, lam: float, radius: float | None, mode: str = "none") -> float:
    """R of the feasible set at λ before any private radius (docs/mathematics.md#a-public-norm-bound,
    docs/mathematics.md#the-free-radius).

    The public radius (at most M(λ)) if given, else M(λ); with ``mode`` "free" or "private", at most R₀(λ).
    """
    bound = problem.implied_norm_bound(lam)
    ceiling = bound if radius is None else min(radius, bound)
    return ceiling if mode == "none" else min(ceiling, problem.free_radius(lam))


def runs_radius(problem: Problem, summary_row: pd.Series | dict[str, Any], options: SearchOptions) -> float:
    """The radius the runs of ``summary_row`` used: their median released radius, else the mode's ceiling."""
    used = float(dict(summary_row).get("median_norm_bound", math.nan))
    if math.isfinite(used):
        return used
    return feasible_radius(problem, problem.lam, problem.radius, options.radius_mode)


def _margin(plan: RadiusPlan) -> float:
    return radius_margin(plan.sensitivity, plan.level, plan.beta, plan.noise)


def private_radius(
    problem: Problem,
    summary_row: dict[str, Any],
    gamma: float,
    options: SearchOptions,
    ceiling: float,
    after: Constants,
    planned: tuple[tuple[float, float], tuple[float, float]] | None = None,
) -> tuple[float, float]:
    """(R, ε_R): the private radius a run at ``after`` would use and what it adds, re-planned
    (docs/mathematics.md#a-private-radius).

    The norm is the runs' median radius less their plan's margin when they bought one (scaled with
    R₀ when λ changes), else the rule's guess; the new radius is that norm plus the new plan's
    margin, at most ``ceiling``. A radius is planned at the runs' α and γ, and at ``after.alpha``; ``planned`` gives
    the (α, γ) it was and would be planned at instead (a relative target plans it at κ times the floor, with γ − β_S).
    """
    method = str(summary_row["method"])
    private = dataclasses.replace(options, radius_mode="private")
    (alpha_then, gamma_then), (alpha_next, gamma_next) = planned or (
        (float(summary_row["alpha"]), gamma),
        (after.alpha, gamma),
    )
    shape = ProblemShape(type(problem), max(round(after.n), 1), problem.p, after.lam, ceiling)
    plan = plan_radius(shape, method, alpha_next, gamma_next, private)
    if plan.skipped:
        return ceiling, 0.0
    norm = plan.guess
    if options.radius_mode == "private" and float(summary_row.get("median_eps_radius", 0.0)) > 0:
        start = feasible_radius(problem, problem.lam, problem.radius, "private")
        before = plan_radius(problem.shape.with_radius(start), method, alpha_then, gamma_then, options)
        # The norm keeps its share of the free radius when λ changes (R₀ ∝ 1/√λ).
        shrink = problem.free_radius(after.lam) / problem.free_radius(problem.lam)
        norm = max(runs_radius(problem, summary_row, options) - _margin(before), 0.0) * shrink
    return min(ceiling, norm + _margin(plan)), plan.cost


def cliff_epsilon(p: int, n: float, lam: float) -> float:
    """ε_c = 8√p/(nλ): covariance perturbation's noise on H has spectral norm ≈ λ here (see the module)."""
    return 8 * math.sqrt(p) / (n * lam)


def below_cliff(problem: Problem, summary_row: pd.Series | dict[str, Any], options: SearchOptions) -> bool:
    """Whether the measured generation part sits below covariance perturbation's cliff, 2ε_c (the module's law):
    then a prediction that keeps the measured level is an upper estimate."""
    generator = options.generator or default_generator_name(problem)
    generation = float(dict(summary_row)["median_eps_hypothesis"])
    return generator == CovariancePerturbation.name and generation <= 2 * cliff_epsilon(
        problem.p, problem.n, problem.lam
    )


def generation_factor(problem: Problem, generator: str, measured: float, before: Constants, after: Constants) -> float:
    """How the generation part ε_t scales from ``before`` to ``after`` (the module's laws)."""
    p = problem.p
    rows = before.n / after.n
    if generator == CovariancePerturbation.name:
        cliff = cliff_epsilon(p, before.n, before.lam)
        if measured <= 2 * cliff:
            return cliff_epsilon(p, after.n, after.lam) / cliff
        return rows * math.sqrt(before.alpha / after.alpha * before.lam / after.lam)
    # The data term's curvature: the loss's (logistic: σ' ≤ ¼) per unit of tr(A/n), taken as 1/p (module doc).
    kappa = problem.loss_curvature / p
    constants = type(problem)
    sensitivity = constants.output_sensitivity(after.radius, after.n, p, after.lam) / constants.output_sensitivity(
        before.radius, before.n, p, before.lam
    )
    curvature = math.sqrt((kappa + p * after.lam) / (kappa + p * before.lam))
    return sensitivity * curvature * math.sqrt(before.alpha / after.alpha)


def testing_part(summary_row: pd.Series | dict[str, Any]) -> float:
    """The testing part of a method's ε as measured: noise reduction's ε_A = c·Δ_R/α
    (docs/mathematics.md#exact-calibrations), the doubling tests."""
    return float(dict(summary_row)["median_eps_test"])


def predict_epsilon(
    problem: Problem,
    summary_row: pd.Series | dict[str, Any],
    gamma: float,
    options: SearchOptions,
    *,
    alpha: float | None = None,
    lam: float | None = None,
    radius: float | None = None,
    rows_factor: float = 1.0,
    radius_mode: str | None = None,
    kappa: float | None = None,
) -> float:
    """The predicted median ex-post ε of ``summary_row``'s method after a change (module docstring).

    The preparation's ε (docs/mathematics.md#preparing-the-data-privately) is part of every run's total and stays as it
    was: a change of α, λ or the radius does not touch it, and more rows are assumed prepared at the same ε. At a
    relative target (docs/mathematics.md#a-relative-accuracy-target) the private bound on R(0) is part of it too: at a
    new κ (``kappa``) its ε_S and margin are the plan's, and α = κ·Ŝ moves with κ and with the margin; for the other
    changes ε_S is kept as measured (more rows would lower it: the prediction is then an upper estimate).

    Parameters
    ----------
    problem : the problem the runs were made on (only its public constants are read).
    summary_row : the method's row of ``interpret.summarise_runs`` ("nr" or "doubling").
    gamma, options : the runs' γ and search options.
    alpha, lam, radius : new values (``None`` keeps the runs' own).
    rows_factor : k for n·k rows from the same population.
    radius_mode : a new ``SearchOptions.radius_mode`` (``None`` keeps the runs' own).
    kappa : a new relative target κ (the runs' must be relative); α moves in proportion.
    """
    row = dict(summary_row)
    alpha_now = float(row["alpha"])
    scale_part = float(row.get("median_eps_scale", 0.0))
    planned = None
    if not math.isnan(float(row.get("kappa", math.nan))):
        # Ŝ is a noisy R(0) less the plan's margin: at κ′ the plan (its ε_S and margin) changes and α = κ′·Ŝ′ with
        # Ŝ′ = Ŝ + margin − margin′ (the same R(0), the same typical noise). The radius is planned at κ·floor.
        ceiling = feasible_problem(problem, str(row["method"]), options)
        kappas = (float(row["kappa"]), float(row["kappa"]) if kappa is None else kappa)
        plans = [scale_plan(ceiling, RelativeTarget(k), gamma, options) for k in kappas]
        planned = ((plans[0].kappa * plans[0].floor, plans[0].gamma), (plans[1].kappa * plans[1].floor, plans[1].gamma))
        if kappa is not None:
            scale = alpha_now / plans[0].kappa + plans[0].margin - plans[1].margin
            alpha = kappa * max(scale, plans[1].floor)
            scale_part = plans[1].epsilon
    mode = options.radius_mode if radius_mode is None else radius_mode
    before = Constants(alpha_now, problem.lam, runs_radius(problem, row, options), problem.n)
    lam_new = problem.lam if lam is None else validate_positive("lam", lam)
    radius_new = problem.radius if radius is None else validate_positive("radius", radius)
    after = Constants(
        alpha_now if alpha is None else validate_alpha(alpha),
        lam_new,
        feasible_radius(problem, lam_new, radius_new, mode),
        problem.n * validate_positive("rows_factor", rows_factor),
    )
    radius_part = 0.0
    if mode == "private" and METHODS[str(row["method"])].uses_radius:
        released, radius_part = private_radius(problem, row, gamma, options, after.radius, after, planned)
        after = dataclasses.replace(after, radius=released)
    kind, clips = type(problem), clips_query(options.calibration)
    testing_scale = (
        kind.test_sensitivity_on(after.radius, after.n, after.lam, after.alpha, clipped=clips)
        / kind.test_sensitivity_on(before.radius, before.n, before.lam, before.alpha, clipped=clips)
        * before.alpha
        / after.alpha
    )
    generation = float(row["median_eps_hypothesis"])
    generator = options.generator or default_generator_name(problem)
    return (
        problem.prep_epsilon
        + scale_part
        + radius_part
        + testing_part(row) * testing_scale
        + generation * generation_factor(problem, generator, generation, before, after)
    )


def needs_guidance(summary: pd.DataFrame) -> str | None:
    """The method guidance is about (the best search with no δ of its own), or ``None`` when its privacy is good enough.

    Guidance is needed when that method's median ε exceeds ``WEAK_EPSILON``, its e^ε exceeds
    ``RISK_FACTOR``, or noise reduction pays more than doubling (the ranking flips). The δ a private
    preparation adds to every run (``interpret.own_delta``) does not take a method out; a method whose
    every run at a relative target showed no signal (no α released) learnt nothing to advise on.
    """
    if summary.empty:
        return None
    own = summary.apply(own_delta, axis=1).astype(float)
    searches = summary[
        summary["method"].isin(method_keys(tests_accuracy=True)) & (own == 0) & summary["alpha"].astype(float).notna()
    ]
    if searches.empty:
        return None
    eps = searches.set_index("method")["median_eps"]
    best = str(eps.idxmin())
    nr, doubling = NoiseReduction.key, Doubling.key
    flipped = {nr, doubling} <= set(eps.index) and eps[nr] > eps[doubling]
    weak = eps[best] > WEAK_EPSILON or eps[best] > math.log(RISK_FACTOR)
    return best if weak or flipped else None


def _round_up(value: float) -> float:
    """``value`` rounded up to one significant digit (a public radius a user can state)."""
    power: float = 10 ** math.floor(math.log10(value))
    return math.ceil(value / power - 1e-9) * power


def _next_choice(value: float, choices: Sequence[float], factor: float) -> float:
    """The smallest choice ≥ factor·value (``factor·value`` if none is)."""
    larger = [c for c in sorted(choices) if c >= factor * value * (1 - 1e-9)]
    return larger[0] if larger else factor * value


def _eps_text(eps: float) -> str:
    return f"ε ≈ {format_epsilon(eps)} (e^ε ≈ {format_exp_epsilon(eps)})"


def explain(problem: Problem, summary: pd.DataFrame, method: str, gamma: float, options: SearchOptions) -> str:
    """One sentence, from the numbers, saying why ``method``'s privacy is weak
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#calibrations, docs/mathematics.md#a-public-norm-bound)."""
    rows = summary.set_index("method")
    row = rows.loc[method]
    assert isinstance(row, pd.Series)  # one summary row per method
    alpha, eps, n = float(row["alpha"]), float(row["median_eps"]), problem.n
    radius = runs_radius(problem, {**row, "method": method}, options)
    bound = radius_name(problem, radius, options)
    clips = clips_query(options.calibration)
    formula = problem.test_sensitivity_formula(bound, radius, n, problem.lam, alpha, clipped=clips)
    delta_r = problem.test_sensitivity_on(radius, n, problem.lam, alpha, clipped=clips)
    testing = testing_part(row)
    if not math.isfinite(testing):
        return (
            f"No run of {method_label(method).lower()} halted: every one fell back and released the exact, non-private "
            "model (ε = ∞), so there is no measured ε to predict from. A larger α, a larger λ, a larger ε_max or more "
            "rows give a private model a chance to pass the test."
        )
    if method == NoiseReduction.key:
        c = testing * alpha / delta_r  # the calibration's constant (at γ − β after a private radius)
        test_text = (
            f"the test alone costs ε_A = c·Δ_R/α = {c:.3g} × {delta_r:.3g} / {alpha:.3g} = {format_epsilon(testing)}"
        )
    else:
        test_text = f"its tests alone cost ε = {format_epsilon(testing)}"
    generation = float(row["median_eps_hypothesis"])
    label = method_label(method)
    if method == Doubling.key and NoiseReduction.key in rows.index:
        nr = rows.loc[NoiseReduction.key]
        assert isinstance(nr, pd.Series)
        return (
            f"{NoiseReduction.label} paid more than doubling here (median ε {format_epsilon(float(nr['median_eps']))} "
            f"against {format_epsilon(eps)}): with n = {n:,} rows, Δ_R = {formula} = {delta_r:.3g}, and its "
            f"test's ε_A = {format_epsilon(float(nr['median_eps_test']))} exceeds the {format_epsilon(testing)} that "
            "doubling's few tests cost."
        )
    if testing >= generation:
        return (
            f"n = {n:,} rows is too few for α = {alpha:.3g}: Δ_R = {formula} = {delta_r:.3g} "
            f"({bound} = {radius:.3g}), so {test_text} of {label.lower()}'s median ε = "
            f"{format_epsilon(eps)}."
        )
    return (
        f"With n = {n:,} rows, the private model itself needs ε_t = {format_epsilon(generation)} (median) to reach "
        f"excess risk below α = {alpha:.3g}, and {test_text}: together ε = {format_epsilon(eps)}."
    )


def radius_name(problem: Problem, radius: float, options: SearchOptions) -> str:
    """How a sentence names the runs' radius: M, R₀, or R (a public or a private radius)."""
    if math.isclose(radius, problem.max_norm, rel_tol=1e-9):
        return "M"
    if math.isclose(radius, problem.free_radius(problem.lam), rel_tol=1e-9):
        return "R₀"
    return "R"


def advise(
    problem: Problem,
    alpha: float | None,
    gamma: float,
    options: SearchOptions,
    summary: pd.DataFrame,
    *,
    lam_choices: Sequence[float] = (),
    largest_alpha: float = 0.5,
    kappa_choices: Sequence[float] = (),
    widen: bool = True,
) -> Advice | None:
    """Guidance for the runs of ``summary`` (``interpret.summarise_runs``), or ``None`` when none is needed.

    The fixes: a looser target — a larger α (the smallest that brings the predicted ε to ``TARGET_EPSILON``, else
    4α, at most ``largest_alpha``), or at a relative target a smaller share of the gain (the smallest of
    ``kappa_choices`` above κ that reaches ``TARGET_EPSILON``, else the largest up to 4κ) —, a larger λ (the next of
    ``lam_choices`` from 4λ, else 4λ), a public radius R (a third of M, rounded up; only without one), and more rows
    (×4; advice only). Each fix carries its predicted median ε (``predict_epsilon``).

    Parameters
    ----------
    problem : the runs' problem; alpha, gamma, options : the runs' settings (``alpha`` ``None``: the median α the
        method's runs released, at a relative target).
    summary : one row per method.
    lam_choices : the λ values the app offers.
    largest_alpha : the largest α the app offers.
    kappa_choices : the relative targets κ the app offers.
    widen : offer the looser target; ``False`` where it would buy nothing (predicting zero already meets α, which only
        an evaluation-only look at the data can tell).
    """
    method = needs_guidance(summary)
    if method is None:
        return None
    row = summary[summary["method"] == method].iloc[0]
    alpha = float(row["alpha"]) if alpha is None else alpha
    eps = float(row["median_eps"])
    if not math.isfinite(float(row["median_eps_hypothesis"])):
        return Advice(method, eps, explain(problem, summary, method, gamma, options), ())

    def predict(**change: Any) -> float:  # the keyword changes of predict_epsilon
        return predict_epsilon(problem, row, gamma, options, **change)

    fixes = []
    clips = clips_query(options.calibration)
    radius = runs_radius(problem, row, options)

    def falls(wider: float) -> float:
        """How much the test's ε_A falls from α to ``wider`` (its factor, < 1)."""
        before, after = (
            problem.test_sensitivity_on(radius, problem.n, problem.lam, a, clipped=clips) / a for a in (alpha, wider)
        )
        return after / before

    kappa = float(row.get("kappa", math.nan))
    if widen and math.isnan(kappa) and alpha < largest_alpha:
        wider = min(4 * alpha, largest_alpha)
        if predict(alpha=largest_alpha) <= TARGET_EPSILON:
            low, high = alpha, largest_alpha
            for _ in range(40):  # the prediction decreases in α: bisect for the target
                middle = (low + high) / 2
                low, high = (middle, high) if predict(alpha=middle) > TARGET_EPSILON else (low, middle)
            wider = math.ceil(high * 1000) / 1000
        predicted = predict(alpha=wider)
        at_most = below_cliff(problem, row, options)
        fixes.append(
            Fix(
                f"Accept excess risk α = {wider:g}",
                predicted,
                f"A looser target: the test's ε_A falls ×{falls(wider):.2g} and a noisier model "
                f"passes; predicted median {'at most ' if at_most else ''}{_eps_text(predicted)}.",
                {"alpha": wider},
                at_most,
            )
        )
    larger = sorted(k for k in kappa_choices if k > kappa * (1 + 1e-9)) if widen and not math.isnan(kappa) else []
    if larger:
        # The smallest share offered that reaches the target, else the smallest of at most 4κ (else the next one).
        reaching = [k for k in larger if predict(kappa=k) <= TARGET_EPSILON]
        wider = reaching[0] if reaching else max([k for k in larger if k <= 4 * kappa] or larger[:1])
        predicted = predict(kappa=wider)
        fixes.append(
            Fix(
                f"Keep a smaller share: {1 - wider:.0%} of the gain",
                predicted,
                f"A looser target: α = κ·Ŝ grows ×{wider / kappa:.2g}, the test's ε_A falls ×"
                f"{falls(alpha * wider / kappa):.2g} and a noisier model passes; predicted median {_eps_text(predicted)}.",
                {"kappa": wider},
            )
        )
    lam = _next_choice(problem.lam, lam_choices, 4)
    predicted = predict(lam=lam)
    radius_after = feasible_radius(problem, lam, problem.radius, options.radius_mode)
    changes: dict[str, float | str | None] = {"lam": lam}
    if problem.radius is not None and problem.implied_norm_bound(lam) < problem.radius:
        changes["radius"] = None  # the stated radius would exceed the new M, which then bounds ‖θ‖ alone
    fixes.append(
        Fix(
            f"Regularise more: λ = {lam:g}",
            predicted,
            f"The feasible radius shrinks from {feasible_radius(problem, problem.lam, problem.radius, options.radius_mode):.3g} "
            f"to {radius_after:.3g}, so Δ_R and the noise shrink; the model is more biased (α is measured against the "
            f"more regularised optimum); predicted median {_eps_text(predicted)}.",
            changes,
        )
    )
    radius = _round_up(problem.max_norm * RADIUS_SHARE)
    ceiling = feasible_radius(problem, problem.lam, None, options.radius_mode)
    if problem.radius is None and radius < ceiling:
        predicted = predict(radius=radius)
        at_most = (options.generator or default_generator_name(problem)) == CovariancePerturbation.name
        fixes.append(
            Fix(
                f"State a public bound ‖θ‖ ≤ {radius:g}",
                predicted,
                f"Only if domain knowledge, never this data, says the model's norm is at most {radius:g} (M = "
                f"{problem.max_norm:.3g}): the search's ceiling falls from {ceiling:.3g} to {radius:g}, Δ_R there from "
                f"{problem.test_sensitivity_on(ceiling, problem.n, problem.lam, alpha, clipped=clips):.3g} to "
                f"{problem.test_sensitivity_on(radius, problem.n, problem.lam, alpha, clipped=clips):.3g}"
                + (
                    " (a private radius is still bought below it where it pays)"
                    if options.radius_mode == "private"
                    else ""
                )
                + f"; predicted median {'at most ' if at_most else ''}{_eps_text(predicted)}.",
                {"radius": radius},
                at_most,
            )
        )
    if options.radius_mode != "private" and METHODS[method].uses_radius:
        private = predict(radius_mode="private")
        if private < eps:
            fixes.append(
                Fix(
                    "Buy a tighter radius privately",
                    private,
                    "A small part of the budget releases an upper bound on the model's norm, so the accuracy check "
                    f"costs less; a rule that reads no data chooses its ε and skips it when it would not pay; "
                    f"predicted median {_eps_text(private)}.",
                    {"rmode": "private"},
                )
            )
    predicted = predict(rows_factor=ROWS_FACTOR)
    fixes.append(
        Fix(
            f"Collect {ROWS_FACTOR}× the rows",
            predicted,
            f"With {ROWS_FACTOR * problem.n:,} rows from the same population every part of ε falls about "
            f"{ROWS_FACTOR}×: predicted median {_eps_text(predicted)}.",
        )
    )
    return Advice(method, eps, explain(problem, summary, method, gamma, options), tuple(fixes))
