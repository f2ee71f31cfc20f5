"""Figures of the Learn pages: the slides' mechanisms (docs/mathematics.md#teaching-mechanisms) and the Gibbs posterior
(docs/mathematics.md#the-gibbs-posterior).

Pure builders: numbers in, a ``go.Figure`` out, computed with ``accfirst.teaching`` and
``accfirst.erm.gibbs`` so that a notebook draws the same pictures. Nothing here reads
private data: the Gibbs figures take samples and risks the page computed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray
from plotly.subplots import make_subplots
from scipy import stats

from accfirst.erm.gibbs_privacy import exponential_mechanism_epsilon, gibbs_epsilon
from accfirst.interpret import format_delta
from accfirst.plots import layout as _layout
from accfirst.plots import mark_log_x
from accfirst.teaching import (
    RandomizedResponse,
    advanced_composition,
    basic_composition,
    group_privacy,
    integer_noise_loss,
    integer_noise_pmf,
    laplace_density,
    max_error_probability,
    max_error_threshold,
    threshold_release,
    zcdp_composition,
)

# Okabe–Ito, as the method colours.
YOURS = "#0072B2"
NEIGHBOUR = "#D55E00"
TRUTH = "#009E73"
BOUND = "#555555"
EXTRA = ("#E69F00", "#CC79A7", "#56B4E9")
RATIO_BAND = "rgba(0,158,115,0.15)"


def _ratio_band(fig: go.Figure, epsilon: float, **where: object) -> None:
    """Shade e^{−ε} … e^ε on a ratio axis: the band the likelihood ratio may not leave."""
    fig.add_hrect(y0=np.exp(-epsilon), y1=np.exp(epsilon), fillcolor=RATIO_BAND, line_width=0, **where)


def figure_response_table(protocol: RandomizedResponse) -> go.Figure:
    """P(answer | true answer) of randomized response: the 2 × 2 table as bars, ε in the title."""
    yes_if_yes, yes_if_no = protocol.answer_probabilities
    fig = go.Figure()
    for truth, yes, color in (("truly yes", yes_if_yes, YOURS), ("truly no", yes_if_no, NEIGHBOUR)):
        probabilities = [yes, 1 - yes]
        fig.add_trace(
            go.Bar(
                x=["answers “yes”", "answers “no”"],
                y=probabilities,
                name=f"someone {truth}",
                marker_color=color,
                text=[f"{v:.0%}" for v in probabilities],
                textposition="outside",
                hovertemplate=f"someone {truth}: P(%{{x}}) = %{{y:.3f}}<extra></extra>",
            )
        )
    ratio = "∞" if np.isinf(protocol.epsilon) else f"{np.exp(protocol.epsilon):.3g}"
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.15], title_text="probability", tickformat=".0%")
    title = f"ε = {protocol.epsilon:.3g}: no answer is more than {ratio} times likelier for one truth than the other"
    return _layout(fig, title=title, height=260)


def figure_poll_spread(
    estimates: ArrayLike, truth: float, standard_error: float, estimate: float, interval: tuple[float, float]
) -> go.Figure:
    """The estimate π̂ over many simulated polls (histogram), the normal curve of its standard
    error, the true share, and one poll's estimate with its confidence interval."""
    values = np.asarray(estimates, dtype=np.float64)
    # π̂ takes the values (j/n − (1−p)q)/p: one bar per value while there are few.
    levels = np.unique(values)
    bins = {"size": float(np.min(np.diff(levels)))} if 1 < levels.size <= 80 else None
    if bins is not None:
        bins["start"] = float(levels[0] - bins["size"] / 2)
    fig = go.Figure()
    fig.add_trace(
        go.Histogram(
            x=values,
            histnorm="probability density",
            name=f"π̂ in {values.size:,} repeated polls",
            marker_color=EXTRA[2],
            opacity=0.6,
            xbins=bins,
            nbinsx=None if bins else 40,
        )
    )
    grid = np.linspace(
        min(values.min(), truth - 4 * standard_error), max(values.max(), truth + 4 * standard_error), 300
    )
    fig.add_trace(
        go.Scatter(
            x=grid,
            y=stats.norm.pdf(grid, truth, standard_error),
            mode="lines",
            line={"color": BOUND},
            name=f"normal, sd = √(λ(1−λ)/(np²)) = {standard_error:.3f}",
        )
    )
    fig.add_vline(x=truth, line={"color": TRUTH, "width": 3})
    fig.add_vrect(x0=interval[0], x1=interval[1], fillcolor="rgba(0,114,178,0.12)", line_width=0)
    fig.add_vline(x=estimate, line={"color": YOURS, "dash": "dash"})
    fig.add_annotation(x=truth, y=1, yref="paper", text="true share", showarrow=False, yanchor="bottom")
    fig.update_xaxes(title_text="estimated share of true “yes” (π̂)")
    fig.update_yaxes(title_text="density")
    subtitle = f"One poll (dashed): π̂ = {estimate:.3f}, 95% interval {interval[0]:.2f}–{interval[1]:.2f} (shaded)"
    return _layout(fig, title="How much a poll's estimate moves from poll to poll", subtitle=subtitle, height=300)


def figure_live_estimate(
    estimate: float | None, interval: tuple[float, float] | None, yes: int, answers: int
) -> go.Figure:
    """A live poll: the share of “yes” answers and the estimated true share with its interval.

    The unbiased estimate can leave [0, 1] while answers are few; it is drawn (and named in
    the title) at the nearer end of [0, 1]. Without an interval (answers that fit no true
    share, ``RandomizedResponse.misfit``) the clipped estimate is drawn alone and says so.
    """
    fig = go.Figure()
    shown = None if estimate is None else min(max(estimate, 0.0), 1.0)
    if answers:
        fig.add_trace(
            go.Bar(
                y=["answers “yes”"],
                x=[yes / answers],
                orientation="h",
                marker_color=EXTRA[2],
                text=[f"{yes} of {answers}"],
                textposition="auto",
                name="randomized answers",
            )
        )
        fig.add_trace(
            go.Scatter(
                y=["estimated truth"],
                x=[shown],
                mode="markers",
                marker={"color": YOURS, "size": 16, "symbol": "circle" if interval else "x"},
                error_x=None
                if interval is None or shown is None
                else {
                    "type": "data",
                    "symmetric": False,
                    "array": [interval[1] - shown],
                    "arrayminus": [shown - interval[0]],
                },
                name="estimate and 95% interval"
                if interval
                else "estimate clipped to 0–1 (no share fits the answers: no interval)",
            )
        )
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title_text="share")
    clipped = " (clipped)" if shown is not None and estimate is not None and shown != estimate else ""
    title = f"{answers} answer{'s' if answers != 1 else ''} so far" + (
        f": estimated share {shown:.0%}{clipped}" if shown is not None else ""
    )
    return _layout(fig, title=title, height=160)


def figure_neighbour_densities(count: float, neighbour: float, epsilon: float, sensitivity: float = 1.0) -> go.Figure:
    """Output densities of count + Lap(Δ₁/ε) and of its neighbour (top) and their ratio (bottom,
    log axis) inside the shaded band e^{±ε}."""
    scale = sensitivity / epsilon
    z = np.linspace(min(count, neighbour) - 6 * scale, max(count, neighbour) + 6 * scale, 600)
    here, there = laplace_density(z, count, scale), laplace_density(z, neighbour, scale)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4])
    fig.add_trace(go.Scatter(x=z, y=here, name=f"your data: count {count:g}", line={"color": YOURS}), row=1, col=1)
    fig.add_trace(
        go.Scatter(x=z, y=there, name=f"neighbour: count {neighbour:g}", line={"color": NEIGHBOUR, "dash": "dash"}),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(x=z, y=here / there, name="ratio of the two densities", line={"color": TRUTH}, showlegend=True),
        row=2,
        col=1,
    )
    _ratio_band(fig, epsilon * abs(count - neighbour) / sensitivity, row=2, col=1)
    fig.update_yaxes(title_text="density", row=1, col=1)
    fig.update_yaxes(title_text="ratio (log)", type="log", row=2, col=1)
    fig.update_xaxes(title_text="released value", row=2, col=1)
    band = f"{np.exp(-epsilon):.3g}…{np.exp(epsilon):.3g}"
    title = f"Laplace noise of scale Δ₁/ε = {scale:.3g}: the ratio never leaves e^(±ε) = {band}"
    return _layout(fig, title=title, height=380)


def figure_tail_bound(k: int, epsilon: float, d: float, sensitivity: float = 1.0) -> go.Figure:
    """P(largest of k Laplace errors ≥ t): exact, and the union bound k·e^{−tε/Δ₁}; the slides'
    threshold ln(k/d)·Δ₁/ε is where the bound reaches d."""
    threshold = max_error_threshold(k, d, epsilon, sensitivity)
    t = np.linspace(0, 1.6 * threshold, 400)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=t, y=max_error_probability(k, t, epsilon, sensitivity), name="exact probability", line={"color": YOURS}
        )
    )
    fig.add_trace(
        go.Scatter(
            x=t,
            y=np.minimum(k * np.exp(-t * epsilon / sensitivity), 1.0),
            name="bound k·e^(−tε/Δ₁)",
            line={"color": BOUND, "dash": "dash"},
        )
    )
    fig.add_hline(y=d, line={"color": NEIGHBOUR, "dash": "dot"})
    fig.add_vline(x=threshold, line={"color": NEIGHBOUR})
    fig.add_annotation(
        x=threshold, y=0.9, yref="paper", text=f"ln(k/d)·Δ₁/ε = {threshold:.3g}", showarrow=False, xanchor="left"
    )
    fig.update_xaxes(title_text="error t")
    fig.update_yaxes(title_text="P(some count is off by ≥ t)", range=[0, 1.05])
    return _layout(
        fig,
        title=f"{k:,} counts at ε = {epsilon:g}: every error stays below the line with probability ≥ {1 - d:.0%}",
        height=300,
    )


def figure_integer_noise(count: int, epsilon: float) -> go.Figure:
    """count + int(Lap(1/ε)) for a count and its neighbour, noise rounded (left) or cast to an
    integer (right): the largest ratio in each title."""
    offsets = np.arange(-6, 8)
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.06,
        subplot_titles=[
            f"rounded to nearest: ratio ≤ e^{integer_noise_loss(epsilon, 'round'):.2f}",
            f"cast to integer (truncated): ratio up to e^{integer_noise_loss(epsilon, 'truncate'):.2f}",
        ],
    )
    for col, rounding in enumerate(("round", "truncate"), start=1):
        for center, name, color in ((count, f"count {count}", YOURS), (count + 1, f"neighbour {count + 1}", NEIGHBOUR)):
            outputs = count + offsets
            fig.add_trace(
                go.Bar(
                    x=outputs,
                    y=integer_noise_pmf(outputs - center, 1 / epsilon, rounding),
                    name=name,
                    marker_color=color,
                    opacity=0.75,
                    showlegend=col == 1,
                    legendgroup=name,
                    hovertemplate=f"{name}: P(release %{{x}}) = %{{y:.3f}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="released count", dtick=1)
    fig.update_yaxes(title_text="probability", row=1, col=1)
    subtitle = (
        f"ε = {epsilon:g}. Casting the noise doubles the chance of releasing the count itself, so the "
        f"bound grows to 2e^ε; added to a value that is not a whole number, integer noise tells neighbours apart."
    )
    return _layout(fig, title="What integer noise does to the guarantee", subtitle=subtitle, height=280)


def figure_composition(epsilon: float, delta: float, k_max: int, delta_total: float) -> go.Figure:
    """Total ε after k rounds of an (ε, δ)-DP mechanism: basic, advanced (at δ′) and zCDP (pure rounds)."""
    k = np.arange(1, k_max + 1)
    basic = [basic_composition(epsilon, delta, int(i))[0] for i in k]
    advanced = [advanced_composition(epsilon, delta, int(i), delta_total)[0] for i in k]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=k, y=basic, name="basic: kε (δ: kδ)", line={"color": BOUND}))
    fig.add_trace(
        go.Scatter(
            x=k,
            y=advanced,
            name=f"advanced: √(2k ln(1/δ′))ε + kε(e^ε − 1) (δ: kδ + {format_delta(delta_total)})",
            line={"color": YOURS},
        )
    )
    if delta == 0:
        fig.add_trace(
            go.Scatter(
                x=k,
                y=[zcdp_composition(epsilon, int(i), delta_total) for i in k],
                name=f"zCDP: ρ = kε²/2, then ρ + 2√(ρ ln(1/δ)) (δ = {format_delta(delta_total)})",
                line={"color": TRUTH},
            )
        )
    fig.update_xaxes(title_text="rounds k")
    fig.update_yaxes(title_text="total ε", rangemode="tozero")
    subtitle = "zCDP applies to pure-ε rounds (δ = 0)." if delta > 0 else ""
    return _layout(fig, title=f"k rounds at ε = {epsilon:g} each", subtitle=subtitle, height=300)


def figure_group_privacy(epsilon: float, delta: float, k_max: int) -> go.Figure:
    """Group privacy for k people: kε (left) and k·e^{(k−1)ε}δ (right)."""
    k = np.arange(1, k_max + 1)
    pairs = np.array([group_privacy(epsilon, delta, int(i)) for i in k])
    fig = make_subplots(rows=1, cols=2, subplot_titles=["ε for a group: kε", "δ for a group: k·e^((k−1)ε)·δ"])
    fig.add_trace(go.Scatter(x=k, y=pairs[:, 0], mode="lines+markers", line={"color": YOURS}, name="ε"), row=1, col=1)
    fig.add_trace(
        go.Scatter(x=k, y=pairs[:, 1], mode="lines+markers", line={"color": NEIGHBOUR}, name="δ"), row=1, col=2
    )
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_xaxes(title_text="people in the group k")
    return _layout(
        fig, title=f"One person's (ε = {epsilon:g}, δ = {format_delta(delta)}) stretched over a group", height=260
    )


def figure_post_processing(epsilon: float, count: float, neighbour: float) -> go.Figure:
    """A yes/no decision read off a noisy count (“is it at least t?”) for a count and its
    neighbour: the two probabilities and their ratio inside e^{±ε}."""
    scale = 1 / epsilon
    t = np.linspace(min(count, neighbour) - 6 * scale, max(count, neighbour) + 6 * scale, 400)
    here, there = threshold_release(epsilon, count, neighbour, t)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["P(decide “yes”: noisy count ≥ t)", "ratio of the two (log)"])
    fig.add_trace(go.Scatter(x=t, y=here, name=f"count {count:g}", line={"color": YOURS}), row=1, col=1)
    fig.add_trace(
        go.Scatter(x=t, y=there, name=f"neighbour {neighbour:g}", line={"color": NEIGHBOUR, "dash": "dash"}),
        row=1,
        col=1,
    )
    for ratio, name, dash in ((here / there, "“yes”", "solid"), ((1 - here) / (1 - there), "“no”", "dot")):
        fig.add_trace(
            go.Scatter(x=t, y=ratio, name=f"ratio for {name}", line={"color": TRUTH, "dash": dash}), row=1, col=2
        )
    _ratio_band(fig, epsilon, row=1, col=2)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_xaxes(title_text="threshold t")
    return _layout(fig, title="Post-processing: any decision made from the output keeps the guarantee", height=280)


def figure_gibbs_epsilon(
    n: int, p: int, lam: float, gap: float, delta: float, beta: float, radius: float | None = None
) -> go.Figure:
    """ε against β for the Gibbs posterior: the derived form (the Gaussian privacy profile,
    docs/mathematics.md#the-gibbs-posteriors-privacy), the slides' theorem and, for ridge on a ball of ``radius``, the
    exponential mechanism's pure ε; the accuracy-first β marked. ``gap`` is the largest gradient of the difference of
    two rows' losses (``accfirst.erm.gibbs_privacy``)."""
    betas = np.geomspace(beta / 100, beta * 100, 200)
    fig = go.Figure()
    for form, name, color in (("derived", "derived (use this)", YOURS), ("slides", "slides' theorem", BOUND)):
        fig.add_trace(
            go.Scatter(
                x=betas,
                y=[gibbs_epsilon(b, n, lam, gap, delta, form) for b in betas],
                name=f"{name}, δ = {format_delta(delta)}",
                line={"color": color, "dash": "solid" if form == "derived" else "dash"},
            )
        )
    if radius is not None:
        fig.add_trace(
            go.Scatter(
                x=betas,
                y=[exponential_mechanism_epsilon(b, p, radius) for b in betas],
                name="exponential mechanism, pure ε",
                line={"color": TRUTH, "dash": "dot"},
            )
        )
    mark_log_x(fig, beta, f"accuracy-first β = {beta:.3g}", {"color": NEIGHBOUR}, "left", "top")
    fig.update_xaxes(type="log", title_text="β (log scale): larger β, sharper posterior")
    fig.update_yaxes(type="log", title_text="ε (log scale)")
    return _layout(fig, title="The Gibbs posterior's β and its privacy", height=320)


def figure_posterior_samples(
    samples: Mapping[str, NDArray[np.float64]], center: NDArray[np.float64], basis: NDArray[np.float64]
) -> go.Figure:
    """Posterior samples for several β, projected on two directions (``basis``, p × 2) through
    θ* (``center``): the cloud tightens as β grows."""
    fig = go.Figure()
    colors = (EXTRA[2], EXTRA[0], EXTRA[1], YOURS)
    for (label, thetas), color in zip(samples.items(), colors, strict=False):
        projected = (np.asarray(thetas) - center) @ basis
        fig.add_trace(
            go.Scatter(
                x=projected[:, 0],
                y=projected[:, 1],
                mode="markers",
                name=label,
                marker={"color": color, "size": 5, "opacity": 0.6},
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[0], y=[0], mode="markers", name="θ* (non-private)", marker={"color": "black", "symbol": "x", "size": 12}
        )
    )
    fig.update_xaxes(title_text="θ − θ* along the posterior's widest direction")
    fig.update_yaxes(title_text="… and its second widest", scaleanchor="x")
    return _layout(fig, title="Samples of the Gibbs posterior as β grows", height=360)


def figure_chi_square(scaled_risks: ArrayLike, p: int, cutoff: float) -> go.Figure:
    """2βn·R of exact ridge samples against the χ²_p density; the cutoff χ²_{p,1−γ} = 2βnα."""
    values = np.asarray(scaled_risks, dtype=np.float64)
    grid = np.linspace(0, max(values.max(), cutoff) * 1.1, 300)
    fig = go.Figure()
    fig.add_trace(
        go.Histogram(
            x=values,
            histnorm="probability density",
            name="2βn·R of the samples",
            marker_color=EXTRA[2],
            opacity=0.6,
            nbinsx=40,
        )
    )
    fig.add_trace(
        go.Scatter(x=grid, y=stats.chi2.pdf(grid, p), name=f"χ² with p = {p} degrees of freedom", line={"color": BOUND})
    )
    fig.add_vline(x=cutoff, line={"color": NEIGHBOUR})
    fig.add_annotation(x=cutoff, y=1, yref="paper", text="2βnα: beyond it, R > α", showarrow=False, xanchor="left")
    fig.update_xaxes(title_text="2βn × excess risk")
    return _layout(fig, title="Ridge: the excess risk of a Gibbs sample is exactly χ²_p/(2βn)", height=300)
