"""The explorer's accuracy figures: how close each trial came to its target (an excess risk α, a share κ of the
gain, or a goal in R² or accuracy), and the models' quality on the held-out test set.

Every value here reads the data without noise: evaluation only, and labelled so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from accfirst.plots import (
    NONPRIVATE_COLOR,
    REFERENCE_COLOR,
    layout,
    log_ticks,
    mark_log_x,
    method_color,
    method_label,
    methods_in,
)
from accfirst.plots.explorer import EVALUATION_ONLY, _require, _trial_strip

# Excess risks of 0 (logistic risks are clipped at 0) still need a place on a log axis.
RISK_FLOOR = 1e-12


def figure_excess_risk(results: pd.DataFrame, alpha: float) -> go.Figure:
    """Accuracy reached (output 5): each trial's true excess risk vs the target α, per method.

    Log axis; the success rate (share with R ≤ α) is in each method's label. The risks
    are evaluation-only numbers, not private.
    """
    _require(results, ("method", "trial", "excess_risk", "success"), "figure_excess_risk")
    return _accuracy_strips(
        results,
        results["excess_risk"],
        (alpha, f"α = {alpha:g}", "≤ α"),
        "true excess risk R(θ), log scale",
        "Accuracy reached: excess risk vs the target α",
    )


def figure_relative_risk(results: pd.DataFrame) -> go.Figure:
    """Accuracy reached at a relative target κ (docs/mathematics.md#a-relative-accuracy-target): each trial's R(θ)/R(0)
    vs κ, per method.

    R(θ)/R(0) is the share of the best model's gain over predicting nothing that the model gave up
    (1 for a run that showed no signal: it released θ = 0). The success rate (share with R ≤ κ·R(0))
    is in each method's label. Evaluation only: R(θ) and R(0) read the data.
    """
    _require(results, ("method", "trial", "excess_risk", "r0", "kappa", "success"), "figure_relative_risk")
    kappa = float(results["kappa"].iloc[0])
    return _accuracy_strips(
        results,
        results["excess_risk"] / results["r0"],
        (kappa, f"κ = {kappa:g}: keep ≥ {1 - kappa:.0%}", f"kept ≥ {1 - kappa:.0%}"),
        "share of the gain lost, R(θ)/R(0), log scale",
        "Accuracy reached: the share of the gain lost vs κ",
    )


def _accuracy_strips(
    results: pd.DataFrame, values: pd.Series, target: tuple[float, str, str], axis: str, title: str
) -> go.Figure:
    """Each trial's ``values`` per method on a log axis, with the target's line; (value, line label, met label)."""
    line, line_label, met = target
    fig = go.Figure()
    for method in methods_in(results):
        runs = results[results["method"] == method]
        rate = float(runs["success"].astype(bool).mean())
        shown = values[runs.index].to_numpy(dtype=float)
        fig.add_trace(
            _trial_strip(
                np.maximum(shown, RISK_FLOOR),
                f"{method_label(method, runs)}<br>({rate:.0%} {met})",
                method,
                customdata=np.column_stack([runs["trial"], shown]),
                hovertemplate="trial %{customdata[0]}: %{customdata[1]:.4g}<extra></extra>",
            )
        )
    mark_log_x(fig, line, line_label, {"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, "left", "bottom")
    fig.update_xaxes(
        type="log",
        title_text=f"{axis}<br><sup>{EVALUATION_ONLY}</sup>",
        **log_ticks(np.append(np.maximum(values.to_numpy(dtype=float), RISK_FLOOR), line)),
    )
    fig.update_yaxes(autorange="reversed")
    return layout(fig, title=title, height=60 + 70 * max(len(fig.data), 1))


def figure_quality_reached(results: pd.DataFrame, unit: str, goal: float) -> go.Figure:
    """Accuracy reached toward a target in R² or accuracy (docs/mathematics.md#a-target-in-the-units-people-read): each
    released model's in-sample quality (what the test certified) and, where the frame has a ``heldout`` column, its
    quality on the held-out rows, against the goal.

    Runs that released nothing are counted in the title, not drawn. Evaluation only: both read the data exactly.
    """
    _require(results, ("method", "trial", "quality", "nothing_released"), "figure_quality_reached")
    released = results[~results["nothing_released"].astype(bool)]
    fig = go.Figure()
    for column, where in (("quality", "in-sample"), ("heldout", "held out")):
        if column not in released.columns:
            continue
        values = released[column].to_numpy(dtype=float)
        rate = float(np.mean(values >= goal)) if values.size else 0.0
        fig.add_trace(
            _trial_strip(
                values,
                f"{where}<br>({rate:.0%} ≥ {goal:g})",
                str(results["method"].iloc[0]),
                customdata=released[["trial"]].to_numpy(),
                hovertemplate=f"trial %{{customdata[0]}}: {unit} %{{x:.4g}}<extra></extra>",
            )
        )
    fig.add_vline(x=goal, line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1})
    fig.add_annotation(x=goal, y=1, yref="paper", text=f"{unit} = {goal:g}", showarrow=False, yanchor="bottom")
    fig.update_xaxes(title_text=f"{unit} of each released model<br><sup>{EVALUATION_ONLY}</sup>")
    fig.update_yaxes(autorange="reversed")
    nothing = len(results) - len(released)
    title = f"Accuracy reached: {unit} vs the target"
    if nothing:
        title += f" ({nothing} of {len(results)} runs released nothing)"
    return layout(fig, title=title, height=60 + 70 * max(len(fig.data), 1))


# Short enough for two panels side by side at phone width.
QUALITY_BAR_PX = 30
# Between two panels: the lower one's title and the upper one's x axis.
QUALITY_TITLE_PX = 60
QUALITY_LABELS = {
    "r2": "R² (↑ better)",
    "mse": "MSE (↓ better)",
    "rmse": "RMSE, target's units (↓)",
    "accuracy": "accuracy (↑ better)",
    "auc": "AUC (↑ better)",
}


def _quality_text(value: float) -> str:
    """A metric's value beside its bar: 3 significant digits, large values written out ("3,358", not "3.36e+03")."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def figure_test_quality(quality: pd.DataFrame) -> go.Figure:
    """Downstream quality on the held-out test set (output 5): θ* vs each private θ.

    One panel per metric, stacked, each with its title above it and its values written beside the bars: three
    panels side by side overlapped their titles and cut their values at phone width.

    Parameters
    ----------
    quality : one row per (model, metric) with columns ``model`` (display name),
        ``method`` (a method key, or "nonprivate" for θ*), ``metric`` and ``value``.
    """
    _require(quality, ("model", "method", "metric", "value"), "figure_test_quality")
    metrics = list(dict.fromkeys(quality["metric"]))
    models = max(quality["model"].nunique(), 1)
    panel = QUALITY_BAR_PX * models
    gap = QUALITY_TITLE_PX
    height = len(metrics) * panel + max(len(metrics) - 1, 0) * gap
    fig = make_subplots(
        rows=max(len(metrics), 1),
        cols=1,
        subplot_titles=[QUALITY_LABELS.get(m, m) for m in metrics],
        vertical_spacing=gap / height if len(metrics) > 1 else 0.0,
    )
    for row, metric in enumerate(metrics, start=1):
        rows = quality[quality["metric"] == metric]
        values = rows["value"].astype(float)
        fig.add_trace(
            go.Bar(
                x=values,
                y=rows["model"],
                orientation="h",
                marker={"color": [method_color(m) if m != "nonprivate" else NONPRIVATE_COLOR for m in rows["method"]]},
                text=[_quality_text(v) for v in values],
                textposition="outside",
                cliponaxis=False,
                hovertemplate="%{y}: " + metric + " = %{x:.4g}<extra></extra>",
                showlegend=False,
            ),
            row=row,
            col=1,
        )
        # Room beside the longest bar for its value, on whichever side the bars go.
        low, high = min(float(values.min()), 0.0), max(float(values.max()), 0.0)
        span = (high - low) or 1.0
        fig.update_xaxes(range=[low - 0.3 * span * (low < 0), high + 0.3 * span], row=row, col=1)
        fig.update_yaxes(autorange="reversed", row=row, col=1)
    # Subplot titles sit at the panels' left edge, like the figure's own title.
    fig.update_annotations(x=0, xanchor="left", font={"size": 13})
    return layout(fig, title="Quality on the held-out test set", height=height)
