"""The explorer's accuracy reached: each trial's true excess risk, and the replayed models' quality on held-out rows.

Both read the data (evaluation only). The held-out comparison is with θ*, the exact minimiser of the regularised
training loss at the same λ — the reference the excess risk is measured from, not the best predictor of new rows —
so a private model pulled toward zero can score above it; the caption says so when one does. Meeting α bounds the
excess risk on the training objective, not the held-out quality; the caption sets α against R(0), the excess risk of
predicting zero, so that a model that meets α and predicts little reads as what it is. A run that released no model
(its test never passed, or a relative target's data showed no signal) has nothing to score and is not drawn.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from accfirst import Problem
from accfirst.methods.registry import method_label
from accfirst.methods.relative import NoSignal
from accfirst.plots.quality import figure_excess_risk, figure_relative_risk, figure_test_quality
from ui.charts import show_chart
from ui.dataset import Selection
from ui.errors import package_errors
from ui.replay import Replay
from ui.text import plain

NONPRIVATE = "θ* (non-private)"


def quality_sentence(rows: list[tuple[str, str, dict[str, float]]], task: str) -> str:
    """The released models' held-out quality against the non-private model's, in the target's units (plain text).

    ``rows`` are (model name, method key, ``PreparedData.test_quality``), the non-private θ* first.
    """
    (_, _, best), *private = rows
    parts = []
    for name, _, scores in private:
        if task == "ridge":
            kept = scores["r2"] / best["r2"] if best["r2"] > 0 else math.nan
            share = f", {kept:.0%} of the non-private R²" if math.isfinite(kept) else ""
            parts.append(f"{name}: R² {scores['r2']:.3g}{share}, RMSE {scores['rmse']:.4g} in the target's units")
        else:
            parts.append(f"{name}: accuracy {scores['accuracy']:.1%}, AUC {scores['auc']:.3g}")
    reference = (
        f"R² {best['r2']:.3g}, RMSE {best['rmse']:.4g}"
        if task == "ridge"
        else f"accuracy {best['accuracy']:.1%}, AUC {best['auc']:.3g}"
    )
    return (
        "Held-out test rows (evaluation only): the non-private model has " + reference + "; " + "; ".join(parts) + "."
    )


def above_reference(rows: list[tuple[str, str, dict[str, float]]], task: str) -> str:
    """Why a private model can score above θ* held out (``""`` when none does)."""
    (_, _, best), *private = rows
    metric = "r2" if task == "ridge" else "auc"
    if not any(scores[metric] > best[metric] for _, _, scores in private):
        return ""
    return (
        "A private model can score above θ* held out: θ* is the best fit to the training rows at this λ (the "
        "reference of the excess risk), not the best predictor of new rows, and a model pulled toward zero can "
        "generalise better."
    )


def alpha_against_zero(alpha: float, zero_risk: float) -> str:
    """What meeting α promises next to predicting zero (evaluation only: R(0) reads the data)."""
    if not zero_risk > 0:
        return ""
    if alpha >= zero_risk:
        return (
            f"Meeting α promises nothing here: predicting zero already has excess risk R(0) = {zero_risk:.3g} ≤ "
            f"α = {alpha:g}."
        )
    return (
        f"Meeting α bounds the excess risk on the training objective, not the held-out quality: α = {alpha:g} is "
        f"{alpha / zero_risk:.0%} of R(0) = {zero_risk:.3g}, the excess risk of predicting zero, so a model that keeps "
        f"only {1 - alpha / zero_risk:.0%} of what θ* gains over predicting zero meets it."
    )


def accuracy_section(
    chosen: Selection, problem: Problem, results: pd.DataFrame, replay: Replay, alpha: float | None
) -> None:
    """Each trial's excess risk against the target (α, or the share of the gain when ``alpha`` is ``None``), and the
    replayed models' held-out quality beside θ*'s."""
    st.subheader("Accuracy reached")
    left, right = st.columns(2)
    with left:
        show_chart(
            figure_relative_risk(results) if alpha is None else figure_excess_risk(results, alpha), "excess_risk"
        )
    released = {m: run for m, run in replay.traced.items() if run.theta is not None and not isinstance(run, NoSignal)}
    if not replay.traced:
        return
    with right, package_errors(stop=False):
        data = chosen.data
        rows = [(NONPRIVATE, "nonprivate", data.test_quality(problem.theta_star))]
        rows += [
            (f"{method_label(m)} (trial {replay.show})", m, data.test_quality(run.theta)) for m, run in released.items()
        ]
        if len(rows) > 1:
            quality = pd.DataFrame(
                [(name, key, metric, value) for name, key, scores in rows for metric, value in scores.items()],
                columns=["model", "method", "metric", "value"],
            )
            show_chart(figure_test_quality(quality), "test_quality")
        lines = [quality_sentence(rows, data.task) if len(rows) > 1 else "", above_reference(rows, data.task)]
        lines += [alpha_against_zero(alpha, problem.zero_risk) if alpha is not None else ""]
        lines += [
            f"Not drawn: {method_label(m)} released no model in trial {replay.show} "
            f"({'no signal' if isinstance(run, NoSignal) else 'no level passed its test'})."
            for m, run in replay.traced.items()
            if m not in released
        ]
        st.caption(plain(" ".join(line for line in lines if line) + " θ* is the exact, non-private minimiser."))
