"""The runs of each method summarised, and the sentences a stakeholder can read aloud about one method's summary
(docs/mathematics.md#what-a-run-reports, docs/mathematics.md#a-relative-accuracy-target,
docs/mathematics.md#a-private-radius).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from accfirst.erm.gibbs import APPROXIMATE_ACCURACY
from accfirst.erm.problem import Problem
from accfirst.errors import AccFirstError
from accfirst.interpret.epsilon import (
    delta_sentence,
    exp_epsilon,
    format_epsilon,
    format_exp_epsilon,
    format_posterior,
    median_with_inf,
    own_delta,
    posterior_bound,
)
from accfirst.mechanisms.calibration import calibrated_epsilon, clips_query
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import run_rows
from accfirst.methods.registry import METHODS, method_label

SUMMARY_COLUMNS = (
    "method",
    "label",
    "trials",
    "median_eps",
    "median_exp_eps",
    "posterior_1pct",
    "posterior_50pct",
    "success_rate",
    "successes",
    "fallback_share",
    "fallbacks",
    "nothing_released",
    "median_eps_radius",
    "median_eps_test",
    "median_eps_hypothesis",
    "median_excess_risk",
    "median_norm_bound",
    "alpha",
    "gamma",
    "delta",
    "delta_prep",
    "approximate",
    "kappa",
    "median_eps_scale",
    "no_signals",
    "eps_prep",
    "prep_mode",
)


def summarise_runs(results: pd.DataFrame) -> pd.DataFrame:
    """One row per method of a ``run_trials`` frame: the numbers of the explorer's headline.

    Medians keep every run: one that released nothing at its declared top ε, one that released θ* as ∞
    (docs/mathematics.md#what-a-run-reports; ``fallbacks`` counts both, ``nothing_released`` the first); the
    radius/testing/generation medians are over the runs that halted (a fallback passed no level); ``median_norm_bound`` is the median radius the runs
    used (M, R₀, a public or a private radius). Expects a single α, or a single relative target κ
    (docs/mathematics.md#a-relative-accuracy-target): then ``alpha`` is the median released α = κ·Ŝ (NaN when every run
    showed no signal), ``median_eps_scale`` the median ε_S and ``no_signals`` the runs whose Ŝ showed no signal a
    private model could keep (``kappa`` is NaN for an absolute α).

    Returns a frame with ``SUMMARY_COLUMNS``; posterior columns are the docs/mathematics.md#setting-and-notation bound
    for a 1% and a 50% prior at the median ε; ``delta`` is the largest δ of the method's
    runs (0 for pure ε) and ``delta_prep`` the part of it the rows' preparation added (``own_delta``); ``approximate``
    is true when the accuracy guarantee is approximate
    (the logistic Gibbs posterior's Laplace approximation);
    ``eps_prep`` and ``prep_mode`` say what the rows' preparation cost and how it was done
    (docs/mathematics.md#preparing-the-data-privately: ``median_eps`` includes a private preparation;
    ``preparation_label`` tags it).
    """
    if results.empty:
        return pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    kappas = results["kappa"] if "kappa" in results.columns else pd.Series(math.nan, index=results.index)
    relative = bool(kappas.notna().any())
    if relative and (kappas.isna().any() or kappas.nunique() != 1):
        raise AccFirstError(
            "summarise_runs expects the runs of a single kappa (relative target); filter the frame first"
        )
    if not relative and results["alpha"].nunique() != 1:
        raise AccFirstError("summarise_runs expects the runs of a single alpha; filter the frame first")
    rows = []
    for method, runs in results.groupby("method", sort=False):
        halted = runs[~runs["fallback"].astype(bool)]
        median_eps = median_with_inf(runs["eps_total"])
        rows.append(
            {
                "method": method,
                "label": method_label(str(method)),
                "trials": len(runs),
                "median_eps": median_eps,
                "median_exp_eps": exp_epsilon(median_eps),
                "posterior_1pct": posterior_bound(median_eps, 0.01),
                "posterior_50pct": posterior_bound(median_eps, 0.5),
                "success_rate": float(runs["success"].astype(bool).mean()),
                "successes": int(runs["success"].astype(bool).sum()),
                "fallback_share": float(runs["fallback"].astype(bool).mean()),
                "fallbacks": int(runs["fallback"].astype(bool).sum()),
                "nothing_released": int(runs["nothing_released"].astype(bool).sum())
                if "nothing_released" in runs.columns
                else 0,
                "median_eps_radius": float(halted["eps_radius"].median())
                if len(halted) and "eps_radius" in runs.columns
                else (0.0 if len(halted) else math.nan),
                "median_eps_test": float(halted["eps_test"].median()) if len(halted) else math.nan,
                "median_eps_hypothesis": float(halted["eps_hypothesis"].median()) if len(halted) else math.nan,
                "median_excess_risk": float(runs["excess_risk"].median()),
                "median_norm_bound": float(runs["norm_bound"].median()) if "norm_bound" in runs.columns else math.nan,
                "alpha": float(runs["alpha"].median()) if relative else float(runs["alpha"].iloc[0]),
                "gamma": float(runs["gamma"].iloc[0]),
                "delta": float(runs["delta"].max()) if "delta" in runs.columns else 0.0,
                "delta_prep": float(runs["delta_prep"].max()) if "delta_prep" in runs.columns else 0.0,
                "approximate": "calibration" in runs.columns
                and bool((runs["calibration"] == APPROXIMATE_ACCURACY).any()),
                "kappa": float(kappas[runs.index].iloc[0]),
                "median_eps_scale": float(runs["eps_scale"].median()) if relative else 0.0,
                "no_signals": int(runs["alpha"].isna().sum()) if relative else 0,
                "eps_prep": float(runs["eps_prep"].iloc[0]) if "eps_prep" in runs.columns else 0.0,
                "prep_mode": str(runs["prep_mode"].iloc[0]) if "prep_mode" in runs.columns else "given",
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def plain_sentence(summary: pd.Series | dict[str, Any]) -> str:
    """One sentence a stakeholder can read aloud about one method's row of ``summarise_runs``.

    Says how often the accuracy target was met, the typical privacy loss paid (ε and
    e^ε), what that means for an adversary with a 1% prior (docs/mathematics.md#setting-and-notation), and the fallback
    share when there is one. For the theory approach it says that only the expected
    excess risk is promised (docs/mathematics.md#the-theory-approach); for an (ε, δ) guarantee it names δ, and for the
    Gibbs posterior that no test was needed (docs/mathematics.md#the-gibbs-posterior).
    """
    row = dict(summary)
    label = str(row.get("label") or method_label(str(row["method"])))
    trials, successes, fallbacks = int(row["trials"]), int(row["successes"]), int(row["fallbacks"])
    alpha, eps = float(row["alpha"]), float(row["median_eps"])
    runs = "run" if trials == 1 else "runs"
    kappa = float(row.get("kappa", math.nan))
    if not math.isnan(kappa):
        return capitalised(relative_sentence(row, label, kappa, trials))
    met = f"met the accuracy target (excess risk ≤ {alpha:g}) in {successes} of {trials} {runs}"
    if math.isinf(eps):
        sentence = (
            f"{label} {met}, but in {fallbacks} of them no private model passed the test, so the "
            "exact, non-private model was released: the typical privacy loss is unbounded (ε = ∞)."
        )
    else:
        bound = format_posterior(eps, 0.01)
        after = "almost certain (over 99.99%)" if bound.startswith(">") else f"at most {bound} sure"
        fixed = str(row["method"]) in METHODS and METHODS[str(row["method"])].fixed_epsilon
        paid = "fixed in advance" if fixed else "paid"
        sentence = (
            f"{label} {met} with a typical privacy loss of ε = {format_epsilon(eps)} ({paid}; "
            f"e^ε = {format_exp_epsilon(eps)}): someone who was 1% sure of a fact about one "
            f"person's record could afterwards be {after}."
        )
        nothing = int(row.get("nothing_released", 0))
        if nothing:
            sentence += (
                f" In {nothing} of {trials} {runs} no private model passed the test and nothing was released "
                "(charged the search's declared top ε)."
            )
        if fallbacks > nothing:
            sentence += (
                f" In {fallbacks - nothing} of {trials} {runs} no private model passed the test and the exact, "
                "non-private model was released (ε = ∞)."
            )
    if words := delta_sentence(own_delta(row), float(row.get("delta_prep", 0.0))):
        sentence += " " + words
    method = METHODS.get(str(row["method"]))
    return sentence if method is None else sentence + method.summary_note(row)


def radius_sentence(
    problem: Problem, summary_row: pd.Series | dict[str, Any], gamma: float, options: SearchOptions
) -> str:
    """What bounding the model's size saved, in words a stakeholder can repeat (docs/mathematics.md#a-public-norm-bound,
    docs/mathematics.md#a-private-radius); "" when nothing.

    For noise reduction, whose check costs exactly ε_A = c(T, γ)·Δ_R(α)/α: without a bound below the
    paper's M the check alone would have cost c·Δ_R(α) on M, over α, and the sentence sets the whole median
    bill (bound, check and model) against that. Reads public constants and released numbers only.
    """
    row = dict(summary_row)
    paid, radius = float(row["median_eps"]), float(row.get("median_norm_bound", math.nan))
    if row["method"] != NoiseReduction.key or not math.isfinite(paid) or not radius < problem.max_norm * (1 - 1e-9):
        return ""
    alpha = float(row["alpha"])
    if not math.isfinite(alpha):  # a relative target whose every run showed no signal released no α
        return ""
    unbounded = calibrated_epsilon(
        options.calibration,
        options.T,
        gamma,
        run_rows(problem, options.calibration).shape.test_sensitivity_on(
            problem.max_norm, problem.n, problem.lam, alpha, clipped=clips_query(options.calibration)
        ),
        alpha,
    )
    if not unbounded > paid:
        return ""
    if float(row.get("median_eps_radius", 0.0)) > 0:
        how = "with a bound bought privately"
    elif math.isclose(radius, problem.free_radius(problem.lam), rel_tol=1e-9):
        how = "with a bound that holds for every dataset, at no cost"
    else:
        how = "with your public bound"
    return (
        f"Without a bound on the model's size the accuracy check alone would have cost ε = {format_epsilon(unbounded)}; "
        f"{how}, the whole bill (bound, check and model) was ε = {format_epsilon(paid)}: "
        f"{unbounded / paid:.1f}× less privacy for the same accuracy."
    )


def relative_sentence(row: dict[str, Any], label: str, kappa: float, trials: int) -> str:
    """``plain_sentence`` for the runs of a relative target κ (docs/mathematics.md#a-relative-accuracy-target): the
    share kept, α released, ε paid."""
    runs = "run" if trials == 1 else "runs"
    no_signals = int(row.get("no_signals", 0))
    share = f"{1 - kappa:.0%}"
    eps = float(row["median_eps"])
    if no_signals == trials:
        return (
            f"{label}: in {'every' if trials > 1 else 'its'} run the data showed no signal a private model could "
            f"keep at this budget and n, so nothing was learnt; measuring that cost "
            f"ε = {format_epsilon(float(row['median_eps_scale']))}."
        )
    kept = (
        f"{label} kept at least {share} of what the best model gains over predicting nothing (excess risk ≤ "
        f"κ·R(0) with κ = {kappa:g}) in {int(row['successes'])} of {trials} {runs}"
    )
    if math.isinf(eps):
        sentence = f"{kept}, but the typical privacy loss is unbounded (ε = ∞): {int(row['fallbacks'])} runs fell back."
    else:
        sentence = (
            f"{kept}, with a typical privacy loss of ε = {format_epsilon(eps)} (e^ε = {format_exp_epsilon(eps)}), "
            f"of which ε = {format_epsilon(float(row['median_eps_scale']))} bought the private bound on R(0) that "
            f"set α = κ·Ŝ (median α = {float(row['alpha']):.3g})."
        )
    if no_signals:
        sentence += f" In {no_signals} of {trials} {runs} the data showed no signal a private model could keep."
    if words := delta_sentence(own_delta(row), float(row.get("delta_prep", 0.0))):
        sentence += " " + words
    method = METHODS.get(str(row["method"]))
    return sentence if method is None else sentence + method.summary_note(row)


def capitalised(text: str) -> str:
    """``text`` with its first letter a capital (a sentence that starts with a method's name)."""
    return text[:1].upper() + text[1:]
