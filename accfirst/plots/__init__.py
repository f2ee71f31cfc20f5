"""Pure figure builders: a results DataFrame in, a plotly ``go.Figure`` out.

They compute nothing private and import no Streamlit (CONVENTIONS), so the app, the
CLI and a notebook draw the same figures. ``explorer`` holds the explorer page's
figures of ε and the search, ``quality`` its figures of the accuracy reached; ``paper`` the paper's. The shared look (one colour per method, the order
methods appear in, a layout that holds from phone to desktop width, axis labels without
SI prefixes) lives here so every figure agrees.

No figure sets a template or a background: the app's theme (light or dark) styles them,
and the offline report applies a light or dark template of its own. Colours drawn on the
plot itself are mid-tones that read on both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from pandas.core.groupby import SeriesGroupBy

from accfirst.interpret import SUPERSCRIPTS, format_delta, preparation_label, quantile_with_inf
from accfirst.methods.registry import METHODS
from accfirst.methods.registry import method_label as registry_label

NONPRIVATE_COLOR = "#777777"
# Reference lines (y = α, the bound M): visible on a light and on a dark background.
REFERENCE_COLOR = "#8C8C8C"

TITLE_LINE_PX = 22
SUBTITLE_LINE_PX = 17
LEGEND_ROW_PX = 21
X_AXIS_PX = 60
# Roughly what fits on one subtitle line, and on one line of the (larger, bold) title, of a phone-width chart (about
# 360 px).
SUBTITLE_CHARACTERS = 52
TITLE_CHARACTERS = 48


def method_label(method: str, rows: pd.DataFrame | None = None) -> str:
    """The display name of a method key ("nr" → "Noise reduction").

    Given the method's ``rows`` of a results frame, a δ of the method's own is named with it ("Gibbs
    posterior (δ = 10⁻⁶)", the largest δ of the rows), so that an (ε, δ) guarantee is never
    read as pure ε beside the other methods. The δ a private preparation adds to every run on the
    table (``delta_prep``) is the same for every method: it is not a label's.
    """
    label = registry_label(method)
    if rows is not None and "delta" in rows.columns and len(rows):
        own = rows["delta"].astype(float) - (rows["delta_prep"].astype(float) if "delta_prep" in rows.columns else 0.0)
        if float(own.max()) > 0:
            label += f" (δ = {format_delta(float(rows['delta'].max()))})"
    return label


def method_color(method: str) -> str:
    """The colour every figure uses for ``method`` (its registered colour; grey for anything else)."""
    return METHODS[method].color if method in METHODS else NONPRIVATE_COLOR


def methods_in(results: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The methods present in ``results``, in registry order (unknown keys last), minus ``exclude``."""
    present = [m for m in dict.fromkeys(results["method"]) if m not in exclude]
    return [m for m in METHODS if m in present] + [m for m in present if m not in METHODS]


def testing_methods(results: pd.DataFrame) -> list[str]:
    """The methods present in ``results`` that test hypotheses privately: they have a search to show."""
    return [m for m in methods_in(results) if m in METHODS and METHODS[m].tests_accuracy]


def wrap(text: str, width: int = SUBTITLE_CHARACTERS) -> str:
    """``text`` broken into lines of at most ``width`` characters with ``<br>`` (plotly does not wrap)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def preparation_tag(results: pd.DataFrame) -> str:
    """What the ε of these runs say about their rows' preparation (``interpret.preparation_label``).

    Every figure of ε on prepared rows carries it: "includes preparing the data, ε = …", or the
    evaluation-only label; ``""`` for public data, rows given as they are, or an older frame.
    """
    if results.empty or "prep_mode" not in results.columns:
        return ""
    return preparation_label(str(results["prep_mode"].iloc[0]), float(results["eps_prep"].iloc[0]))


def layout(fig: go.Figure, *, title: str, height: int, subtitle: str = "") -> go.Figure:
    """The shared look, readable from phone to desktop width.

    ``height`` is the plot area in pixels; room is added above for the title (wrapped to what a phone-width chart
    fits on a line: plotly does not wrap) and the subtitle (one line per ``<br>``) and below for the x axis and the
    legend, budgeting one legend row per entry (and per ``<br>`` in its name), so nothing overlaps even when every
    entry wraps onto its own row. Number axes never use SI prefixes ("10µ"): powers of ten are written as such.
    """
    title = "<br>".join(wrap(line, TITLE_CHARACTERS) for line in title.split("<br>"))
    shown = [t for t in fig.data if t.showlegend or (t.showlegend is None and len(fig.data) > 1)]
    legend_rows = sum(str(t.name).count("<br>") + 1 for t in shown)
    subtitle_lines = subtitle.count("<br>") + 1 if subtitle else 0
    top = 20 + TITLE_LINE_PX * (title.count("<br>") + 1) + SUBTITLE_LINE_PX * subtitle_lines + 12
    bottom = X_AXIS_PX + LEGEND_ROW_PX * legend_rows
    total = height + top + bottom
    fig.update_layout(
        title={
            "text": title,
            "subtitle": {"text": subtitle},
            "x": 0,
            "xanchor": "left",
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 10},
        },
        height=total,
        margin={"l": 10, "r": 10, "t": top, "b": bottom},
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 4 / total,
            "yanchor": "bottom",
            "x": 0,
            "xanchor": "left",
        },
        hoverlabel={"namelength": -1},
    )
    fig.update_xaxes(exponentformat="power")
    fig.update_yaxes(exponentformat="power")
    return fig


def reference_line(x: ArrayLike, y: ArrayLike, name: str, hovertemplate: str) -> go.Scatter:
    """A dashed grey line the results are read against (y = α, a bound on ‖θ‖), with its legend entry."""
    return go.Scatter(
        x=x, y=y, mode="lines", name=name, line={"color": REFERENCE_COLOR, "dash": "dash"}, hovertemplate=hovertemplate
    )


def method_line(
    method: str,
    x: ArrayLike,
    y: ArrayLike | Sequence[float | None],
    name: str,
    dash: str | None = None,
    **trace: object,
) -> go.Scatter:
    """One line of a method's, in its colour, grouped in the legend with its other lines; ``trace``: more properties."""
    line = {"color": method_color(method)} if dash is None else {"color": method_color(method), "dash": dash}
    return go.Scatter(x=x, y=y, mode="lines+markers", name=name, legendgroup=method, line=line, **trace)


def quantile_lines(
    fig: go.Figure,
    method: str,
    label: str,
    grouped: SeriesGroupBy[Any, Any],
    quantiles: Sequence[tuple[float, str]],
    hover: str,
) -> None:
    """Add ``method``'s lines of ``grouped``'s quantiles (∞ kept) against the groups' keys: the first quantile solid,
    the others dotted; ``hover`` is the hover's middle, e.g. "κ = %{x}<br>{name} R(θ)/R(0)" ("{name}" the quantile's)."""
    for i, (q, name) in enumerate(quantiles):
        values = grouped.apply(functools.partial(_quantile_of, q=q))
        fig.add_trace(
            method_line(
                method,
                values.index,
                values.to_numpy(),
                f"{label}: {name}",
                "solid" if i == 0 else "dot",
                hovertemplate=f"{label}<br>{hover.format(name=name)} = %{{y:.4g}}<extra></extra>",
            )
        )


def _quantile_of(values: pd.Series, q: float) -> float:
    return quantile_with_inf(values.to_numpy(), q)


def mark_target(fig: go.Figure, y: float, text: str) -> None:
    """A thin dashed line across the plot at the target ``y``, labelled at its right end."""
    fig.add_hline(y=y, line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1})
    fig.add_annotation(x=1, xref="paper", y=y, text=text, showarrow=False, xanchor="right", yanchor="bottom")


def mark_log_x(fig: go.Figure, x: float, text: str, line: dict[str, object], xanchor: str, yanchor: str) -> None:
    """A vertical line at ``x`` on a log x axis, labelled at the top of the plot (annotations there take log10 x)."""
    fig.add_vline(x=x, line=line)
    fig.add_annotation(x=math.log10(x), y=1, yref="paper", text=text, showarrow=False, xanchor=xanchor, yanchor=yanchor)


# Tick sets for a log axis, coarsest first: decades, then 1-3, 1-2-5 and finer per decade.
_LOG_MANTISSAS = ((1.0,), (1.0, 3.0), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0))
_MAX_DECADE_TICKS = 8


def log_ticks(values: ArrayLike) -> dict[str, object]:
    """Explicit ticks for a log axis over ``values``: the coarsest set that puts at least three labels
    inside the data's range (decades, thinned to about eight; else 1-3, 1-2-5, … per decade), written
    plainly from 0.001 to 10⁵ and as powers of ten beyond ("3×10⁻⁵", "10⁴⁸"), never with SI prefixes.
    ``{}`` (plotly's own ticks) when no value is positive and finite."""
    array = np.asarray(values, dtype=np.float64).ravel()
    positive = array[np.isfinite(array) & (array > 0)]
    if positive.size == 0:
        return {}
    low, high = float(positive.min()), float(positive.max())
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    for mantissas in _LOG_MANTISSAS:
        step = max(1, math.ceil((last - first) / _MAX_DECADE_TICKS)) if len(mantissas) == 1 else 1
        ticks = [m * 10.0**k for k in range(first - first % step, last + 1, step) for m in mantissas]
        if sum(low <= t <= high for t in ticks) >= 3:
            break
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [_tick_label(t) for t in ticks]}


def _tick_label(value: float) -> str:
    if 1e-3 <= value < 1e5:
        return f"{value:g}"
    exponent = math.floor(math.log10(value) + 1e-9)
    mantissa = value / 10.0**exponent
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    return power if round(mantissa, 6) == 1 else f"{mantissa:g}×{power}"


__all__ = [
    "NONPRIVATE_COLOR",
    "REFERENCE_COLOR",
    "layout",
    "log_ticks",
    "mark_log_x",
    "mark_target",
    "method_color",
    "method_label",
    "method_line",
    "methods_in",
    "reference_line",
    "testing_methods",
    "wrap",
]
