"""Guidance when privacy is weak: why, in numbers, and fixes with their predicted ε.

Whether a summary needs guidance, the sentence that says why (the test's ε_A = c·Δ_R/α and the level ε_t at
which the released model first passed, from the public constants), and the fixes (α, λ, a public or private
radius, more rows), each with the median ε that ``accfirst.prediction`` predicts for it.

The predictions were checked against reruns (``benchmarks/bench_guidance.py``). The guidance reads
only public constants (n, p, λ, R, α, γ, T) and the runs' released ε and radii: post-processing,
no further look at the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from accfirst.erm.generators import CovariancePerturbation, default_generator_name
from accfirst.erm.problem import Problem
from accfirst.interpret import format_epsilon, format_exp_epsilon, own_delta
from accfirst.mechanisms.calibration import clips_query
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import run_rows
from accfirst.methods.registry import METHODS, method_keys, method_label
from accfirst.prediction import below_cliff, feasible_radius, predict_epsilon, runs_radius, testing_part

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
    clips, shape = clips_query(options.calibration), run_rows(problem, options.calibration).shape
    formula = shape.test_sensitivity_formula(bound, radius, n, problem.lam, alpha, clipped=clips)
    delta_r = shape.test_sensitivity_on(radius, n, problem.lam, alpha, clipped=clips)
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
    clips, shape = clips_query(options.calibration), run_rows(problem, options.calibration).shape
    radius = runs_radius(problem, row, options)

    def falls(wider: float) -> float:
        """How much the test's ε_A falls from α to ``wider`` (its factor, < 1)."""
        before, after = (
            shape.test_sensitivity_on(radius, problem.n, problem.lam, a, clipped=clips) / a for a in (alpha, wider)
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
                f"{shape.test_sensitivity_on(ceiling, problem.n, problem.lam, alpha, clipped=clips):.3g} to "
                f"{shape.test_sensitivity_on(radius, problem.n, problem.lam, alpha, clipped=clips):.3g}"
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
