"""Figures of a queue of analyses under one budget (docs/mathematics.md#many-analyses-one-budget): ``run_session``
ledgers in, a figure out.

[derived; consistent with Rogers et al. 2023] Pure functions (CONVENTIONS). Regressions
are charged in ε (ex-post filter) and counts in ρ (zCDP filter), so charges are drawn as a
share of their own part of the budget: one scale for both.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import METHODS
from accfirst.plots import layout, method_color, wrap

# Where a refused analysis is drawn: just above the axis, so that its cross stays visible.
REFUSED_Y = 1.0


def figure_ledger(ledgers: Mapping[str, pd.DataFrame]) -> go.Figure:
    """Per analysis, what each queue was charged (bars) and had declared (ticks), as % of its part of the budget.

    ``ledgers`` maps a queue's method (noise reduction's key for the queue as queued, another method's for its twin) to
    its ledger; refused analyses
    are crosses marked "refused".
    """
    fig = go.Figure()
    for method, ledger in ledgers.items():
        name = (
            "noise reduction queue"
            if method == NoiseReduction.key
            else f"the same queue under {METHODS[method].in_sentence}"
        )
        share = 100 * ledger["realised"] / ledger["budget"]
        declared = 100 * ledger["declared"] / ledger["budget"]
        x = [f"{i}. {kind}" for i, kind in zip(ledger["analysis"], ledger["kind"])]
        refused = ledger["status"] == "refused"
        fig.add_trace(
            go.Bar(
                x=x,
                y=share,
                name=f"{name}: charged",
                marker={"color": method_color(method)},
                offsetgroup=method,
                customdata=ledger[["label", "unit", "realised", "declared", "note"]],
                hovertemplate="%{customdata[0]}<br>charged %{customdata[2]:.3g} %{customdata[1]} (%{y:.1f}% of its "
                "part)<br>declared %{customdata[3]:.3g}<br>%{customdata[4]}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=declared.where(~refused),
                mode="markers",
                name=f"{name}: declared bound",
                marker={
                    "symbol": "line-ew",
                    "size": 22,
                    "color": method_color(method),
                    "line": {"width": 3, "color": method_color(method)},
                },
                offsetgroup=method,
                hovertemplate="declared %{y:.1f}% of its part<extra></extra>",
            )
        )
        if refused.any():
            fig.add_trace(
                go.Scatter(
                    x=[label for label, r in zip(x, refused) if r],
                    y=[REFUSED_Y] * int(refused.sum()),
                    mode="markers",
                    marker={"symbol": "x", "size": 12, "color": method_color(method)},
                    offsetgroup=method,
                    name=f"{name}: refused",
                    hovertemplate="refused: did not fit in what was left<extra></extra>",
                )
            )
    fig.update_layout(barmode="group", scattermode="group")
    fig.update_yaxes(title={"text": "% of its part of the budget"}, rangemode="tozero")
    fig.update_xaxes(title={"text": "analysis, in queue order"}, type="category")
    subtitle = wrap("Bars: what was charged; ticks: the bound declared before it ran (the difference went back).")
    return layout(fig, title="Privacy charged per analysis", height=300, subtitle=subtitle)
