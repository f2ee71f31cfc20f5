"""The methods ranked by the privacy they paid, and the saving in words
(docs/mathematics.md#what-a-run-reports, docs/mathematics.md#the-gibbs-posterior).
"""

from __future__ import annotations

import math

import pandas as pd

from accfirst.interpret.epsilon import delta_sentence, format_delta, format_epsilon, own_delta
from accfirst.interpret.summary import capitalised
from accfirst.methods.registry import METHODS


def _sentence_name(row: pd.Series) -> str:
    """How a sentence names the method of ``row`` (the labels start with a capital)."""
    method = METHODS.get(str(row["method"]))
    return str(row["label"]) if method is None else method.in_sentence


def ranking_sentence(summary: pd.DataFrame) -> str:
    """The methods ranked by the privacy they paid, and the saving in words a stakeholder can repeat.

    docs/mathematics.md#what-a-run-reports, docs/mathematics.md#the-gibbs-posterior. The methods are ranked by median ε
    (fallbacks count as ∞, so a method that fell back in half its runs ranks last); the first is compared with the
    second ("Noise reduction paid 76% less privacy than doubling for the same accuracy target"). Medians equal to 3
    significant digits are a tie. A method's own δ (``own_delta``: Gaussian noise, the Gibbs posterior) is what makes
    its figure a different kind of promise; the δ a private preparation adds is shared by every method on the table and
    is said once (``delta_sentence``). An (ε, δ) figure among the ranked methods (Gaussian noise) names its δ. A Gibbs
    posterior with a δ of its own is named with it but not ranked: an (ε, δ) guarantee fixed in advance is a different
    promise (with δ = 0 it is ranked); nor is a method whose every run at a relative target showed no signal (it learnt
    nothing). Empty when there is nothing to compare.

    Parameters
    ----------
    summary : the frame of ``summarise_runs`` (one α).
    """
    if summary.empty:
        return ""
    order = summary["median_eps"].astype(float).rank(method="first")
    fixed = summary["method"].map(lambda key: key in METHODS and METHODS[key].fixed_epsilon).astype(bool)
    own = summary.apply(own_delta, axis=1).astype(float) if len(summary) else summary["delta"].astype(float)
    prep = float(summary["delta_prep"].max()) if "delta_prep" in summary.columns else 0.0
    different = fixed & (own > 0)
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
        first_name, second_name = capitalised(_sentence_name(best)), _sentence_name(second)
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
                    f"{capitalised(_sentence_name(row))} promises the target only on average, the others with "
                    "probability 1 − γ."
                )
        delta = float(own[ranked.index].max())
        if delta > 0 and (own[ranked.index] == 0).any():
            others = "the others are pure ε" if prep == 0 else "the others add none of their own"
            parts.append(f"Figures with δ = {format_delta(delta)} are (ε, δ) guarantees; {others}.")
        elif delta > 0:
            split = (
                f" ({format_delta(delta)} of their own, {format_delta(prep)} from preparing the data)" if prep else ""
            )
            parts.append(f"These are ex-post (ε, δ) guarantees with δ = {format_delta(delta + prep)}{split}.")
    if prep > 0 and not (len(ranked) >= 2 and (own[ranked.index] > 0).all()):
        parts.append(delta_sentence(0.0, prep))
    for _, row in summary.loc[different & ~silent].iterrows():
        parts.append(
            f"The {row['label']} (ε = {format_epsilon(row['median_eps'])}, δ = {format_delta(row['delta'])}) is not "
            "ranked: the δ of its own makes its (ε, δ) guarantee a different promise from the others'."
        )
    if silent.all():
        parts.append("No method learnt anything: in every run the data showed no signal a private model could keep.")
    return " ".join(parts)
