"""The figures and the report of a relative target κ (docs/mathematics.md#a-relative-accuracy-target): runs at several
κ, several methods.

Pure functions of a results frame whose rows carry ``kappa`` (``run_trials(..., kappas=...)`` or a
κ sweep): the table of the bill per κ (ε_S for the private bound on R(0), the test, the model),
the ε parts per κ, and the accuracy reached as the share of the best model's gain that was lost,
R(θ)/R(0), against κ. R(0) and R(θ) read the data: evaluation only, and labelled so. A run whose
Ŝ showed no signal (``alpha`` NaN) released θ = 0: its R(θ)/R(0) is 1, and the table counts it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import NDArray

from accfirst.docs import docs_reference
from accfirst.interpret import format_epsilon, median_with_inf
from accfirst.plots import layout, log_ticks, method_color, method_label, methods_in, quantile_lines, reference_line
from accfirst.plots.paper import PLOT_HEIGHT
from accfirst.plots.report import html_page

RELATIVE_HOVER = "κ = %{{x}}<br>{name} R(θ)/R(0)"
KAPPA_AXIS = "κ (largest share of the best model's gain the model may lose)"
# The parts of a relative run's ε: (column, name in figures, bar pattern).
PARTS = (
    ("eps_scale", "bounding R(0) (ε_S)", "x"),
    ("eps_test", "testing", ""),
    ("eps_hypothesis", "generating", "/"),
)


def relative_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``df`` that ran at a relative target κ."""
    return df[df["kappa"].notna()] if "kappa" in df.columns else df.iloc[:0]


def _bill(runs: pd.DataFrame) -> dict[str, float]:
    """Median ε (every run at its charge: a fallback at its declared top, or ∞ for θ*) and the median parts over the
    runs that released a private model."""
    released = runs[runs["alpha"].notna() & ~runs["fallback"].astype(bool)]
    parts = {column: float(released[column].median()) if len(released) else math.nan for column, _, _ in PARTS[1:]}
    return {"eps_total": median_with_inf(runs["eps_total"]), "eps_scale": float(runs["eps_scale"].median()), **parts}


def relative_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per κ and method: the median bill and its parts, the released α, and how often the target was kept.

    ``median ε`` counts a fallback as ∞ (docs/mathematics.md#what-a-run-reports); testing and generating are medians
    over the runs that released a private model (no fallback, no "no signal"); ``kept`` is the share of runs with R(θ) ≤
    κ·R(0) (evaluation only).
    """
    rows = []
    for kappa, runs_at in relative_rows(df).groupby("kappa", sort=True):
        for method in methods_in(runs_at):
            runs = runs_at[runs_at["method"] == method]
            bill = _bill(runs)
            no_signal = runs["alpha"].isna()
            rows.append(
                {
                    "κ": kappa,
                    "method": method_label(method, runs),
                    "median ε": bill["eps_total"],
                    "ε_S": bill["eps_scale"],
                    "testing": bill["eps_test"],
                    "generating": bill["eps_hypothesis"],
                    "median released α": float(runs["alpha"].median()) if (~no_signal).any() else math.nan,
                    "kept ≥ 1 − κ (evaluation only)": f"{runs['success'].astype(bool).mean():.0%}",
                    "no signal": f"{no_signal.mean():.0%}",
                    "fallback share": float(runs["fallback"].astype(bool).mean()),
                }
            )
    return pd.DataFrame(rows)


def figure_relative_parts(df: pd.DataFrame) -> go.Figure:
    """The median ε of each κ split into its parts (ε_S, testing, generating): one stacked bar per method and κ."""
    fig = go.Figure()
    rows_all = relative_rows(df)
    for method in methods_in(rows_all):
        mine = rows_all[rows_all["method"] == method]
        kappas = sorted(mine["kappa"].unique())
        bills = [_bill(mine[mine["kappa"] == kappa]) for kappa in kappas]
        label = method_label(method, mine)
        base = np.zeros(len(kappas))
        for column, part, pattern in PARTS:
            values = np.nan_to_num([bill[column] for bill in bills])
            fig.add_trace(
                go.Bar(
                    x=[f"κ = {kappa:g}" for kappa in kappas],
                    y=values,
                    base=base.copy(),
                    offsetgroup=method,
                    name=f"{label}: {part}",
                    legendgroup=method,
                    marker={"color": method_color(method), "pattern": {"shape": pattern}},
                    hovertemplate=f"{label}, {part}<br>%{{x}}: median ε = %{{y:.4g}}<extra></extra>",
                )
            )
            base += values
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="median ε (parts over released runs)", rangemode="tozero")
    fig.update_xaxes(title_text=KAPPA_AXIS)
    return layout(fig, title="Where the privacy goes, per κ", height=PLOT_HEIGHT)


def figure_relative_accuracy(df: pd.DataFrame) -> go.Figure:
    """R(θ)/R(0) against κ: median and 90th percentile per method, and the target y = κ (evaluation only)."""
    fig = go.Figure()
    rows_all = relative_rows(df)
    for method in methods_in(rows_all):
        rows = rows_all[rows_all["method"] == method]
        lost = (rows["excess_risk"] / rows["r0"]).groupby(rows["kappa"], sort=True)
        label = method_label(method, rows)
        quantile_lines(fig, method, label, lost, ((0.5, "median"), (0.9, "90th percentile")), RELATIVE_HOVER)
    kappas = np.sort(rows_all["kappa"].unique())
    fig.add_trace(reference_line(kappas, kappas, "target y = κ", "y = κ = %{x}<extra></extra>"))
    drawn: NDArray[np.float64] | list[float] = (
        np.concatenate([np.asarray(t.y, dtype=np.float64) for t in fig.data]) if fig.data else []
    )
    fig.update_xaxes(type="log", title_text=KAPPA_AXIS, **log_ticks(kappas))
    fig.update_yaxes(type="log", title_text="R(θ)/R(0), log scale (evaluation only)", **log_ticks(drawn))
    return layout(
        fig,
        title="Accuracy reached: the share of the gain lost",
        subtitle="excess risk over the zero model's, against the requested κ",
        height=PLOT_HEIGHT,
    )


def html_relative_report(df: pd.DataFrame, settings: Mapping[str, object], preparation: Sequence[str] = ()) -> str:
    """The offline report of a κ sweep: the settings, the preparation, the bill per κ and the two figures."""
    intro = f"""<p>The target was <strong>relative</strong>: each run had to keep at least 1 − κ of what the
best model gains over predicting nothing (excess risk ≤ κ·R(0)). Each run first released a private lower
bound Ŝ of R(0), paying ε_S, then ran its method at α = κ·Ŝ with failure probability γ − β_S; its total ε
includes ε_S (derived; {html.escape(docs_reference("mathematics", "a-relative-accuracy-target"))}).
A run whose bound showed no signal a private model could keep at the test budget learnt nothing and
paid ε_S alone. R(0) and R(θ) read the data: evaluation only.</p>"""
    table = relative_table(df)
    shown = table.assign(
        **{
            column: [format_epsilon(v) if not math.isnan(v) else "" for v in table[column]]
            for column in ("ε_S", "testing", "generating")
        }
    )
    return html_page(
        "accfirst κ sweep report",
        "Accuracy-first sweep at a relative target κ",
        intro,
        settings,
        "Median ex-post privacy loss per κ and its parts",
        shown,
        [figure_relative_parts(df), figure_relative_accuracy(df)],
        preparation,
    )
