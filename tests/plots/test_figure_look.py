"""What every figure shares: axes without SI prefixes, decluttered log ticks, no colours that assume a light page."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from accfirst import run_one, run_trials, trial_rng
from accfirst.accounting.counts import compare_counts, log_uniform_counts
from accfirst.plots import TITLE_CHARACTERS, layout, log_ticks, wrap
from accfirst.plots.budget import figure_ledger
from accfirst.plots.counts import count_figures
from accfirst.plots.explorer import figure_breakdown, figure_epsilon_distribution, figure_search
from accfirst.plots.paper import report_figures
from accfirst.plots.quality import figure_excess_risk, figure_test_quality

# Letters plotly's default ("B") exponent format puts on an axis: 10µ, 10m, 10k, 10M, 10G.
SI_PREFIXES = set("yzafpnµumkMGTPEZY")


@pytest.fixture(scope="module")
def figures(ridge_problem):
    """Every figure of the modules, on runs whose ε and risks span many decades (tiny risks included)."""
    results = run_trials(ridge_problem, [0.01, 0.1], 0.1, ["nr", "doubling", "theory"], 3, 0, T=100)
    results["excess_risk"] = np.geomspace(1e-9, 1e-3, len(results))
    one = results[results["alpha"] == 0.1]
    run = run_one(ridge_problem, "nr", 0.1, 0.1, trial_rng(0, "nr", 0.1, 0), T=100, exact=True)
    quality = pd.DataFrame(
        [("θ*", "nonprivate", "rmse", 12.5), ("NR", "nr", "rmse", 14.0), ("θ*", "nonprivate", "r2", 0.6)],
        columns=["model", "method", "metric", "value"],
    )
    return [
        *report_figures(results),
        figure_epsilon_distribution(one),
        figure_breakdown(one),
        figure_excess_risk(one, 0.1),
        figure_search(run.trace.to_frame(), method="nr", alpha=0.1, stop_index=run.stop_index),
        figure_test_quality(quality),
        *count_figures(compare_counts(log_uniform_counts(100, rng=0), 0.1, 1.0, 1e-6), 0.1),
        figure_ledger(
            {
                "nr": pd.DataFrame(
                    {
                        "analysis": [1, 2],
                        "label": ["a", "b"],
                        "kind": ["regression", "counts"],
                        "unit": ["ε", "ρ"],
                        "budget": [2.0, 0.1],
                        "declared": [1.0, 0.05],
                        "realised": [0.5, 0.0],
                        "status": ["released", "refused"],
                        "note": ["", ""],
                    }
                )
            }
        ),
    ]


def _axes(fig):
    layout = fig.layout.to_plotly_json()
    return {name: axis for name, axis in layout.items() if name.startswith(("xaxis", "yaxis"))}


def test_no_axis_uses_si_prefixes(figures):
    for fig in figures:
        for name, axis in _axes(fig).items():
            assert axis.get("exponentformat") == "power", (fig.layout.title.text, name)
            for label in axis.get("ticktext", ()):
                assert not SI_PREFIXES & set(label), (fig.layout.title.text, name, label)


def test_log_axes_carry_few_plain_labels(figures):
    log_axes = [axis for fig in figures for axis in _axes(fig).values() if axis.get("type") == "log"]
    assert len(log_axes) >= 7
    for axis in log_axes:
        assert axis.get("tickmode") == "array" and 2 <= len(axis["ticktext"]) <= 24


def test_figures_leave_the_background_to_the_theme(figures):
    """No template, background or black/white ink is fixed, so a dark theme renders dark charts."""
    for fig in figures:
        spec = fig.to_plotly_json()
        spec["layout"].pop("template", None)  # plotly's process-wide default, which the app's theme replaces
        assert "paper_bgcolor" not in spec["layout"] and "plot_bgcolor" not in spec["layout"]
        text = json.dumps(spec, default=str).lower()
        # Black or white lines, text or label boxes would vanish on one of the two backgrounds.
        for ink in ('"black"', '"white"', '"bgcolor": "rgba(255,255,255', "#000000", "#ffffff"):
            assert ink not in text, (fig.layout.title.text, ink)


@pytest.mark.parametrize(
    ("values", "labels"),
    [
        ([3.0, 220.0], ["3", "10", "30", "100"]),
        ([1.0, 1e48], ["1", "10⁶", "10¹²", "10¹⁸", "10²⁴", "10³⁰", "10³⁶", "10⁴²", "10⁴⁸"]),
        ([0.2, 0.9], ["0.2", "0.3", "0.4", "0.5", "0.6", "0.8"]),
        ([1e-7, 1e-5], ["10⁻⁷", "10⁻⁶", "10⁻⁵"]),
        ([2e-6, 9e-6], ["2×10⁻⁶", "3×10⁻⁶", "4×10⁻⁶", "5×10⁻⁶", "6×10⁻⁶", "8×10⁻⁶"]),
    ],
)
def test_log_ticks(values, labels):
    ticks = log_ticks([*values, math.inf, 0.0, -1.0, math.nan])
    inside = [text for value, text in zip(ticks["tickvals"], ticks["ticktext"]) if values[0] <= value <= values[1]]
    assert inside == labels
    assert log_ticks([0.0, math.inf]) == {}


def test_wrap_keeps_words_and_line_length():
    text = "Medians over the runs that halted; fallback runs (ε = ∞, no generation part) are left out."
    lines = wrap(text, 30).split("<br>")
    assert " ".join(lines) == text and max(map(len, lines)) <= 30


def test_titles_fit_a_phone_line(figures):
    """Plotly does not wrap a title: a long one ran off a 390 px chart, so layout breaks it and makes room above."""
    for fig in figures:
        assert max(map(len, fig.layout.title.text.split("<br>"))) <= TITLE_CHARACTERS, fig.layout.title.text
    title = "Quality on the held-out test set of every model the search released, trial by trial"
    short = layout(go.Figure(), title="Short", height=200)
    long = layout(go.Figure(), title=title, height=200)
    assert long.layout.title.text.replace("<br>", " ") == title and "<br>" in long.layout.title.text
    assert long.layout.margin.t > short.layout.margin.t and long.layout.height > short.layout.height
