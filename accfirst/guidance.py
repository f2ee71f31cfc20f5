"""Guidance when privacy is weak: why, in numbers, and fixes with their predicted ε.

SPEC §2, §3, §5, §6, §12, §13. The ex-post ε of noise reduction has two parts: the test's
ε_A = c·Δ_R/α (c = ``calibration_constant(T, γ, preset)``, Δ_R = (R + 1)²/n for ridge, 2R/n
for logistic, R the feasible radius: M = 1/√λ or √(2 ln 2/λ), or a public radius) and the
level ε_t at which the released model first passed the test. A fix changes α, λ, R or n;
its predicted median ε scales the measured testing part exactly and the generation part by
a scaling law of the generator:

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
  drops far); the prediction keeps the measured level and is an upper estimate (``Fix.at_most``);
- n·k rows from the same population: every part scales as 1/k (Δ_R, Δ_θ and the noise on
  A/n all carry 1/n).

These laws were checked against reruns (``benchmarks/bench_guidance.py``). The guidance reads
only public constants (n, p, λ, R, α, γ, T) and the runs' released ε: post-processing, no
further look at the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from accfirst.erm.generators import CovariancePerturbation, default_generator_name
from accfirst.erm.problems import Problem
from accfirst.interpret import format_epsilon, format_exp_epsilon
from accfirst.mechanisms.calibration import calibrated_epsilon, calibration_constant
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import method_keys, method_label
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

    ``changes`` maps the app's URL keys ("alpha", "lam", "radius") to new values (``None``:
    no radius); empty
    for advice the app cannot apply (more rows). ``at_most`` marks a prediction that is an
    upper estimate (a public radius with covariance perturbation: it may remove the cliff).
    """

    title: str
    predicted_eps: float
    sentence: str
    changes: dict[str, float | None] = field(default_factory=dict)
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


def feasible_radius(problem: Problem, lam: float, radius: float | None) -> float:
    """R of the feasible set at λ: the public radius (at most M(λ)) if given, else M(λ) (SPEC §13)."""
    bound = problem.implied_norm_bound(lam)
    return bound if radius is None else min(radius, bound)


def cliff_epsilon(p: int, n: float, lam: float) -> float:
    """ε_c = 8√p/(nλ): covariance perturbation's noise on H has spectral norm ≈ λ here (see the module)."""
    return 8 * math.sqrt(p) / (n * lam)


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


def testing_part(problem: Problem, summary_row: pd.Series | dict, gamma: float, options: SearchOptions) -> float:
    """The testing part of a method's ε: noise reduction's ε_A = c·Δ_R/α (SPEC §12.3), else its measured one."""
    row = dict(summary_row)
    if row["method"] == NoiseReduction.key:
        return calibrated_epsilon(options.calibration, options.T, gamma, problem.query_sensitivity, float(row["alpha"]))
    return float(row["median_eps_test"])


def predict_epsilon(
    problem: Problem,
    summary_row: pd.Series | dict,
    gamma: float,
    options: SearchOptions,
    *,
    alpha: float | None = None,
    lam: float | None = None,
    radius: float | None = None,
    rows_factor: float = 1.0,
) -> float:
    """The predicted median ex-post ε of ``summary_row``'s method after a change (module docstring).

    Parameters
    ----------
    problem : the problem the runs were made on (only its public constants are read).
    summary_row : the method's row of ``interpret.summarise_runs`` ("nr" or "doubling").
    gamma, options : the runs' γ and search options.
    alpha, lam, radius : new values (``None`` keeps the runs' own).
    rows_factor : k for n·k rows from the same population.
    """
    row = dict(summary_row)
    alpha_now = float(row["alpha"])
    before = Constants(alpha_now, problem.lam, problem.norm_bound, problem.n)
    lam_new = problem.lam if lam is None else validate_positive("lam", lam)
    radius_new = problem.radius if radius is None else validate_positive("radius", radius)
    after = Constants(
        alpha_now if alpha is None else validate_alpha(alpha),
        lam_new,
        feasible_radius(problem, lam_new, radius_new),
        problem.n * validate_positive("rows_factor", rows_factor),
    )
    testing_scale = (
        type(problem).risk_sensitivity(after.radius, after.n)
        / type(problem).risk_sensitivity(before.radius, before.n)
        * before.alpha
        / after.alpha
    )
    testing = testing_part(problem, row, gamma, options)
    generation = float(row["median_eps_hypothesis"])
    generator = options.generator or default_generator_name(problem)
    return testing * testing_scale + generation * generation_factor(problem, generator, generation, before, after)


def needs_guidance(summary: pd.DataFrame) -> str | None:
    """The method guidance is about (the best pure-ε search), or ``None`` when its privacy is good enough.

    Guidance is needed when that method's median ε exceeds ``WEAK_EPSILON``, its e^ε exceeds
    ``RISK_FACTOR``, or noise reduction pays more than doubling (the ranking flips).
    """
    searches = summary[summary["method"].isin(method_keys(tests_accuracy=True)) & (summary["delta"] == 0)]
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
    power = 10 ** math.floor(math.log10(value))
    return math.ceil(value / power - 1e-9) * power


def _next_choice(value: float, choices: Sequence[float], factor: float) -> float:
    """The smallest choice ≥ factor·value (``factor·value`` if none is)."""
    larger = [c for c in sorted(choices) if c >= factor * value * (1 - 1e-9)]
    return larger[0] if larger else factor * value


def _eps_text(eps: float) -> str:
    return f"ε ≈ {format_epsilon(eps)} (e^ε ≈ {format_exp_epsilon(eps)})"


def explain(problem: Problem, summary: pd.DataFrame, method: str, gamma: float, options: SearchOptions) -> str:
    """One sentence, from the numbers, saying why ``method``'s privacy is weak (SPEC §2, §6, §12, §13)."""
    rows = summary.set_index("method")
    row = rows.loc[method]
    alpha, eps, n = float(row["alpha"]), float(row["median_eps"]), problem.n
    bound = "R" if problem.radius is not None else "M"
    formula = problem.sensitivity_formula.format(R=bound)
    delta_r = problem.query_sensitivity
    testing = testing_part(problem, {**row, "method": method}, gamma, options)
    if method == NoiseReduction.key:
        c = calibration_constant(options.T, gamma, options.calibration)
        test_text = (
            f"the test alone costs ε_A = c·Δ_R/α = {c:.3g} × {delta_r:.3g} / {alpha:g} = {format_epsilon(testing)}"
        )
    else:
        test_text = f"its tests alone cost ε = {format_epsilon(testing)}"
    generation = float(row["median_eps_hypothesis"])
    label = method_label(method)
    if method == Doubling.key and NoiseReduction.key in rows.index:
        nr = rows.loc[NoiseReduction.key]
        return (
            f"{NoiseReduction.label} paid more than doubling here (median ε {format_epsilon(float(nr['median_eps']))} "
            f"against {format_epsilon(eps)}): with n = {n:,} rows, Δ_R = {formula} = {delta_r:.3g}, and its "
            f"test's ε_A = {format_epsilon(float(nr['median_eps_test']))} exceeds the {format_epsilon(testing)} that "
            "doubling's few tests cost."
        )
    if testing >= generation:
        return (
            f"n = {n:,} rows is too few for α = {alpha:g}: Δ_R = {formula} = {delta_r:.3g} "
            f"({bound} = {problem.norm_bound:.3g}), so {test_text} of {label.lower()}'s median ε = "
            f"{format_epsilon(eps)}."
        )
    return (
        f"With n = {n:,} rows, the private model itself needs ε_t = {format_epsilon(generation)} (median) to reach "
        f"excess risk below α = {alpha:g}, and {test_text}: together ε = {format_epsilon(eps)}."
    )


def advise(
    problem: Problem,
    alpha: float,
    gamma: float,
    options: SearchOptions,
    summary: pd.DataFrame,
    *,
    lam_choices: Sequence[float] = (),
    largest_alpha: float = 0.5,
) -> Advice | None:
    """Guidance for the runs of ``summary`` (``interpret.summarise_runs``), or ``None`` when none is needed.

    The fixes: a larger α (the smallest that brings the predicted ε to ``TARGET_EPSILON``, else
    4α, at most ``largest_alpha``), a larger λ (the next of ``lam_choices`` from 4λ, else 4λ),
    a public radius R (a third of M, rounded up; only without one), and more rows (×4;
    advice only). Each fix carries its predicted median ε (``predict_epsilon``).

    Parameters
    ----------
    problem : the runs' problem; alpha, gamma, options : the runs' settings.
    summary : one row per method.
    lam_choices : the λ values the app offers.
    largest_alpha : the largest α the app offers.
    """
    method = needs_guidance(summary)
    if method is None:
        return None
    row = summary[summary["method"] == method].iloc[0]
    eps = float(row["median_eps"])
    if not math.isfinite(float(row["median_eps_hypothesis"])):
        return Advice(method, eps, explain(problem, summary, method, gamma, options), ())

    def predict(**change: float) -> float:
        return predict_epsilon(problem, row, gamma, options, **change)

    fixes = []
    if alpha < largest_alpha:
        wider = min(4 * alpha, largest_alpha)
        if predict(alpha=largest_alpha) <= TARGET_EPSILON:
            low, high = alpha, largest_alpha
            for _ in range(40):  # the prediction decreases in α: bisect for the target
                middle = (low + high) / 2
                low, high = (middle, high) if predict(alpha=middle) > TARGET_EPSILON else (low, middle)
            wider = math.ceil(high * 1000) / 1000
        predicted = predict(alpha=wider)
        fixes.append(
            Fix(
                f"Accept excess risk α = {wider:g}",
                predicted,
                f"A looser target: the test's ε_A falls in proportion (×{alpha / wider:.2g}) and a noisier model "
                f"passes; predicted median {_eps_text(predicted)}.",
                {"alpha": wider},
            )
        )
    lam = _next_choice(problem.lam, lam_choices, 4)
    predicted = predict(lam=lam)
    radius_after = feasible_radius(problem, lam, problem.radius)
    changes: dict[str, float | None] = {"lam": lam}
    if problem.radius is not None and radius_after < problem.radius:
        changes["radius"] = None  # the stated radius would exceed the new M, which then bounds ‖θ‖ alone
    fixes.append(
        Fix(
            f"Regularise more: λ = {lam:g}",
            predicted,
            f"The feasible radius shrinks from {problem.norm_bound:.3g} to {radius_after:.3g}, so Δ_R and the noise "
            "shrink; the model is more biased (α is measured against the more regularised optimum); predicted median "
            f"{_eps_text(predicted)}.",
            changes,
        )
    )
    if problem.radius is None:
        radius = _round_up(problem.max_norm * RADIUS_SHARE)
        predicted = predict(radius=radius)
        at_most = (options.generator or default_generator_name(problem)) == CovariancePerturbation.name
        fixes.append(
            Fix(
                f"State a public bound ‖θ‖ ≤ {radius:g}",
                predicted,
                f"Only if domain knowledge, never this data, says the model's norm is at most {radius:g} (M = "
                f"{problem.max_norm:.3g}): Δ_R = {type(problem).risk_sensitivity(radius, problem.n):.3g} instead of "
                f"{problem.query_sensitivity:.3g}; predicted median {'at most ' if at_most else ''}{_eps_text(predicted)}.",
                {"radius": radius},
                at_most,
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
