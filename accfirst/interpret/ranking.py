"""The methods ranked by the privacy they paid, and the saving in words
(docs/mathematics.md#what-a-run-reports, docs/mathematics.md#the-gibbs-posterior).
"""

from __future__ import annotations

import math

import pandas as pd

from accfirst.interpret.epsilon import format_delta, format_epsilon
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
