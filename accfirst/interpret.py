"""Reading an ex-post ε for people: the risk factor e^ε, posterior bounds, one sentence.

docs/mathematics.md#setting-and-notation. ``e^ε`` is the privacy-risk factor: an adversary with prior probability q
that a person's record is the one in question ends with posterior at most
``q·e^ε / (1 − q + q·e^ε)``. docs/mathematics.md#what-a-run-reports: aggregates over trials keep fallback runs
(ε = ∞) in: medians treat ∞ as ∞ and the fallback share is always reported.

Everything here is pure (numbers and strings); the app and the CLI both use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import expit

from accfirst.datasets import PrepReport
from accfirst.datasets.prepared import (
    EVALUATION_MODE,
    EXCLUDES_PREPARATION,
    PRIVATE,
    PRIVATE_MODE,
    PUBLIC_MODE,
    PUBLIC_PREPARATION,
    Preparation,
)
from accfirst.erm.gibbs import APPROXIMATE_ACCURACY, DATA_DEPENDENT_ACCURACY
from accfirst.erm.problem import Problem
from accfirst.erm.ridge import RidgeProblem
from accfirst.erm.trust_region import solve_trust_region
from accfirst.errors import AccFirstError
from accfirst.mechanisms.calibration import calibrated_epsilon, clips_query
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import METHODS, method_label
from accfirst.result import RunResult
from accfirst.validation import validate_alpha

# e^ε overflows float64 above ~709.78; beyond this we only ever print powers of ten.
_LOG10_E = 1 / math.log(10)
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
DEFAULT_PRIORS = (0.01, 0.5)


def _validate_prior(prior: float) -> float:
    if isinstance(prior, bool) or not isinstance(prior, (int, float, np.floating)) or not 0 < prior < 1:
        raise AccFirstError(f"prior must be a probability in (0, 1); got {prior!r}")
    return float(prior)


def _validate_epsilon(eps: ArrayLike) -> np.ndarray:
    values = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise AccFirstError(f"epsilon must be ≥ 0 (∞ allowed); got {eps!r}")
    return values


@overload
def posterior_bound(eps: float, prior: float) -> float: ...
@overload
def posterior_bound(eps: np.ndarray, prior: float) -> np.ndarray: ...
@overload
def posterior_bound(eps: ArrayLike, prior: float) -> float | np.ndarray: ...
def posterior_bound(eps: ArrayLike, prior: float) -> float | np.ndarray:
    """The largest posterior an adversary with prior q can reach: q·e^ε/(1 − q + q·e^ε)
    (docs/mathematics.md#setting-and-notation).

    Computed as expit(ε + logit q), which never overflows: ε = ∞ (fallback) gives 1.

    Parameters
    ----------
    eps : ex-post privacy loss ε ≥ 0, a number or an array; ∞ allowed.
    prior : q ∈ (0, 1), the adversary's prior probability.
    """
    q = _validate_prior(prior)
    values = _validate_epsilon(eps)
    result = expit(values + math.log(q) - math.log1p(-q))
    return float(result) if result.ndim == 0 else result


def exp_epsilon(eps: float) -> float:
    """e^ε as a float, ∞ where it overflows (ε > ~709) or ε = ∞."""
    value = float(_validate_epsilon(eps))
    return math.exp(value) if value < 709 else math.inf


def _significant(value: float, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant digits, with thousands separators, no exponent."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    rounded = round(value, digits - 1 - magnitude)
    magnitude = math.floor(math.log10(abs(rounded)))  # 9.999 rounds up to 10.0
    decimals = max(digits - 1 - magnitude, 0)
    return f"{rounded:,.{decimals}f}"


def format_epsilon(eps: float) -> str:
    """ε for display: 3 significant digits, "∞" on fallback."""
    value = float(eps)
    if math.isinf(value):
        return "∞"
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
        return f"{value:.3g}"
    return _significant(value)


def format_exp_epsilon(eps: float) -> str:
    """e^ε for display without overflow: "1,650", "3.24 × 10⁷", "10⁴³⁴²⁹⁴" (huge ε), "∞".

    3 significant digits: below 10⁶ the number is written out; above, as mantissa × 10^k
    computed from ε·log₁₀e, so any finite ε has a finite label; from 10¹⁰⁰⁰ on, the
    power of ten alone.
    """
    value = float(_validate_epsilon(eps))
    if math.isinf(value):
        return "∞"
    log10 = value * _LOG10_E
    if log10 < 6:
        return _significant(math.exp(value))
    exponent = math.floor(log10)
    mantissa = 10 ** (log10 - exponent)
    if mantissa >= 9.995:  # rounding 9.996 to two decimals would print "10.00 × 10^k"
        mantissa, exponent = 1.0, exponent + 1
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    return power if exponent >= 1000 else f"{mantissa:.2f} × {power}"


def format_delta(delta: float) -> str:
    """δ for display: "0", "10⁻⁶", "1.04 × 10⁻⁶" (3 significant digits), plain from 10⁻³ up."""
    value = float(delta)
    if value == 0 or value >= 1e-3:
        return f"{value:.3g}"
    exponent = math.floor(math.log10(value))
    mantissa = float(_significant(value / 10**exponent))
    if mantissa >= 10:  # 9.996 × 10⁻⁷ rounds to 10.0
        mantissa, exponent = mantissa / 10, exponent + 1
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    return power if mantissa == 1 else f"{mantissa:g} × {power}"


def format_probability(p: float) -> str:
    """A probability as a percentage that never rounds a bound below 1 up to "100%"."""
    value = float(p)
    if value >= 1:
        return "100%"
    if value > 0.9999:
        return "> 99.99%"
    percent = 100 * value
    if percent >= 99:
        return f"{math.floor(percent * 100) / 100:.2f}%"
    if percent >= 10:
        return f"{percent:.1f}%"
    return f"{percent:.3g}%"


def format_posterior(eps: float, prior: float) -> str:
    """The docs/mathematics.md#setting-and-notation posterior bound as a percentage: "100%" only for ε = ∞
    (fallback)."""
    if math.isinf(float(eps)):
        return "100%"
    return format_probability(min(posterior_bound(eps, prior), 0.99999))


def quantile_with_inf(values: ArrayLike, q: float) -> float:
    """numpy's linear-interpolation quantile, except that ∞ counts as ∞ (docs/mathematics.md#what-a-run-reports).

    ``np.quantile`` returns NaN as soon as it interpolates next to an ∞; here the
    result is ∞ when the upper neighbour is ∞ and the interpolation weight is > 0.
    """
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    if ordered.size == 0:
        return math.nan
    position = (ordered.size - 1) * q
    low, high = math.floor(position), math.ceil(position)
    weight = position - low
    if weight == 0 or ordered[low] == ordered[high]:
        return float(ordered[low])
    if math.isinf(ordered[high]):
        return math.inf
    return float(ordered[low] + weight * (ordered[high] - ordered[low]))


def median_with_inf(values: ArrayLike) -> float:
    """The median where ∞ (fallback) counts as a value larger than every finite one
    (docs/mathematics.md#what-a-run-reports).

    Of an even count, the mean of the two middle values (∞ if either is ∞); NaN if empty.
    """
    return quantile_with_inf(values, 0.5)


# The parts of a run's ex-post ε, in the order they are paid, and how a sentence names each.
BILL_PARTS = (
    ("eps_prep", "preparing the data"),
    ("eps_scale", "bounding R(0)"),
    ("eps_radius", "the private radius"),
    ("eps_test", "testing"),
    ("eps_hypothesis", "generating"),
)
# The same parts in a summary row (``summarise_runs``), as a stakeholder reads them on a card.
SUMMARY_PARTS = (
    ("eps_prep", "preparing the data"),
    ("median_eps_scale", "the bound on R(0)"),
    ("median_eps_radius", "the bound on the model's size"),
    ("median_eps_test", "the check"),
    ("median_eps_hypothesis", "the model"),
)


def summary_parts(row: Mapping[str, Any], tests_accuracy: bool) -> list[tuple[str, float]]:
    """Where a method's median ε went, in the order it is paid: (name, ε) for each part it paid
    (docs/mathematics.md#a-private-radius, docs/mathematics.md#preparing-the-data-privately,
    docs/mathematics.md#a-relative-accuracy-target).

    The check appears for a method that tests accuracy, the model always; the other parts when they are > 0.
    """
    return [
        (name, float(row.get(field, 0.0)))
        for field, name in SUMMARY_PARTS
        if field == "median_eps_hypothesis"
        or (field == "median_eps_test" and tests_accuracy)
        or float(row.get(field, 0.0)) > 0
    ]


def bill_text(result: RunResult) -> str:
    """A run's whole ε and its parts in words: "ε = 1.23 (preparing the data 0.09 + testing 0.7 + generating 0.44)".

    Parts that are zero are left out, except testing and generating. After a preparation that read
    the data without noise the sentence says that the figure excludes it (evaluation only).
    """
    parts = [
        f"{name} {format_epsilon(float(getattr(result, field)))}"
        for field, name in BILL_PARTS
        if field in ("eps_test", "eps_hypothesis") or getattr(result, field) > 0
    ]
    text = f"ε = {format_epsilon(result.eps_total)} ({' + '.join(parts)})"
    if result.prep_mode == EVALUATION_MODE:
        text += f"; {EXCLUDES_PREPARATION}"
    return text


def preparation_label(mode: str, epsilon: float) -> str:
    """The tag every ε on prepared rows carries (docs/mathematics.md#preparing-the-data-privately): what it says about
    the preparation, or ``""``.

    Private: "includes preparing the data, ε = 0.0881"; evaluation only: "excludes preparation
    (reads the data): evaluation only"; public data or rows given as they are: nothing to add.

    Parameters
    ----------
    mode : how the rows were prepared (``Problem.prep_mode``, the frame's ``prep_mode``).
    epsilon : the preparation's ε (``Problem.prep_epsilon``, the frame's ``eps_prep``).
    """
    if mode == EVALUATION_MODE:
        return EXCLUDES_PREPARATION
    if mode == PRIVATE_MODE:
        return f"includes preparing the data, ε = {format_epsilon(epsilon)}"
    return ""


def preparation_note(mode: str, epsilon: float, delta: float, runs: int | None = None, *, included: bool = True) -> str:
    """One sentence under a page's ε figures on prepared rows: what they include of the preparation
    (docs/mathematics.md#preparing-the-data-privately).

    "Every ε includes preparing the data, ε = 0.0881, δ = 10⁻⁶, paid once and shared by these 60
    runs." (``runs`` given), or "… paid once for this table."; after an evaluation-only preparation
    "Every ε excludes preparation (reads the data): evaluation only."; on data generated from public
    parameters, that preparing them is free; ``""`` for rows given as they are. With
    ``included=False`` (a budget that covers only what runs on the prepared rows, such as counts of a
    prepared column) it says what preparing them cost besides.
    """
    if mode == PUBLIC_MODE:
        return f"The data are {PUBLIC_PREPARATION} (ε = 0)."
    if mode not in (PRIVATE_MODE, EVALUATION_MODE):
        return ""
    # Several runs on real data are several releases: each ε is one run's, and showing them together adds them up.
    repeated = (
        f" Each of the {runs:,} runs is a release of its own on this table: shown together they reveal what "
        f"{runs:,} runs would, and their ε add up."
        if runs is not None and runs > 1
        else ""
    )
    if mode == EVALUATION_MODE:
        return f"Every ε {EXCLUDES_PREPARATION}: the preparation read the data without noise and no ε covers it." + (
            repeated
        )
    if epsilon == 0 and delta == 0:
        return "Preparing the data cost ε = 0: every statistic was declared (nothing read)." + repeated
    paid = f"ε = {format_epsilon(epsilon)}" + (f", δ = {format_delta(delta)}" if delta > 0 else "")
    if not included:
        return f"The budget covers what runs on the prepared rows; preparing them cost {paid} besides, paid once."
    shared = (
        f"paid once and shared by these {runs:,} runs" if runs is not None and runs > 1 else "paid once for this table"
    )
    return f"Every ε includes preparing the data, {paid}, {shared}." + repeated


def step_cost(kind: str, epsilon: float, delta: float) -> str:
    """How a preparation step is listed: "declared", "private, ε = 0.0212" (and δ), "post-processing", …"""
    if kind == PRIVATE:
        return f"private, ε = {format_epsilon(epsilon)}" + (f", δ = {format_delta(delta)}" if delta > 0 else "")
    return kind


def preparation_steps(preparation: Preparation) -> pd.DataFrame:
    """The data report's table: one row per step — step, column, cost (``step_cost``), what it did."""
    frame = preparation.to_frame()
    return pd.DataFrame(
        {
            "step": frame["step"],
            "column": frame["column"],
            "cost": [step_cost(k, e, d) for k, e, d in zip(frame["kind"], frame["epsilon"], frame["delta"])],
            "what it did": frame["note"],
        }
    )


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
    "median_eps_radius",
    "median_eps_test",
    "median_eps_hypothesis",
    "median_excess_risk",
    "median_norm_bound",
    "alpha",
    "gamma",
    "delta",
    "approximate",
    "data_dependent_accuracy",
    "kappa",
    "median_eps_scale",
    "no_signals",
    "eps_prep",
    "prep_mode",
)


def summarise_runs(results: pd.DataFrame) -> pd.DataFrame:
    """One row per method of a ``run_trials`` frame: the numbers of the explorer's headline.

    Medians keep fallback runs as ∞ (docs/mathematics.md#what-a-run-reports); the radius/testing/generation medians are
    over the runs that halted (a fallback has no generation part); ``median_norm_bound`` is the median radius the runs
    used (M, R₀, a public or a private radius). Expects a single α, or a single relative target κ
    (docs/mathematics.md#a-relative-accuracy-target): then ``alpha`` is the median released α = κ·Ŝ (NaN when every run
    showed no signal), ``median_eps_scale`` the median ε_S and ``no_signals`` the runs whose Ŝ showed no signal a
    private model could keep (``kappa`` is NaN for an absolute α).

    Returns a frame with ``SUMMARY_COLUMNS``; posterior columns are the docs/mathematics.md#setting-and-notation bound
    for a 1% and a 50% prior at the median ε; ``delta`` is the largest δ of the method's
    runs (0 for pure ε); ``approximate`` is true when the accuracy guarantee is approximate
    (the logistic Gibbs posterior's Laplace approximation); ``data_dependent_accuracy`` when
    a public radius left the Gibbs posterior only the bound γ/P(C), which reads the data;
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
                "approximate": "calibration" in runs.columns
                and bool((runs["calibration"] == APPROXIMATE_ACCURACY).any()),
                "data_dependent_accuracy": "calibration" in runs.columns
                and bool((runs["calibration"] == DATA_DEPENDENT_ACCURACY).any()),
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
        return _capitalised(relative_sentence(row, label, kappa, trials))
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
        if fallbacks:
            sentence += (
                f" In {fallbacks} of {trials} {runs} no private model passed the test and the exact, "
                "non-private model was released (ε = ∞)."
            )
    delta = float(row.get("delta", 0.0))
    if delta > 0:
        sentence += (
            f" This is an (ε, δ) guarantee with δ = {format_delta(delta)}: the bound may fail with probability "
            "up to δ, a weaker promise than a pure ε, so compare it with the other methods with care."
        )
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
        problem.test_sensitivity_on(
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
    delta = float(row.get("delta", 0.0))
    if 0 < delta < 1:
        sentence += f" An (ε, δ) guarantee with δ = {format_delta(delta)}."
    method = METHODS.get(str(row["method"]))
    return sentence if method is None else sentence + method.summary_note(row)


@dataclass(frozen=True)
class AlphaMeaning:
    """What an excess risk α allows on one dataset, in a loss a stakeholder knows.

    Ridge: the mean squared error on the training rows; ``baseline`` and ``worst`` are the
    root-mean-squared errors of θ* and of the worst model with excess risk ≤ α, in the
    target's units (``unit``). Logistic: the average log-loss on the training rows, in nats
    per row (``unit`` is "nats"); a model that predicts 50/50 everywhere scores ln 2 ≈ 0.693.
    ``exact`` says whether ``worst`` is attained (ridge) or an upper bound (logistic).
    """

    task: str
    alpha: float
    baseline: float
    worst: float
    unit: str
    exact: bool


def alpha_meaning(
    problem: Problem, alpha: float, report: PrepReport | None = None, target_name: str = "the target"
) -> AlphaMeaning:
    """The largest loss of a model with excess risk ≤ α, next to the exact model's (evaluation only).

    The excess risk is measured on the regularised objective (docs/mathematics.md#the-two-learning-problems), so a model
    can fit the data worse than θ* by more than α where its smaller norm pays part of the difference. Ridge: the largest
    increase of the training MSE over {θ : R(θ) ≤ α} is attained; with H = A/n + λI = VΛVᵀ and u = Λ^{1/2}Vᵀ(θ − θ*), it
    is the maximum of Σ (σ_i/Λ_i)u_i² − 2λ Σ (Vᵀθ*)_i u_i/√Λ_i over ‖u‖² ≤ 2α (σ_i = Λ_i − λ), a trust-region problem
    solved exactly. The scale comes back through ``report.target_scale`` (MSE × scale²); the units are those of the
    target after ``log(1 + y)`` when that was applied, and rows clipped by "clip" scaling count at their clipped value.
    Logistic: strong convexity gives ‖θ − θ*‖ ≤ √(2α/λ), so the log-loss rises by at most α + (λ/2)(‖θ*‖² − (‖θ*‖ −
    √(2α/λ))₊²). Reading θ* and the data, this is evaluation only, not private.

    Parameters
    ----------
    problem : the ERM problem of the training rows.
    alpha : the excess risk α > 0.
    report : the preparation record, to express ridge errors in the target's units; ``None``
        keeps the prepared scale.
    target_name : the target column, named in ``unit``.
    """
    alpha = validate_alpha(alpha)
    theta_star = problem.theta_star
    lam = problem.lam
    data_loss = float(problem.loss(theta_star)) - lam / 2 * float(theta_star @ theta_star)
    if isinstance(problem, RidgeProblem):
        scale = 1.0 if report is None or report.target_scale is None else report.target_scale
        log_target = report is not None and report.log1p_target
        unit = f"log(1 + {target_name})" if log_target else target_name
        baseline_mse = 2 * data_loss
        increase = _largest_mse_increase(problem, alpha)
        return AlphaMeaning(
            "ridge", alpha, scale * math.sqrt(baseline_mse), scale * math.sqrt(baseline_mse + increase), unit, True
        )
    reach = math.sqrt(2 * alpha / lam)
    norm = float(np.linalg.norm(theta_star))
    increase = alpha + lam / 2 * (norm**2 - max(norm - reach, 0.0) ** 2)
    return AlphaMeaning("logistic", alpha, data_loss, data_loss + increase, "nats", False)


def _largest_mse_increase(problem: RidgeProblem, alpha: float) -> float:
    """max {MSE(θ) − MSE(θ*) : R(θ) ≤ α} for ridge, exactly (see ``alpha_meaning``)."""
    curvature, V = np.linalg.eigh(problem.hessian)
    weight = np.maximum(curvature - problem.lam, 0.0) / curvature
    pull = problem.lam * (V.T @ problem.theta_star) / np.sqrt(curvature)
    # Maximise uᵀDu − 2 pullᵀu ⇔ minimise ½uᵀ(−2D)u − (−2 pull)ᵀu over the ball ‖u‖ ≤ √(2α).
    u = solve_trust_region(np.diag(-2 * weight), -2 * pull, math.sqrt(2 * alpha))
    return float(u @ (weight * u) - 2 * pull @ u)


def describe_alpha(meaning: AlphaMeaning) -> str:
    """One sentence saying what α allows on this data (``alpha_meaning``), for the α control."""
    if meaning.task == "ridge":
        return (
            f"On this data, an excess risk of α = {meaning.alpha:g} lets the model's typical error on the training "
            f"rows (root-mean-squared, in {meaning.unit}) grow from {_significant(meaning.baseline)} for the exact "
            f"model to at most {_significant(meaning.worst)}."
        )
    return (
        f"On this data, an excess risk of α = {meaning.alpha:g} lets the model's average log-loss on the training "
        f"rows grow from {meaning.baseline:.3f} for the exact model to at most {meaning.worst:.3f} nats per row "
        f"(predicting 50/50 everywhere scores {math.log(2):.3f})."
    )


def _sentence_name(row: pd.Series) -> str:
    """How a sentence names the method of ``row`` (the labels start with a capital)."""
    method = METHODS.get(str(row["method"]))
    return str(row["label"]) if method is None else method.in_sentence


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def ranking_sentence(summary: pd.DataFrame) -> str:
    """The methods ranked by the privacy they paid, and the saving in words a stakeholder can repeat.

    docs/mathematics.md#what-a-run-reports, docs/mathematics.md#the-gibbs-posterior. The methods are ranked by median ε
    (fallbacks count as ∞, so a method that fell back in half its runs ranks last); the first is compared with the
    second ("Noise reduction paid 76% less privacy than doubling for the same accuracy target"). Medians equal to 3
    significant digits are a tie. An (ε, δ) figure among the ranked methods (Gaussian noise) names its δ. A Gibbs
    posterior with δ > 0 is named with its δ but not ranked: an (ε, δ) guarantee fixed in advance is a different promise
    (with δ = 0 it is a pure ε and ranked); nor is a method whose every run at a relative target showed no signal (it
    learnt nothing). Empty when there is nothing to compare.

    Parameters
    ----------
    summary : the frame of ``summarise_runs`` (one α).
    """
    if summary.empty:
        return ""
    order = summary["median_eps"].astype(float).rank(method="first")
    fixed = summary["method"].map(lambda key: key in METHODS and METHODS[key].fixed_epsilon).astype(bool)
    different = fixed & (summary["delta"].astype(float) > 0)
    # A method whose every run at a relative target showed no signal learnt nothing to rank.
    silent = summary["no_signals"] >= summary["trials"] if "no_signals" in summary.columns else different & False
    apart = different | silent
    ranked = summary.assign(order=order).loc[~apart].sort_values("order")
    parts = []
    if len(ranked) >= 2:
        parts.append(
            "Least privacy first: "
            + ", ".join(f"{row['label']} (ε = {format_epsilon(row['median_eps'])})" for _, row in ranked.iterrows())
            + "."
        )
        best, second = ranked.iloc[0], ranked.iloc[1]
        low, high = float(best["median_eps"]), float(second["median_eps"])
        first_name, second_name = _capitalised(_sentence_name(best)), _sentence_name(second)
        if math.isinf(low):
            parts.append(
                "Every method fell back to the exact, non-private model in at least half of its runs (median ε = ∞): "
                "none protected privacy here."
            )
        elif math.isinf(high):
            parts.append(
                f"{first_name} paid a finite privacy loss (median ε = {format_epsilon(low)}) where {second_name} "
                "fell back to the exact, non-private model in at least half of its runs (median ε = ∞)."
            )
        elif format_epsilon(low) == format_epsilon(high):
            parts.append(
                f"{first_name} and {second_name} paid the same privacy (median ε = {format_epsilon(low)}) for the "
                "same accuracy target."
            )
        else:
            saving = 100 * (1 - low / high)
            amount = "less than 1%" if saving < 0.5 else f"{saving:.0f}%"
            parts.append(
                f"{first_name} paid {amount} less privacy than {second_name} for the same accuracy target "
                f"(median ε = {format_epsilon(low)} vs {format_epsilon(high)})."
            )
        for row in (best, second):
            if row["method"] in METHODS and not METHODS[row["method"]].high_probability:
                parts.append(
                    f"{_capitalised(_sentence_name(row))} promises the target only on average, the others with "
                    "probability 1 − γ."
                )
        delta = float(ranked["delta"].max())
        if delta > 0 and (ranked["delta"].astype(float) == 0).any():
            parts.append(f"Figures with δ = {format_delta(delta)} are (ε, δ) guarantees; the others are pure ε.")
        elif delta > 0:
            parts.append(f"These are ex-post (ε, δ) guarantees with δ = {format_delta(delta)}.")
    for _, row in summary.loc[different & ~silent].iterrows():
        parts.append(
            f"The {row['label']} (ε = {format_epsilon(row['median_eps'])}, δ = {format_delta(row['delta'])}) is not "
            "ranked: its (ε, δ) guarantee is a different promise from a pure ε."
        )
    if silent.all():
        parts.append("No method learnt anything: in every run the data showed no signal a private model could keep.")
    return " ".join(parts)
