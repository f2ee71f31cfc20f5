"""The figures and the report of a sweep over targets in the units people read: R² ≥ r (ridge) or accuracy ≥ a
(logistic), certified by noise reduction with λ chosen privately (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee, docs/mathematics.md#refusals-that-spend-nothing).

Pure functions of a results frame whose rows carry ``target`` and ``goal`` (``run_trials(..., goals=...)`` or a sweep
with ``--r2``/``--accuracy``): the bill per goal (from ``summarise_certified``, one goal at a time), where the privacy
went, and the in-sample quality each released model reached against its goal. That quality reads the data exactly:
evaluation only, and labelled so. A run refused before reading spent nothing and is counted, not drawn.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from accfirst.docs import docs_reference
from accfirst.interpret import format_epsilon
from accfirst.interpret.certified import CERTIFIED_PARTS, UNITS, stopped_sentence, summarise_certified, target_text
from accfirst.plots import layout, method_color, method_label, methods_in, quantile_lines, reference_line
from accfirst.plots.paper import PLOT_HEIGHT
from accfirst.plots.report import html_page

#: Bar patterns of the parts of a certified run's ε, in ``CERTIFIED_PARTS``' order.
_PATTERNS = ("", "x", ".", "/")


def certified_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``df`` that ran toward a target in R² or accuracy."""
    if "target" not in df.columns:
        return df.iloc[:0]
    return df[df["target"].fillna("").astype(str).isin(UNITS)]


def _unit(rows: pd.DataFrame) -> str:
    return UNITS[str(rows["target"].iloc[0])]


def certified_summary(df: pd.DataFrame) -> pd.DataFrame:
    """``summarise_certified`` of each goal's runs, goal by goal (the smallest first)."""
    rows = certified_rows(df)
    parts = [summarise_certified(runs) for _, runs in rows.groupby(["target", "goal"], sort=True)]
    return pd.concat(parts, ignore_index=True) if parts else summarise_certified(rows)


def certified_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per goal and method: the median ε and its parts, the λ chosen, how many runs released a model, met the goal
    in-sample (evaluation only) or were refused before reading, and why runs released nothing."""
    summary = certified_summary(df)
    return pd.DataFrame(
        {
            "target": [target_text(row) for _, row in summary.iterrows()],
            "method": summary["label"],
            "median ε": summary["median_eps"].to_numpy(dtype=float),  # the report formats it
            **{name: [format_epsilon(v) for v in summary[f"median_{part}"]] for part, name in CERTIFIED_PARTS},
            "median λ chosen": [f"{lam:.3g}" if math.isfinite(lam) else "" for lam in summary["median_lam"]],
            "released": [f"{row['released']}/{row['trials']}" for _, row in summary.iterrows()],
            "met in-sample (evaluation only)": [f"{row['met']}/{row['released']}" for _, row in summary.iterrows()],
            "refused before reading": [f"{row['refused']}/{row['trials']}" for _, row in summary.iterrows()],
            "why nothing was released": [stopped_sentence(row) for _, row in summary.iterrows()],
        }
    )


def figure_certified_parts(df: pd.DataFrame) -> go.Figure:
    """The median ε of each goal split into its parts (the preparation, the targets' variance, the private check, the
    model): one stacked bar per method and goal, a refused goal at 0."""
    summary = certified_summary(df)
    fig = go.Figure()
    for method, rows in summary.groupby("method", sort=False):
        label = method_label(str(method))
        names = [target_text(row) for _, row in rows.iterrows()]
        base = np.zeros(len(rows))
        for (part, name), pattern in zip(CERTIFIED_PARTS, _PATTERNS, strict=True):
            values = np.nan_to_num(rows[f"median_{part}"].to_numpy(dtype=float))
            fig.add_trace(
                go.Bar(
                    x=names,
                    y=values,
                    base=base.copy(),
                    offsetgroup=str(method),
                    name=f"{label}: {name}",
                    legendgroup=str(method),
                    marker={"color": method_color(str(method)), "pattern": {"shape": pattern}},
                    hovertemplate=f"{label}, {name}<br>%{{x}}: median ε = %{{y:.4g}}<extra></extra>",
                )
            )
            base += values
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="median ε over all runs, by part", rangemode="tozero")
    fig.update_xaxes(title_text="the certified target")
    return layout(fig, title="Where the privacy goes, per target", height=PLOT_HEIGHT)


def figure_certified_quality(df: pd.DataFrame) -> go.Figure:
    """Each released model's in-sample R² or accuracy against its goal: the median and the 10th percentile per method,
    and the goal itself (evaluation only: it reads the training rows exactly)."""
    rows_all = certified_rows(df)
    released = rows_all[~rows_all["nothing_released"].astype(bool)]
    fig = go.Figure()
    for method in methods_in(released):
        mine = released[released["method"] == method]
        by_goal = mine.groupby("goal", sort=True)["quality"]
        quantiles = ((0.5, "median"), (0.1, "10th percentile"))
        quantile_lines(fig, method, method_label(method, mine), by_goal, quantiles, "goal %{{x}}<br>{name} in-sample")
    goals = np.sort(rows_all["goal"].unique())
    fig.add_trace(reference_line(goals, goals, "the goal", "goal = %{x}<extra></extra>"))
    unit = _unit(rows_all) if len(rows_all) else "quality"
    fig.update_xaxes(title_text=f"the certified {unit} goal")
    fig.update_yaxes(title_text=f"in-sample {unit} of the released models (evaluation only)")
    nothing = len(rows_all) - len(released)
    subtitle = f"{nothing} of {len(rows_all)} runs released nothing and are not drawn" if nothing else ""
    return layout(fig, title=f"Accuracy reached: {unit} against the goal", subtitle=subtitle, height=PLOT_HEIGHT)


def html_certified_report(df: pd.DataFrame, settings: Mapping[str, object], preparation: Sequence[str] = ()) -> str:
    """The offline report of a sweep over targets in R² or accuracy: the settings, the preparation, the bill per
    target and the two figures."""
    intro = f"""<p>Each run had to <strong>certify</strong> its model's in-sample {html.escape(_unit(certified_rows(df)))}:
with probability at least 1 − γ the released model meets the goal. Noise reduction released models at rising ε
for every λ of a public grid under one private check, and released the first that passed, whatever its λ
({html.escape(docs_reference("mathematics", "a-target-in-the-units-people-read"))},
{html.escape(docs_reference("mathematics", "choosing-λ-under-the-guarantee"))}). A target no table of this size could
meet within the ceiling was refused before the data were read, spending nothing
({html.escape(docs_reference("mathematics", "refusals-that-spend-nothing"))}). The in-sample figures read the data:
evaluation only.</p>"""
    return html_page(
        "accfirst target sweep report",
        "Accuracy-first sweep over certified targets",
        intro,
        settings,
        "Median ex-post privacy loss per target and its parts",
        certified_table(df),
        [figure_certified_parts(df), figure_certified_quality(df)],
        preparation,
    )
