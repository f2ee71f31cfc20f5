"""The paper's figures (Section 4, Appendix B.2) from a sweep's tidy results frame.

Pure functions ``DataFrame -> go.Figure`` (CONVENTIONS): Fig. 1 ex-post ε vs α,
Fig. 2 achieved excess risk vs α, Fig. 3 the testing/generation breakdown, Fig. 4
final ‖θ‖ vs the bound M; plus the paper's kind of table and an offline HTML report.

Aggregates follow SPEC §9: quantiles treat a fallback's ε = ∞ as ∞ (a median is ∞
when at least half the runs fell back) and never drop fallback rows; the fallback
share is shown in hovers and in the table. A point whose quantile is ∞ cannot be
drawn, so it is left out and the figure says so. The paper plots averages over
80 (ridge) or 40 (logistic) trials; we plot medians with the interquartile band,
which stay finite while fewer than half the runs fall back.

Input: a frame with the ``accfirst.search.experiments.COLUMNS`` (``run_trials`` or
``accfirst.search.sweep.sweep``). Fig. 1's theory curve is E(α) from the ``eps_theory``
column a sweep adds, else from the ``theory`` method's rows (their ε is E).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from accfirst.interpret import quantile_with_inf
from accfirst.plots import TESTING_METHODS, method_color, method_label, methods_in

BAND_OPACITY = 0.18
ALPHA_AXIS = "α (requested excess risk)"
THEORY_CAVEAT = "promises only expected excess risk ≤ α, not w.p. 1 − γ (SPEC §4)"
DELTA_CAVEAT = (
    "A method labelled with δ gives an (ε, δ) guarantee, the others a pure ε: "
    "a smaller ε at δ > 0 is a weaker kind of promise."
)
VERSUS = {"theory": "the theory approach", "doubling": "doubling", "gibbs": "the Gibbs posterior"}
INFINITE_NOTE = "Gaps: the quantile is ∞ there (fallback in that share of runs; SPEC §9)."


def summarise(df: pd.DataFrame, value: str, quantiles: Sequence[float] = (0.25, 0.5, 0.75)) -> pd.DataFrame:
    """Per (method, α): the ∞-aware quantiles of ``value``, the run count and fallback share.

    Columns: method, alpha, ``q25``/``q50``/… (one per quantile, in percent), runs, fallback_share.
    """
    rows = []
    for (method, alpha), group in df.groupby(["method", "alpha"], sort=True):
        row: dict[str, object] = {"method": method, "alpha": alpha}
        for q in quantiles:
            row[_quantile_column(q)] = quantile_with_inf(group[value].to_numpy(dtype=np.float64), q)
        row["runs"] = len(group)
        row["fallback_share"] = float(group["fallback"].astype(bool).mean())
        rows.append(row)
    columns = ["method", "alpha", *(_quantile_column(q) for q in quantiles), "runs", "fallback_share"]
    return pd.DataFrame(rows, columns=columns)


def exp_epsilon(eps: pd.DataFrame | pd.Series) -> pd.DataFrame | pd.Series:
    """e^ε elementwise (SPEC §10), ∞ where ε is ∞ or e^ε overflows a float."""
    with np.errstate(over="ignore"):
        return np.exp(eps)


def _quantile_column(q: float) -> str:
    return f"q{round(q * 100):02d}"


def _finite_or_none(values: pd.Series) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in values]


def _number_text(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "∞"


def _rgba(hex_color: str, opacity: float) -> str:
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{opacity})"


def _add_band(fig: go.Figure, summary: pd.DataFrame, method: str, label: str, low: str, high: str, what: str) -> None:
    """A shaded band between two quantile columns, grouped with the method's median line."""
    color = method_color(method)
    common = {"x": summary["alpha"], "mode": "lines", "line": {"width": 0}, "legendgroup": method, "hoverinfo": "skip"}
    fig.add_trace(
        go.Scatter(
            y=_finite_or_none(summary[low]),
            showlegend=False,
            name=f"{label}: {what} (lower edge)",
            **common,
        )
    )
    fig.add_trace(
        go.Scatter(
            y=_finite_or_none(summary[high]),
            fill="tonexty",
            fillcolor=_rgba(color, BAND_OPACITY),
            name=f"{label}: {what}",
            showlegend=True,
            **common,
        )
    )


def _add_median(fig: go.Figure, summary: pd.DataFrame, method: str, label: str, quantity: str) -> None:
    """The median line, with the IQR and the fallback share in its hover (SPEC §9)."""
    fig.add_trace(
        go.Scatter(
            x=summary["alpha"],
            y=_finite_or_none(summary["q50"]),
            mode="lines+markers",
            name=f"{label}: median",
            legendgroup=method,
            line={"color": method_color(method)},
            customdata=[
                [_number_text(low), _number_text(high), f"{share:.0%} of {runs}"]
                for low, high, share, runs in summary[["q25", "q75", "fallback_share", "runs"]].itertuples(index=False)
            ],
            hovertemplate=(
                f"{label}<br>α = %{{x}}<br>median {quantity} = %{{y:.4g}}"
                "<br>interquartile range %{customdata[0]} – %{customdata[1]}"
                "<br>fallback in %{customdata[2]} runs<extra></extra>"
            ),
        )
    )


def _note(fig: go.Figure, text: str) -> None:
    fig.add_annotation(
        text=text, xref="paper", yref="paper", x=0, y=-0.22, xanchor="left", showarrow=False, font={"size": 11}
    )


def _layout(fig: go.Figure, title: str, y_title: str, log_y: bool = False) -> go.Figure:
    fig.update_layout(
        title={"text": title},
        xaxis_title=ALPHA_AXIS,
        yaxis_title=y_title,
        yaxis_type="log" if log_y else "linear",
        hovermode="closest",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0},
        margin={"t": 110, "b": 110},
    )
    return fig


def _has_infinite(summary: pd.DataFrame, columns: Sequence[str]) -> bool:
    return bool(np.isinf(summary[list(columns)].to_numpy(dtype=np.float64)).any())


def theory_curve(df: pd.DataFrame) -> pd.DataFrame | None:
    """E(α) per α (SPEC §4): the ``eps_theory`` column, else the theory rows' ε; ``None`` if neither."""
    if "eps_theory" in df.columns:
        curve = df.groupby("alpha", sort=True)["eps_theory"].first()
    elif "theory" in set(df["method"]):
        curve = df[df["method"] == "theory"].groupby("alpha", sort=True)["eps_total"].first()
    else:
        return None
    return curve.rename("eps").reset_index()


def fig1_epsilon(df: pd.DataFrame, versus: str = "theory", risk_factor: bool = False) -> go.Figure:
    """Fig. 1: ex-post privacy loss vs α, noise reduction against ``versus``.

    ``versus="theory"`` draws the theory approach's E(α) (Fig. 1a/1b), which promises
    only expected error; ``versus="doubling"`` the doubling method (Fig. 1c/1d);
    ``versus="gibbs"`` the Gibbs posterior (SPEC §17), labelled with its δ.
    Medians with the interquartile band; ``risk_factor=True`` plots e^ε (SPEC §10)
    on a log axis instead of ε.
    """
    if versus not in VERSUS:
        raise ValueError(f"versus must be one of {list(VERSUS)}; got {versus!r}")
    quantity = "e^ε" if risk_factor else "ε"
    fig = go.Figure()
    compared = ["nr"] if versus == "theory" else ["nr", versus]
    methods = [m for m in methods_in(df) if m in compared]
    infinite = False
    for method in methods:
        rows = df[df["method"] == method]
        summary = summarise(rows, "eps_total")
        if risk_factor:
            summary[["q25", "q50", "q75"]] = exp_epsilon(summary[["q25", "q50", "q75"]])
        label = method_label(method, rows)
        _add_band(fig, summary, method, label, "q25", "q75", "interquartile range")
        _add_median(fig, summary, method, label, f"ex-post {quantity}")
        infinite |= _has_infinite(summary, ["q25", "q50", "q75"])
    notes = [INFINITE_NOTE] if infinite else []
    if versus == "gibbs":
        notes.append(DELTA_CAVEAT)
    if versus == "theory":
        curve = theory_curve(df)
        if curve is None:
            notes.append("No theory curve: run the 'theory' method or use a sweep frame (eps_theory).")
        else:
            values = exp_epsilon(curve["eps"]) if risk_factor else curve["eps"]
            fig.add_trace(
                go.Scatter(
                    x=curve["alpha"],
                    y=_finite_or_none(values),
                    mode="lines",
                    name="Theory approach E(α): expected error only",
                    line={"color": method_color("theory"), "dash": "dash"},
                    hovertemplate=f"Theory approach<br>α = %{{x}}<br>{quantity} = %{{y:.4g}}"
                    f"<br>{THEORY_CAVEAT}<extra></extra>",
                )
            )
    missing = [method_label(m) for m in compared if m not in methods]
    if missing:
        notes.append(f"No runs of: {', '.join(missing)}.")
    if notes:
        _note(fig, " ".join(notes))
    title = f"Fig. 1 — ex-post privacy loss: noise reduction vs {VERSUS[versus]}"
    y_title = "ex-post privacy-risk factor e^ε (log scale)" if risk_factor else "ex-post privacy loss ε"
    return _layout(fig, title, y_title, log_y=risk_factor)


def fig2_excess_risk(df: pd.DataFrame) -> go.Figure:
    """Fig. 2: achieved excess risk vs α — median and 90th percentile per method, and y = α.

    The excess risk is the true one (evaluation only, not private; SPEC §9).
    """
    fig = go.Figure()
    for method in methods_in(df):
        rows = df[df["method"] == method]
        summary = summarise(rows, "excess_risk", (0.25, 0.5, 0.75, 0.9))
        label = method_label(method, rows) + (" (expected error only)" if method == "theory" else "")
        _add_median(fig, summary, method, label, "excess risk")
        fig.add_trace(
            go.Scatter(
                x=summary["alpha"],
                y=summary["q90"],
                mode="lines+markers",
                name=f"{label}: 90th percentile",
                legendgroup=method,
                marker={"symbol": "triangle-up"},
                line={"color": method_color(method), "dash": "dot"},
                hovertemplate=f"{label}<br>α = %{{x}}<br>90th percentile = %{{y:.4g}}<extra></extra>",
            )
        )
    alphas = np.sort(df["alpha"].unique())
    fig.add_trace(
        go.Scatter(
            x=alphas,
            y=alphas,
            mode="lines",
            name="requested accuracy y = α",
            line={"color": "black", "dash": "dash"},
            hovertemplate="y = α = %{x}<extra></extra>",
        )
    )
    return _layout(fig, "Fig. 2 — achieved excess risk vs the requested α", "excess risk R(θ) (true, not private)")


def fig3_breakdown(df: pd.DataFrame) -> go.Figure:
    """Fig. 3: the ex-post ε split into testing and generation, per method (SPEC §6, §7).

    Noise reduction: testing = ε_A, generation = ε_t; doubling: the accrued test
    costs and the accrued generator ε. Medians over the runs that halted (a fallback
    has no generation part; its share is in the hover), on a log axis. Methods without a
    test (the theory approach, the Gibbs posterior) are left out.
    """
    fig = go.Figure()
    for method in [m for m in methods_in(df) if m in TESTING_METHODS]:
        rows = df[df["method"] == method]
        label = method_label(method, rows)
        share = rows.groupby("alpha")["fallback"].mean()
        halted = rows[~rows["fallback"].astype(bool)]
        for column, part, dash in (("eps_test", "testing", "solid"), ("eps_hypothesis", "generation", "dash")):
            summary = summarise(halted, column, (0.5,))
            fig.add_trace(
                go.Scatter(
                    x=summary["alpha"],
                    y=summary["q50"],
                    mode="lines+markers",
                    name=f"{label}: {part}",
                    legendgroup=method,
                    line={"color": method_color(method), "dash": dash},
                    customdata=[f"{share[alpha]:.0%}" for alpha in summary["alpha"]],
                    hovertemplate=f"{label}, {part}<br>α = %{{x}}<br>median ε = %{{y:.4g}}"
                    "<br>fallback (left out) in %{customdata} of runs<extra></extra>",
                )
            )
    if df["fallback"].astype(bool).any():
        _note(fig, "Medians over the runs that halted; fallback runs (ε = ∞, no generation part) are left out.")
    title = "Fig. 3 — where the privacy goes: testing vs generating hypotheses"
    return _layout(fig, title, "median ε over halted runs (log scale)", True)


def fig4_theta_norm(df: pd.DataFrame) -> go.Figure:
    """Fig. 4: final ‖θ‖ vs α, median and interquartile band per method, against M (SPEC §2).

    The tests' sensitivity uses M; norms far below it show how loose that is (Appendix B.2).
    """
    fig = go.Figure()
    for method in methods_in(df):
        rows = df[df["method"] == method]
        summary = summarise(rows, "theta_norm")
        label = method_label(method, rows)
        _add_band(fig, summary, method, label, "q25", "q75", "interquartile range")
        _add_median(fig, summary, method, label, "‖θ‖")
    bounds = np.sort(df["norm_bound"].unique())
    alphas = np.sort(df["alpha"].unique())
    for bound in bounds:
        fig.add_trace(
            go.Scatter(
                x=alphas,
                y=np.full(alphas.size, bound),
                mode="lines",
                name=f"theoretical bound M = {bound:.4g}",
                line={"color": "black", "dash": "dash"},
                hovertemplate=f"M = {bound:.4g}<extra></extra>",
            )
        )
    return _layout(fig, "Fig. 4 — final hypothesis norm ‖θ‖ vs the theoretical bound M", "‖θ‖₂ (log scale)", True)


def paper_table(df: pd.DataFrame, alphas: Sequence[float] | None = None) -> pd.DataFrame:
    """The paper's kind of table: per α, each method's median ε, median e^ε and fallback share.

    ∞-aware medians (SPEC §9). ``alphas`` picks rows (e.g. 0.05 and 0.075, the
    paper's headline); by default every α of the frame.
    """
    table = pd.DataFrame({"α": np.sort(df["alpha"].unique())})
    if alphas is not None:
        wanted = np.asarray(alphas, dtype=np.float64)
        table = table[np.isclose(table["α"].to_numpy()[:, None], wanted[None, :]).any(axis=1)]
    for method in methods_in(df):
        rows = df[df["method"] == method]
        eps = summarise(rows, "eps_total", (0.5,)).set_index("alpha")
        label = method_label(method, rows)
        table[f"{label}: median ε"] = table["α"].map(eps["q50"])
        table[f"{label}: median e^ε"] = exp_epsilon(table[f"{label}: median ε"])
        table[f"{label}: fallback share"] = table["α"].map(eps["fallback_share"])
    return table.reset_index(drop=True)


def report_figures(df: pd.DataFrame) -> list[go.Figure]:
    """The figures of the report: Fig. 1 (vs theory in ε, vs doubling in ε and e^ε, vs the
    Gibbs posterior when it ran), Figs. 2–4."""
    versus_gibbs = [fig1_epsilon(df, "gibbs")] if "gibbs" in set(df["method"]) else []
    return [
        fig1_epsilon(df, "theory"),
        fig1_epsilon(df, "doubling"),
        fig1_epsilon(df, "doubling", risk_factor=True),
        *versus_gibbs,
        fig2_excess_risk(df),
        fig3_breakdown(df),
        fig4_theta_norm(df),
    ]


def html_report(df: pd.DataFrame, settings: Mapping[str, object]) -> str:
    """A self-contained HTML page: the settings, the paper's table and every figure (see ``html_page``)."""
    calibrations = sorted(set(df.loc[df["method"] == "nr", "calibration"]))
    caveat = (
        "<p>Noise reduction used the theorem's calibration of InteractiveAboveThreshold; "
        "the paper's plotted numbers came from the tighter calibration of the authors' code "
        "(“paper-code”), so expect roughly 3× the paper's ε (SPEC §6).</p>"
        if calibrations == ["theorem"]
        else ""
    )
    gaussian = df[df["noise"] == "gaussian"] if "noise" in df.columns else df.iloc[:0]
    deltas = sorted(set(gaussian.loc[gaussian["delta"] > 0, "delta"]))
    if deltas:
        caveat += (
            f"<p>Gaussian runs report an (ε, δ)-ex-post loss with δ = {', '.join(f'{d:g}' for d in deltas)} "
            "(SPEC §14; derived, consistent with Rogers et al. 2023).</p>"
        )
    if "gibbs" in set(df["method"]):
        caveat += f"<p>{html.escape(DELTA_CAVEAT)}</p>"
    intro = """<p>Ex-post privacy loss of noise reduction, doubling and the theory approach for each requested
excess risk α (Ligett et al., NeurIPS 2017, Section 4 and Appendix B). Medians and quantiles
count a fallback run's ε as ∞; the theory approach promises only expected excess risk.</p>
""" + caveat
    return html_page(
        "accfirst α sweep report", "Accuracy-first α sweep", intro, settings,
        "Median ex-post privacy loss per α", paper_table(df), report_figures(df),
    )  # fmt: skip


def html_page(
    title: str,
    heading: str,
    intro: str,
    settings: Mapping[str, object],
    table_heading: str,
    table: pd.DataFrame,
    figures: Sequence[go.Figure],
) -> str:
    """A self-contained HTML report: a heading, an introduction (HTML), the settings, one table, the figures.

    plotly.js is embedded once, in the first figure, so the file works offline.
    """
    divs = [
        fig.to_html(full_html=False, include_plotlyjs=(i == 0), default_height="560px") for i, fig in enumerate(figures)
    ]
    settings_rows = "".join(
        f"<tr><th>{html.escape(str(key))}</th><td>{html.escape(str(value))}</td></tr>"
        for key, value in settings.items()
    )
    table_html = table.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0, classes="results")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
th, td {{ padding: 0.2em 0.7em; text-align: right; border-bottom: 1px solid #ddd; }}
.settings th {{ text-align: left; }}
</style>
</head>
<body>
<h1>{html.escape(heading)}</h1>
{intro}
<h2>Settings</h2>
<table class="settings">{settings_rows}</table>
<h2>{html.escape(table_heading)}</h2>
{table_html}
<h2>Figures</h2>
{"".join(divs)}
</body>
</html>
"""
