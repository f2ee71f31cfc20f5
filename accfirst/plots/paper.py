"""The paper's figures (Section 4, Appendix B.2) from a sweep's tidy results frame.

Pure functions ``DataFrame -> go.Figure`` (CONVENTIONS): Fig. 1 ex-post ε vs α,
Fig. 2 achieved excess risk vs α, Fig. 3 the testing/generation breakdown, Fig. 4
final ‖θ‖ vs the bound M; plus the paper's kind of table and an offline HTML report.

Aggregates follow docs/mathematics.md#what-a-run-reports: quantiles treat a fallback's ε = ∞ as ∞ (a median is ∞
when at least half the runs fell back) and never drop fallback rows; the fallback
share is shown in hovers and in the table. A point whose quantile is ∞ cannot be
drawn, so it is left out and the figure says so. The paper plots averages over
80 (ridge) or 40 (logistic) trials; we plot medians with the interquartile band,
which stay finite while fewer than half the runs fall back.

Input: a frame with the ``accfirst.search.experiments.COLUMNS`` (``run_trials`` or
``accfirst.search.sweep.sweep``). Fig. 1's theory curve is E(α) from the ``eps_theory``
column a sweep adds, else from the theory approach's rows (their ε is E). What a figure needs of a method (its
label, its colour, whom Fig. 1 compares it with and how) comes from its class (``Method.comparison``); the offline
page these figures go into is ``accfirst.plots.report``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import overload

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from accfirst.docs import docs_reference
from accfirst.interpret import format_exp_epsilon, quantile_with_inf
from accfirst.mechanisms.calibration import calibration_constant, clips_query
from accfirst.methods.base import Comparison, Method
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import METHODS
from accfirst.methods.theory import Theory
from accfirst.plots import (
    layout,
    log_ticks,
    method_color,
    method_label,
    method_line,
    methods_in,
    preparation_tag,
    reference_line,
    testing_methods,
    wrap,
)
from accfirst.plots.report import html_page

BAND_OPACITY = 0.18
PLOT_HEIGHT = 340
ALPHA_AXIS = "α (requested excess risk)"
EXPECTED_ONLY = "promises only expected excess risk ≤ α, not with probability 1 − γ"
DELTA_CAVEAT = (
    "A method labelled with δ gives an (ε, δ) guarantee, the others a pure ε: "
    "a smaller ε at δ > 0 is a weaker kind of promise."
)
INFINITE_NOTE = "Gaps: the quantile is ∞ there (that share of runs fell back and released the exact model)."


def versus_methods() -> dict[str, str]:
    """The methods Fig. 1 can set against noise reduction (``Method.comparison``), by key, each with how a sentence
    names it; in registry order."""
    return {key: method.in_sentence for key, method in METHODS.items() if method.comparison is not None}


# Fig. 1's choices among the methods registered when this module is imported (the app's picker).
VERSUS = versus_methods()


def summarise(df: pd.DataFrame, value: str, quantiles: Sequence[float] = (0.25, 0.5, 0.75)) -> pd.DataFrame:
    """Per (method, α): the ∞-aware quantiles of ``value``, the run count and fallback share.

    Columns: method, alpha, ``q25``/``q50``/… (one per quantile, in percent), runs, fallback_share. A run that
    released nothing has no model, so no excess risk or norm (NaN): the quantiles of those are over the runs that
    released one (docs/mathematics.md#what-a-failed-run-releases); its ε, the declared top, counts.
    """
    rows = []
    for (method, alpha), group in df.groupby(["method", "alpha"], sort=True):
        row: dict[str, object] = {"method": method, "alpha": alpha}
        values = group[value].to_numpy(dtype=np.float64)
        values = values[~np.isnan(values)]
        for q in quantiles:
            row[_quantile_column(q)] = quantile_with_inf(values, q)
        row["runs"] = len(group)
        row["fallback_share"] = float(group["fallback"].astype(bool).mean())
        rows.append(row)
    columns = ["method", "alpha", *(_quantile_column(q) for q in quantiles), "runs", "fallback_share"]
    return pd.DataFrame(rows, columns=columns)


@overload
def exp_epsilon(eps: float) -> float: ...
@overload
def exp_epsilon(eps: pd.Series) -> pd.Series: ...
@overload
def exp_epsilon(eps: pd.DataFrame) -> pd.DataFrame: ...
def exp_epsilon(eps: float | pd.Series | pd.DataFrame) -> float | pd.Series | pd.DataFrame:
    """e^ε elementwise (docs/mathematics.md#setting-and-notation), ∞ where ε is ∞ or e^ε overflows a float."""
    with np.errstate(over="ignore"):
        # pandas-stubs: np.exp keeps a DataFrame a DataFrame (__array_ufunc__), which the stubs type as an array.
        return np.exp(eps)  # type: ignore[return-value]


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
    """The median line, with the IQR and the fallback share in its hover (docs/mathematics.md#what-a-run-reports)."""
    fig.add_trace(
        method_line(
            method,
            summary["alpha"],
            _finite_or_none(summary["q50"]),
            f"{label}: median",
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


def _layout(
    fig: go.Figure, title: str, subtitle: str, y_title: str, log_y: bool = False, notes: Sequence[str] = ()
) -> go.Figure:
    """Axis titles, a log y axis with decluttered ticks, and the shared layout; ``notes`` join the subtitle."""
    fig.update_layout(xaxis_title=ALPHA_AXIS, yaxis_title=y_title, hovermode="closest")
    if log_y:
        drawn = [np.asarray(trace.y, dtype=np.float64) for trace in fig.data if trace.y is not None]
        fig.update_yaxes(type="log", **log_ticks(np.concatenate(drawn) if drawn else []))
    else:
        fig.update_yaxes(type="linear")
    lines = [subtitle, *(wrap(note) for note in notes)]
    return layout(fig, title=title, subtitle="<br>".join(lines), height=PLOT_HEIGHT)


def _has_infinite(summary: pd.DataFrame, columns: Sequence[str]) -> bool:
    return bool(np.isinf(summary[list(columns)].to_numpy(dtype=np.float64)).any())


def theory_curve(df: pd.DataFrame) -> pd.DataFrame | None:
    """E(α) per α (docs/mathematics.md#the-theory-approach): the ``eps_theory`` column, else the theory approach's
    rows' ε; ``None`` if neither."""
    if "eps_theory" in df.columns:
        curve = df.groupby("alpha", sort=True)["eps_theory"].first()
    elif Theory.key in set(df["method"]):
        curve = df[df["method"] == Theory.key].groupby("alpha", sort=True)["eps_total"].first()
    else:
        return None
    return curve.rename("eps").reset_index()


def fig1_epsilon(
    df: pd.DataFrame, versus: str = Theory.key, risk_factor: bool = False, log_axis: bool = True
) -> go.Figure:
    """Fig. 1: ex-post privacy loss vs α, noise reduction against the method ``versus``, as its class's
    ``Comparison`` says.

    The theory approach is drawn as its E(α) curve (Fig. 1a/1b), which promises only expected error; doubling
    (Fig. 1c/1d) and the Gibbs posterior (docs/mathematics.md#the-gibbs-posterior, labelled with its δ) as their runs.
    Medians with the interquartile band; ``risk_factor=True`` plots e^ε (docs/mathematics.md#setting-and-notation)
    instead of ε, always on a log axis. ε is on a log axis too unless ``log_axis=False``
    (the paper's linear axis, where the smallest α flattens every other point).
    """
    against = METHODS.get(versus)
    comparison = None if against is None else against.comparison
    if against is None or comparison is None:
        raise ValueError(f"versus must be one of {list(versus_methods())}; got {versus!r}")
    quantity = "e^ε" if risk_factor else "ε"
    fig = go.Figure()
    compared = [comparison.partner] if comparison.curve else [comparison.partner, versus]
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
    notes = [tag for tag in (preparation_tag(df),) if tag] + ([INFINITE_NOTE] if infinite else [])
    if comparison.delta_caveat:
        notes.append(DELTA_CAVEAT)
    if comparison.curve:
        curve = theory_curve(df)
        if curve is None:
            notes.append(
                f"No {against.label.lower()} curve: run the {versus!r} method or use a sweep frame (eps_theory)."
            )
        else:
            fig.add_trace(_curve(against, curve, risk_factor))
    missing = [method_label(m) for m in compared if m not in methods]
    if missing:
        notes.append(f"No runs of: {', '.join(missing)}.")
    log_y = risk_factor or log_axis
    y_title = "risk factor e^ε" if risk_factor else "ex-post privacy loss ε"
    y_title += " (log scale)" if log_y else ""
    subtitle = f"{METHODS[comparison.partner].in_sentence} vs {against.in_sentence}"
    return _layout(fig, "Fig. 1 — ex-post privacy loss", subtitle, y_title, log_y=log_y, notes=notes)


def _curve(method: Method, curve: pd.DataFrame, risk_factor: bool) -> go.Scatter:
    """The dashed curve of α that Fig. 1 draws for a method whose ε is fixed in advance (``Comparison.curve``)."""
    assert method.comparison is not None  # only a compared method is drawn as a curve
    name, quantity = method.comparison.curve, "e^ε" if risk_factor else "ε"
    promise = "" if method.high_probability else f"<br>{EXPECTED_ONLY}"
    return go.Scatter(
        x=curve["alpha"],
        y=_finite_or_none(exp_epsilon(curve["eps"]) if risk_factor else curve["eps"]),
        mode="lines",
        name=f"{name} E(α)" + ("" if method.high_probability else ": expected error only"),
        line={"color": method.color, "dash": "dash"},
        hovertemplate=f"{name}<br>α = %{{x}}<br>{quantity} = %{{y:.4g}}{promise}<extra></extra>",
    )


def fig2_excess_risk(df: pd.DataFrame) -> go.Figure:
    """Fig. 2: achieved excess risk vs α — median and 90th percentile per method, and y = α.

    The excess risk is the true one (evaluation only, not private; docs/mathematics.md#what-a-run-reports).
    """
    fig = go.Figure()
    for method in methods_in(df):
        rows = df[df["method"] == method]
        summary = summarise(rows, "excess_risk", (0.25, 0.5, 0.75, 0.9))
        expected_only = method in METHODS and not METHODS[method].high_probability
        label = method_label(method, rows) + (" (expected error only)" if expected_only else "")
        _add_median(fig, summary, method, label, "excess risk")
        fig.add_trace(
            method_line(
                method,
                summary["alpha"],
                summary["q90"],
                f"{label}: 90th percentile",
                "dot",
                marker={"symbol": "triangle-up"},
                hovertemplate=f"{label}<br>α = %{{x}}<br>90th percentile = %{{y:.4g}}<extra></extra>",
            )
        )
    alphas = np.sort(df["alpha"].unique())
    fig.add_trace(reference_line(alphas, alphas, "requested accuracy y = α", "y = α = %{x}<extra></extra>"))
    return _layout(
        fig, "Fig. 2 — accuracy reached", "true excess risk vs the requested α", "excess risk R(θ) (true, not private)"
    )


def fig3_breakdown(df: pd.DataFrame) -> go.Figure:
    """Fig. 3: the ex-post ε split into testing and generation, per method
    (docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#the-doubling-method).

    Noise reduction: testing = ε_A, generation = ε_t; doubling: the accrued test
    costs and the accrued generator ε. Medians over the runs that halted (a fallback
    has no generation part; its share is in the hover), on a log axis. Methods without a
    test (the theory approach, the Gibbs posterior) are left out.
    """
    fig = go.Figure()
    for method in testing_methods(df):
        rows = df[df["method"] == method]
        label = method_label(method, rows)
        share = rows.groupby("alpha")["fallback"].mean()
        halted = rows[~rows["fallback"].astype(bool)]
        for column, part, dash in (("eps_test", "testing", "solid"), ("eps_hypothesis", "generation", "dash")):
            summary = summarise(halted, column, (0.5,))
            fig.add_trace(
                method_line(
                    method,
                    summary["alpha"],
                    summary["q50"],
                    f"{label}: {part}",
                    dash,
                    customdata=[f"{share[alpha]:.0%}" for alpha in summary["alpha"]],
                    hovertemplate=f"{label}, {part}<br>α = %{{x}}<br>median ε = %{{y:.4g}}"
                    "<br>fallback (left out) in %{customdata} of runs<extra></extra>",
                )
            )
    notes = (
        ["Medians over the runs that halted; fallback runs (no level passed) are left out."]
        if df["fallback"].astype(bool).any()
        else []
    )
    return _layout(
        fig,
        "Fig. 3 — where the privacy goes",
        "testing vs generating hypotheses",
        "median ε over halted runs (log scale)",
        log_y=True,
        notes=notes,
    )


def fig4_theta_norm(df: pd.DataFrame) -> go.Figure:
    """Fig. 4: final ‖θ‖ vs α, median and interquartile band per method, against M or R
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound).

    The tests' sensitivity uses that bound; norms far below it show how loose it is (Appendix B.2).
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
        name = f"bound on ‖θ‖ = {bound:.4g}"
        fig.add_trace(reference_line(alphas, np.full(alphas.size, bound), name, f"{name}<extra></extra>"))
    subtitle = "‖θ‖ vs the bound the sensitivities use (M = 1/√λ, or a public R)"
    return _layout(fig, "Fig. 4 — size of the released model", subtitle, "‖θ‖₂ (log scale)", log_y=True)


def paper_table(df: pd.DataFrame, alphas: Sequence[float] | None = None) -> pd.DataFrame:
    """The paper's kind of table: per α, each method's median ε, median e^ε and fallback share.

    ∞-aware medians (docs/mathematics.md#what-a-run-reports). The e^ε column is text with 3 significant digits
    ("4.02 × 10³⁹", "∞"; ``interpret.format_exp_epsilon``), since e^ε overflows a float
    long before ε is absurd; ε and the fallback share stay numbers. ``alphas`` picks rows
    (e.g. 0.05 and 0.075, the paper's headline); by default every α of the frame.
    """
    table = pd.DataFrame({"α": np.sort(df["alpha"].unique())})
    if alphas is not None:
        wanted = np.asarray(alphas, dtype=np.float64)
        table = table[np.isclose(table["α"].to_numpy()[:, None], wanted[None, :]).any(axis=1)]
    for method in methods_in(df):
        rows = df[df["method"] == method]
        eps = summarise(rows, "eps_total", (0.5,)).set_index("alpha")
        label = method_label(method, rows)
        median = table["α"].map(eps["q50"])
        table[f"{label}: median ε"] = median
        table[f"{label}: median e^ε"] = [format_exp_epsilon(e) if not math.isnan(e) else "" for e in median]
        table[f"{label}: fallback share"] = table["α"].map(eps["fallback_share"])
    return table.reset_index(drop=True)


def report_figures(df: pd.DataFrame) -> list[go.Figure]:
    """The figures of the report: Fig. 1 against each method its class compares (``Method.comparison``): the paper's
    always, in the order of their panels (the theory approach, then doubling in ε and e^ε), the others when they ran;
    then Figs. 2–4."""
    present = set(df["method"])
    shown = [key for key, method in METHODS.items() if method.comparison and (method.paper or key in present)]
    # The paper's panels in their order (Fig. 1a/b before 1c/d), then the others in registry order (a stable sort).
    shown.sort(key=lambda key: (not METHODS[key].paper, _comparison(key).note if METHODS[key].paper else ""))
    versus = [
        figure
        for key in shown
        for figure in (fig1_epsilon(df, key), *([fig1_epsilon(df, key, True)] if _comparison(key).risk_factor else []))
    ]
    return [*versus, fig2_excess_risk(df), fig3_breakdown(df), fig4_theta_norm(df)]


def _comparison(key: str) -> Comparison:
    """How Fig. 1 compares the registered method ``key`` (it has a comparison)."""
    comparison = METHODS[key].comparison
    assert comparison is not None  # only asked of the methods Fig. 1 compares
    return comparison


def calibration_caveat(df: pd.DataFrame) -> str:
    """An HTML note saying how noise reduction's test compares with the paper's, or "" for paper-code.

    The paper's plotted numbers came from the authors' code's calibration ("paper-code",
    docs/mathematics.md#interactiveabovethreshold); any other calibration's testing part ε_A is c/c_paper-code times
    theirs (docs/mathematics.md#exact-calibrations), at most that for a calibration that clips its query at α, priced
    with Δ_R(α) ≤ Δ_R (docs/mathematics.md, "The clipped test").
    """
    runs = df.loc[
        (df["method"] == NoiseReduction.key) & (df["calibration"] != "paper-code"), ["calibration", "T", "gamma"]
    ]
    parts = []
    for calibration, T, gamma in runs.drop_duplicates().itertuples(index=False):
        ratio = calibration_constant(int(T), gamma, calibration) / calibration_constant(int(T), gamma, "paper-code")
        at_most = "at most " if clips_query(calibration) else ""
        parts.append(
            f"“{html.escape(calibration)}” (ε_A {at_most}{ratio:.2f}× the authors' at T = {int(T)}, γ = {gamma:g})"
        )
    if not parts:
        return ""
    used = ", ".join(parts)
    return (
        f'<p class="note">Noise reduction used the calibration {used} of InteractiveAboveThreshold '
        f"(see {html.escape(docs_reference('mathematics', 'calibrations'))}). The paper's plotted "
        "numbers came from the authors' code (“paper-code”, T = 1000): use those settings to reproduce them.</p>"
    )


def html_report(df: pd.DataFrame, settings: Mapping[str, object], preparation: Sequence[str] = ()) -> str:
    """The sweep's offline report: settings, data preparation, the paper's table and every figure (``html_page``).

    Parameters
    ----------
    df : the sweep's results frame.
    settings : name → value rows of the settings table.
    preparation : the data preparation steps (``PrepReport.steps``), listed when given.
    """
    caveat = calibration_caveat(df)
    gaussian = df[df["noise"] == "gaussian"] if "noise" in df.columns else df.iloc[:0]
    deltas = sorted(set(gaussian.loc[gaussian["delta"] > 0, "delta"]))
    if deltas:
        caveat += (
            f'<p class="note">Gaussian runs report an (ε, δ)-ex-post loss with δ = '
            f"{', '.join(f'{d:g}' for d in deltas)} (derived; consistent with Rogers et al. 2023).</p>"
        )
    if any(METHODS[key].comparison and _comparison(key).delta_caveat for key in set(df["method"]) if key in METHODS):
        caveat += f'<p class="note">{html.escape(DELTA_CAVEAT)}</p>'
    intro = f"""<p>Ex-post privacy loss of noise reduction, doubling and the theory approach for each requested
excess risk α (Ligett et al., NeurIPS 2017, Section 4 and Appendix B). Medians and quantiles
count a fallback run's ε as ∞; the theory approach promises only expected excess risk.
How to read each chart: {html.escape(docs_reference("charts", "the-alpha-sweep"))};
the methods: {html.escape(docs_reference("mathematics"))}.</p>
{caveat}"""
    return html_page(
        "accfirst α sweep report",
        "Accuracy-first α sweep",
        intro,
        settings,
        "Median ex-post privacy loss per α",
        paper_table(df),
        report_figures(df),
        preparation,
    )
