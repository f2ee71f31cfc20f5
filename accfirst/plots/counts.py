"""Figures of a relative-error count release (docs/mathematics.md#counts-to-a-relative-error): a ``release_counts``
frame in, a figure out.

[derived; consistent with Rogers et al. 2023] Pure functions (CONVENTIONS). The frame may
hold both arms (column ``method``: "nr", "doubling"). True counts and realised relative
errors read the data: they are evaluation only, not private, and labelled so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from accfirst.plots import layout, log_ticks, mark_target, method_color, method_label, methods_in, wrap

EVALUATION_ONLY = "evaluation only, not private"


def _layout(
    fig: go.Figure,
    title: str,
    subtitle: str,
    x_title: str,
    y_title: str,
    *,
    log_x: ArrayLike | None = None,
    log_y: ArrayLike | None = None,
) -> go.Figure:
    """The shared look (``accfirst.plots.layout``); ``log_x``/``log_y``: the values a log axis must span."""
    for axis, text, values in ((fig.update_xaxes, x_title, log_x), (fig.update_yaxes, y_title, log_y)):
        axis(title={"text": text})
        if values is not None:
            axis(type="log", **log_ticks(values))
    fig.update_layout(hovermode="closest")
    return layout(fig, title=title, height=300, subtitle=wrap(subtitle))


def figure_counts_certified(frame: pd.DataFrame) -> go.Figure:
    """How far the budget goes: counts certified so far against the ρ spent so far, per method."""
    fig = go.Figure()
    for method in methods_in(frame):
        rows = frame[frame["method"] == method]
        fig.add_trace(
            go.Scatter(
                x=np.concatenate([[0.0], rows["spent"]]),
                y=np.concatenate([[0], rows["certified"].cumsum()]),
                mode="lines",
                line={"shape": "hv", "color": method_color(method)},
                name=f"{method_label(method)}: {int(rows['certified'].sum())} certified",
                hovertemplate="ρ spent %{x:.3g}<br>%{y} counts certified<extra></extra>",
            )
        )
    return _layout(
        fig,
        "Counts certified before the budget runs out",
        "Each certified within the relative error α, against the ρ spent so far.",
        "ρ spent so far (zCDP)",
        "counts certified",
    )


def figure_counts_errors(frame: pd.DataFrame, rel_error: float) -> go.Figure:
    """The realised relative error |ŷ − q|/q of every certified count against its true count q."""
    fig = go.Figure()
    for method in methods_in(frame):
        rows = frame[(frame["method"] == method) & frame["certified"]]
        fig.add_trace(
            go.Scatter(
                x=rows["count"],
                y=rows["rel_error"],
                mode="markers",
                marker={"color": method_color(method), "size": 6, "opacity": 0.7},
                name=method_label(method),
                hovertemplate="true count %{x:.4g}<br>relative error %{y:.3g}<extra>" + EVALUATION_ONLY + "</extra>",
            )
        )
    mark_target(fig, rel_error, f"target α = {rel_error:g}")
    certified = frame[frame["certified"]]
    return _layout(
        fig,
        "Relative error of each certified count",
        f"{EVALUATION_ONLY.capitalize()}: it reads the true counts.",
        "true count (log scale)",
        "relative error |ŷ − q| / q",
        log_x=certified["count"],
    )


def figure_counts_privacy(frame: pd.DataFrame) -> go.Figure:
    """The ρ each count was charged against its true count; counts never certified drawn as crosses."""
    fig = go.Figure()
    for method in methods_in(frame):
        rows = frame[(frame["method"] == method) & (frame["status"] != "refused")]
        for certified, symbol, what in ((True, "circle", "certified"), (False, "x", "not certified")):
            part = rows[rows["certified"] == certified]
            if part.empty:
                continue
            fig.add_trace(
                go.Scatter(
                    x=part["count"],
                    y=part["rho"],
                    mode="markers",
                    marker={"color": method_color(method), "symbol": symbol, "size": 7, "opacity": 0.75},
                    name=f"{method_label(method)}: {what}",
                    hovertemplate="true count %{x:.4g}<br>ρ charged %{y:.3g}<extra>" + EVALUATION_ONLY + "</extra>",
                )
            )
    tried = frame[frame["status"] != "refused"]
    return _layout(
        fig,
        "Privacy charged per count",
        "Large counts are cheap; crosses were never certified.",
        "true count (log scale)",
        "ρ charged (log scale)",
        log_x=tried["count"],
        log_y=tried["rho"],
    )


def count_figures(frame: pd.DataFrame, rel_error: float) -> list[go.Figure]:
    """The figures of the counts report."""
    return [figure_counts_certified(frame), figure_counts_errors(frame, rel_error), figure_counts_privacy(frame)]
