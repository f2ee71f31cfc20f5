"""The explorer's figures: one α, several methods, many trials.

Each function takes the tidy frames the package produces (``run_trials`` rows, a
``Trace.to_frame()``) and returns a ``go.Figure``. Fallback runs (ε = ∞) are never
dropped silently: they cannot sit on a log axis, so they are counted on the chart.
True excess risks are evaluation-only numbers (they read the data without privacy)
and are labelled so.
The figures of the accuracy reached are in ``accfirst.plots.quality``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from numpy.typing import NDArray

from accfirst.interpret import format_delta, format_epsilon, format_exp_epsilon, median_with_inf
from accfirst.plots import (
    NONPRIVATE_COLOR,
    layout,
    log_ticks,
    mark_log_x,
    mark_target,
    method_color,
    method_label,
    methods_in,
    preparation_tag,
    wrap,
)

THRESHOLD_COLOR = "#D55E00"
TRUE_RISK_COLOR = "#7F7F7F"
EVALUATION_ONLY = "evaluation only, not private"


def _require(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs columns {missing}")


def _eps_text(values: pd.Series) -> list[str]:
    return [f"ε = {format_epsilon(e)}, e^ε = {format_exp_epsilon(e)}" for e in values]


def _trial_strip(x: pd.Series | NDArray[np.float64], row_label: str, method: str, **hover: object) -> go.Box:
    """One method's trials as a horizontal box with every trial drawn as a point."""
    color = method_color(method)
    return go.Box(
        x=x,
        y=[row_label] * len(x),
        name=method_label(method),
        orientation="h",
        boxpoints="all",
        jitter=0.4,
        pointpos=0,
        marker={"color": color, "size": 6, "opacity": 0.7},
        line={"color": color},
        fillcolor="rgba(0,0,0,0)",
        showlegend=False,
        **hover,
    )


def figure_epsilon_distribution(results: pd.DataFrame) -> go.Figure:
    """Ex-post ε of every trial, per method (output 2): box plus every point, log axis.

    Fallback trials are counted in the method's label and a note, not hidden: those that released nothing (at
    their declared top ε, docs/mathematics.md#what-a-failed-run-releases) and those that released θ* (ε = ∞).
    """
    _require(results, ("method", "trial", "eps_total", "stop_index"), "figure_epsilon_distribution")
    fig = go.Figure()
    notes = []
    for method in methods_in(results):
        runs = results[results["method"] == method]
        finite = runs[np.isfinite(runs["eps_total"].to_numpy(dtype=float))]
        fallbacks = len(runs) - len(finite)
        nothing = int(runs["nothing_released"].astype(bool).sum()) if "nothing_released" in runs.columns else 0
        name = method_label(method, runs)
        row_label = name if not fallbacks else f"{name}<br>({fallbacks} × ε = ∞)"
        if fallbacks:
            notes.append(f"{name}: {fallbacks} of {len(runs)} trials fell back to θ* (ε = ∞)")
        if nothing:
            notes.append(f"{name}: {nothing} of {len(runs)} trials passed no level and released nothing")
        if finite.empty:
            # Keep the row on the chart so the reader sees the method ran and fell back every time.
            fig.add_trace(go.Box(x=[None], y=[row_label], name=name, marker_color=method_color(method)))
            continue
        fig.add_trace(
            _trial_strip(
                finite["eps_total"],
                row_label,
                method,
                customdata=np.column_stack([finite["trial"], finite["stop_index"].fillna(-1)]),
                text=_eps_text(finite["eps_total"]),
                hovertemplate=f"trial %{{customdata[0]}}: %{{text}}<br>stop at level %{{customdata[1]}}<extra>{name}</extra>",
            )
        )
    fig.update_xaxes(type="log", title_text="ex-post privacy loss ε (log scale)", **log_ticks(results["eps_total"]))
    fig.update_yaxes(autorange="reversed", title_text=None)
    trials = int(results["trial"].nunique()) if len(results) else 0
    title = f"Ex-post ε of each of {trials} trials"
    subtitle = "<br>".join(line for line in (wrap(preparation_tag(results)), *notes) if line)
    return layout(fig, title=title, subtitle=subtitle, height=60 + 70 * max(len(fig.data), 1))


def breakdown_frame(results: pd.DataFrame) -> pd.DataFrame:
    """Median parts of ε per method, over the trials that halted (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#a-private-radius, docs/mathematics.md#a-relative-accuracy-target).

    ``label`` names each method with its δ when it has one (``method_label``); ``eps_prep`` is the
    preparation's ε, the same for every run on the table (0 in a frame without it). With a relative
    target (docs/mathematics.md#a-relative-accuracy-target) ``eps_scale`` is the median ε of the private bound on R(0)
    over every run, and a run that showed no signal (no α released) has not halted: it tested nothing.
    """
    _require(results, ("method", "eps_test", "eps_hypothesis", "fallback"), "breakdown_frame")
    rows = []
    for method in methods_in(results):
        runs = results[results["method"] == method]
        halted = runs[~runs["fallback"].astype(bool) & runs["alpha"].notna()]
        rows.append(
            {
                "method": method,
                "label": method_label(method, runs),
                "halted": len(halted),
                "trials": len(runs),
                "eps_prep": float(runs["eps_prep"].median()) if "eps_prep" in runs.columns else 0.0,
                "eps_radius": float(halted["eps_radius"].median())
                if len(halted) and "eps_radius" in halted.columns
                else (0.0 if len(halted) else math.nan),
                "eps_scale": float(runs["eps_scale"].median()) if "eps_scale" in runs.columns else 0.0,
                "eps_test": float(halted["eps_test"].median()) if len(halted) else math.nan,
                "eps_hypothesis": float(halted["eps_hypothesis"].median()) if len(halted) else math.nan,
                "eps_total": median_with_inf(runs["eps_total"]),
            }
        )
    return pd.DataFrame(rows)


# Parts of the bar drawn only when some run paid them: (column, legend, title word, hatching).
OPTIONAL_PARTS = (
    ("eps_prep", "preparing the data (paid once, shared by every run)", "preparing", "-"),
    ("eps_scale", "bounding R(0) (ε_S, relative target)", "bounding R(0)", "x"),
    ("eps_radius", "radius (ε of the private bound on ‖θ‖)", "the radius", "."),
)


def figure_breakdown(results: pd.DataFrame) -> go.Figure:
    """Where the privacy goes (output 3, the paper's Fig. 3 for this run): the parts of ε, stacked.

    The preparation's ε when the rows were prepared privately (docs/mathematics.md#preparing-the-data-privately: the
    same for every run, paid once for the table), the median part of a relative target's bound on R(0)
    (docs/mathematics.md#a-relative-accuracy-target) and of a private bound on the model's size
    (docs/mathematics.md#a-private-radius), each drawn only when some run paid it, then the median testing part (ε_A, or
    the doubling tests) and the median generation part (ε_t) over the trials that halted; the theory approach and the
    Gibbs posterior have no test.
    """
    parts = breakdown_frame(results)
    labels = [
        label if h == t else f"{label}<br>({h} of {t} halted)"
        for label, h, t in zip(parts["label"], parts["halted"], parts["trials"], strict=True)
    ]
    fig = go.Figure()
    optional = [
        (column, name, short, pattern) for column, name, short, pattern in OPTIONAL_PARTS if (parts[column] > 0).any()
    ]
    segments = [
        *((column, name, pattern) for column, name, _, pattern in optional),
        ("eps_test", "testing (ε of the private test)", ""),
        ("eps_hypothesis", "generating (ε of the released hypothesis)", "/"),
    ]
    for column, name, pattern in segments:
        fig.add_trace(
            go.Bar(
                x=parts[column],
                y=labels,
                orientation="h",
                name=name,
                marker={
                    "color": [NONPRIVATE_COLOR if column == "eps_prep" else method_color(m) for m in parts["method"]],
                    # Hatching, not transparency, marks the parts: it reads the same on a light and a dark page.
                    "pattern": {"shape": pattern, "fillmode": "overlay", "fgcolor": "rgba(255,255,255,0.5)"},
                },
                text=[format_epsilon(v) if np.isfinite(v) else "" for v in parts[column]],
                textposition="inside",
                insidetextanchor="middle",
                hovertemplate="%{y}: " + name + " %{x:.4g}<extra></extra>",
            )
        )
    fig.update_layout(barmode="stack", legend_traceorder="normal", uniformtext={"minsize": 9, "mode": "hide"})
    fig.update_xaxes(title_text="median ε over trials that halted", rangemode="tozero")
    fig.update_yaxes(autorange="reversed")
    shorts = [short for _, _, short, _ in optional]
    title = (
        # Two or more optional parts would overflow a half-width chart's title on one line.
        f"Privacy spent on {', '.join(shorts)},{'<br>' if len(shorts) > 1 else ' '}testing and generating"
        if shorts
        else "Privacy spent on testing vs on generating"
    )
    return layout(fig, title=title, subtitle=wrap(preparation_tag(results)), height=40 + 60 * len(parts))


def figure_search(
    trace: pd.DataFrame,
    *,
    method: str,
    alpha: float,
    stop_index: int | None,
    trial: int = 0,
    nothing_released: bool = True,
) -> go.Figure:
    """One trial's search, step by step (output 4).

    x: the privacy level ε of each tested hypothesis (log axis). y: excess risk. Shows the
    true excess risk of each hypothesis (evaluation only, not private), the noisy risk the
    private test compares, the noisy threshold, the target α and the stop. In risk terms
    the test halts at the first level whose noisy risk falls to the noisy threshold
    (``noisy_query ≥ noisy_threshold`` with query = −risk).

    A trace run without ``exact=True`` has no exact risk where a certified lower bound
    already failed the test; those levels are drawn at the lower bound (triangles: "at
    least"), and so is their noisy risk.

    Parameters
    ----------
    trace : ``Trace.to_frame()``.
    method : "nr" or "doubling" (colour and title).
    alpha : the target excess risk.
    stop_index : the 1-based level that passed, ``None`` on fallback.
    trial : shown in the title.
    nothing_released : on fallback, whether the run released nothing (the default,
        docs/mathematics.md#what-a-failed-run-releases) or, asked for the paper's fallback, the exact θ*.
    """
    _require(trace, ("level", "epsilon", "excess_risk", "noisy_query", "noisy_threshold"), "figure_search")
    name = method_label(method)
    color = method_color(method)
    eps = trace["epsilon"].to_numpy(dtype=float)
    exact = np.isfinite(trace["excess_risk"].to_numpy(dtype=float))
    lower = (
        trace["risk_lower_bound"].to_numpy(dtype=float) if "risk_lower_bound" in trace else np.full(len(trace), np.nan)
    )
    true_risk = np.where(exact, trace["excess_risk"].to_numpy(dtype=float), lower)
    noisy_risk = -trace["noisy_query"].to_numpy(dtype=float)
    if "query_noise" in trace:
        noisy_risk = np.where(exact, noisy_risk, lower - trace["query_noise"].to_numpy(dtype=float))
    threshold = -trace["noisy_threshold"].to_numpy(dtype=float)
    bounded = not exact.all()
    symbols = np.where(exact, "circle", "triangle-up")
    kind = np.where(exact, "", "at least ")
    many = len(trace) > 60
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=eps,
            y=true_risk,
            mode="lines" if many and not bounded else "lines+markers",
            name=f"true excess risk R(θ)<br>{EVALUATION_ONLY}" + ("; ▲ = lower bound" if bounded else ""),
            line={"color": TRUE_RISK_COLOR, "dash": "dot"},
            marker={"symbol": symbols, "size": 5 if many else 8, "color": TRUE_RISK_COLOR},
            customdata=np.column_stack([trace["level"], kind]),
            hovertemplate="level %{customdata[0]}, ε = %{x:.3g}<br>true R %{customdata[1]}= %{y:.4g}<extra>"
            + EVALUATION_ONLY
            + "</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=eps,
            y=noisy_risk,
            mode="markers",
            name="noisy risk seen by the private test" + ("<br>▲ = at least this" if bounded else ""),
            marker={"color": color, "size": 4 if many else 9, "symbol": symbols},
            customdata=np.column_stack([trace["level"], kind]),
            hovertemplate="level %{customdata[0]}, ε = %{x:.3g}<br>noisy risk %{customdata[1]}= %{y:.4g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=eps,
            y=threshold,
            mode="lines",
            name="noisy threshold<br>(halt when the noisy risk is at or below it)",
            line={"color": THRESHOLD_COLOR, "shape": "hv"},
            hovertemplate="threshold %{y:.4g}<extra></extra>",
        )
    )
    mark_target(fig, alpha, f"target α = {alpha:.3g}")
    if stop_index is not None and 1 <= stop_index <= len(trace):
        stop = trace.iloc[stop_index - 1]
        text = f"stop: level {int(stop['level'])}, ε = {float(stop['epsilon']):.3g}"
        mark_log_x(fig, float(stop["epsilon"]), text, {"color": color, "width": 2}, "right", "top")
    else:
        fig.add_annotation(
            x=0.5,
            xref="paper",
            y=1,
            yref="paper",
            showarrow=False,
            yanchor="top",
            text="no level passed: nothing released"
            if nothing_released
            else "no level passed: fallback to the non-private θ* (ε = ∞)",
        )
    fig.update_yaxes(title_text="excess risk", rangemode="tozero")
    fig.update_xaxes(type="log", title_text="privacy level ε of the tested hypothesis (log scale)", **log_ticks(eps))
    subtitle = f"{len(trace)} level{'s' if len(trace) != 1 else ''} tested"
    if bounded:
        subtitle += f"; exact risk at {int(exact.sum())},<br>a certified lower bound rejected the rest"
    return layout(fig, title=f"{name}: the search in trial {trial}", subtitle=subtitle, height=300)


def figure_noise_comparison(laplace: pd.DataFrame, gaussian: pd.DataFrame) -> go.Figure:
    """The generation part of ε with Laplace vs Gaussian noise on the same trials
    (docs/mathematics.md#brownian-noise-reduction).

    One row per method and noise, every trial that halted drawn as a point (a fallback has
    no generation part and is counted in the row's label); the subtitle gives each method's
    ratio of medians, Gaussian / Laplace. The Gaussian rows name their δ.

    Parameters
    ----------
    laplace, gaussian : ``run_trials`` frames of the same methods, α, trials and seed, one per noise.
    """
    for frame, what in ((laplace, "laplace"), (gaussian, "gaussian")):
        _require(frame, ("method", "trial", "eps_hypothesis", "fallback", "delta"), f"figure_noise_comparison ({what})")
    fig = go.Figure()
    notes = []
    for method in methods_in(gaussian):
        medians = []
        for noise, frame in (("Laplace", laplace), ("Gaussian", gaussian)):
            runs = frame[frame["method"] == method]
            halted = runs[~runs["fallback"].astype(bool)]
            fallbacks = len(runs) - len(halted)
            row_label = f"{method_label(method)}, {noise}" + (
                f" (δ = {format_delta(float(runs['delta'].max()))})" if len(runs) and runs["delta"].max() > 0 else ""
            )
            if fallbacks:
                row_label += f"<br>({fallbacks} × fallback)"
            medians.append(float(halted["eps_hypothesis"].median()) if len(halted) else math.nan)
            fig.add_trace(
                _trial_strip(
                    halted["eps_hypothesis"],
                    row_label,
                    method,
                    customdata=halted["trial"],
                    hovertemplate=f"trial %{{customdata}}: generation ε = %{{x:.4g}}<extra>{noise}</extra>",
                )
            )
        if all(np.isfinite(medians)) and medians[0] > 0:
            notes.append(f"{method_label(method)}: Gaussian / Laplace median = {medians[1] / medians[0]:.2f}")
    fig.update_xaxes(
        type="log",
        title_text="generation part of ε (log scale)",
        **log_ticks(pd.concat([laplace["eps_hypothesis"], gaussian["eps_hypothesis"]])),
    )
    fig.update_yaxes(autorange="reversed", title_text=None)
    trials = int(gaussian["trial"].nunique()) if len(gaussian) else 0
    return layout(
        fig,
        title=f"Generation ε, Laplace vs Gaussian, on the same {trials} trials",
        subtitle="<br>".join(notes),
        height=60 + 60 * max(len(fig.data), 1),
    )
