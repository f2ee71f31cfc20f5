"""The explorer's figures on small frames: right traces, fallbacks counted, labels honest."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from accfirst import run_one, run_trials, trial_rng
from accfirst.datasets.prepared import EXCLUDES_PREPARATION
from accfirst.plots.explorer import (
    EVALUATION_ONLY,
    breakdown_frame,
    figure_breakdown,
    figure_epsilon_distribution,
    figure_noise_comparison,
    figure_search,
)
from accfirst.plots.quality import figure_excess_risk, figure_quality_reached, figure_test_quality

ALPHA = 0.1


@pytest.fixture(scope="module")
def results(ridge_problem):
    return run_trials(ridge_problem, [ALPHA], 0.1, ["nr", "doubling", "theory"], 5, 0, T=100)


def with_fallbacks(results, method, count):
    frame = results.copy()
    rows = frame.index[frame["method"] == method][:count]
    frame.loc[rows, ["eps_total", "eps_hypothesis", "exp_eps_total"]] = math.inf
    frame.loc[rows, ["fallback"]] = True
    frame.loc[rows, ["stop_index"]] = np.nan
    return frame


def test_epsilon_distribution_has_every_finite_trial(results):
    fig = figure_epsilon_distribution(results)
    assert [t.name for t in fig.data] == ["Noise reduction", "Doubling", "Theory"]
    for trace, method in zip(fig.data, ["nr", "doubling", "theory"], strict=True):
        expected = results.loc[results["method"] == method, "eps_total"].to_numpy()
        np.testing.assert_allclose(np.asarray(trace.x, dtype=float), expected)
    assert fig.layout.xaxis.type == "log"


def test_epsilon_distribution_counts_fallbacks(results):
    fig = figure_epsilon_distribution(with_fallbacks(results, "nr", 2))
    nr = fig.data[0]
    assert len(nr.x) == 3 and all(np.isfinite(np.asarray(nr.x, dtype=float)))
    assert "2 × ε = ∞" in nr.y[0]
    assert "Noise reduction: 2 of 5 trials fell back to θ* (ε = ∞)" in fig.layout.title.subtitle.text


def test_epsilon_distribution_all_fallback_keeps_the_row(results):
    fig = figure_epsilon_distribution(with_fallbacks(results, "doubling", 5))
    assert any("5 × ε = ∞" in str(t.y[0]) for t in fig.data)


def test_breakdown_parts_are_medians_over_halted_trials(results):
    """The default's private radius is a third part, drawn first; without one the chart keeps two."""
    frame = with_fallbacks(results, "nr", 1)
    parts = breakdown_frame(frame).set_index("method")
    halted = frame[(frame["method"] == "nr") & ~frame["fallback"]]
    assert parts.loc["nr", "eps_radius"] == pytest.approx(halted["eps_radius"].median())
    assert parts.loc["nr", "eps_radius"] > 0
    assert parts.loc["nr", "eps_test"] == pytest.approx(halted["eps_test"].median())
    assert parts.loc["nr", "eps_hypothesis"] == pytest.approx(halted["eps_hypothesis"].median())
    assert parts.loc["theory", "eps_test"] == 0
    fig = figure_breakdown(frame)
    assert fig.layout.barmode == "stack" and len(fig.data) == 3 and "radius" in fig.data[0].name
    np.testing.assert_allclose(np.asarray(fig.data[0].x, dtype=float), parts["eps_radius"].to_numpy())
    np.testing.assert_allclose(np.asarray(fig.data[1].x, dtype=float), parts["eps_test"].to_numpy())
    assert "4 of 5 halted" in fig.data[0].y[0]
    assert len(figure_breakdown(frame.assign(eps_radius=0.0)).data) == 2


def test_a_private_preparation_is_a_part_of_every_bar_and_an_evaluation_only_one_is_labelled(ridge_problem):
    prepared = ridge_problem.with_preparation(0.25, 1e-6, "private")
    frame = run_trials(prepared, [ALPHA], 0.1, ["nr", "theory"], 3, 0, T=100, radius_mode="free")
    fig = figure_breakdown(frame)
    assert fig.data[0].name.startswith("preparing the data (paid once")
    np.testing.assert_allclose(np.asarray(fig.data[0].x, dtype=float), [0.25, 0.25])
    stacked = sum(np.asarray(trace.x, dtype=float) for trace in fig.data)
    np.testing.assert_allclose(stacked[1], frame.loc[frame["method"] == "theory", "eps_total"].median())
    for figure in (fig, figure_epsilon_distribution(frame)):
        assert "includes preparing the data, ε = 0.25" in figure.layout.title.subtitle.text.replace("<br>", " ")
    evaluation = run_trials(
        ridge_problem.with_preparation(0.0, 0.0, "evaluation"), [ALPHA], 0.1, ["nr"], 2, 0, T=100, radius_mode="free"
    )
    for figure in (figure_breakdown(evaluation), figure_epsilon_distribution(evaluation)):
        subtitle = figure.layout.title.subtitle.text.replace("<br>", " ")
        assert EXCLUDES_PREPARATION in subtitle
    assert len(figure_breakdown(evaluation).data) == 2  # nothing charged, no preparing bar


@pytest.mark.parametrize("method", ["nr", "doubling"])
def test_search_shows_true_risk_noisy_values_and_the_stop(ridge_problem, method):
    result = run_one(ridge_problem, method, ALPHA, 0.1, trial_rng(0, method, ALPHA, 0), T=100, exact=True)
    trace = result.trace.to_frame()
    fig = figure_search(trace, method=method, alpha=ALPHA, stop_index=result.stop_index)
    true_risk, noisy, threshold = fig.data
    assert EVALUATION_ONLY in true_risk.name
    np.testing.assert_allclose(np.asarray(true_risk.y, dtype=float), trace["excess_risk"])
    np.testing.assert_allclose(np.asarray(noisy.y, dtype=float), -trace["noisy_query"])
    np.testing.assert_allclose(np.asarray(threshold.y, dtype=float), -trace["noisy_threshold"])
    assert fig.layout.xaxis.type == "log"
    if result.stop_index is not None:
        # the stop is where the noisy risk first reaches the noisy threshold
        passed = np.asarray(noisy.y, dtype=float) <= np.asarray(threshold.y, dtype=float)
        assert int(np.argmax(passed)) + 1 == result.stop_index
        stop_eps = trace["epsilon"].iloc[result.stop_index - 1]
        assert any(s.x0 == pytest.approx(stop_eps) for s in fig.layout.shapes)
    if method == "doubling":
        np.testing.assert_allclose(np.asarray(threshold.y, dtype=float), ALPHA / 2)


def test_search_without_exact_risks_draws_the_lower_bounds(ridge_problem):
    result = run_one(
        ridge_problem, "nr", ALPHA, 0.1, trial_rng(1, "nr", ALPHA, 0), T=100, exact=False, radius_mode="none"
    )
    trace = result.trace.to_frame().assign(query_noise=result.trace.query_noise)
    bounded = trace["excess_risk"].isna().to_numpy()
    assert bounded.any(), "this seed should reject some levels on their lower bound"
    fig = figure_search(trace, method="nr", alpha=ALPHA, stop_index=result.stop_index)
    true_risk, noisy, _ = fig.data
    y = np.asarray(true_risk.y, dtype=float)
    np.testing.assert_allclose(y[bounded], trace["risk_lower_bound"][bounded])
    np.testing.assert_allclose(
        np.asarray(noisy.y, dtype=float)[bounded], (trace["risk_lower_bound"] - trace["query_noise"])[bounded]
    )
    assert list(np.asarray(true_risk.marker.symbol)[bounded]) == ["triangle-up"] * int(bounded.sum())
    assert "lower bound" in true_risk.name and "certified lower bound" in fig.layout.title.subtitle.text


def test_search_fallback_is_announced():
    trace = pd.DataFrame(
        {
            "level": [1, 2],
            "epsilon": [0.1, 0.2],
            "excess_risk": [0.5, 0.4],
            "noisy_query": [-0.5, -0.4],
            "noisy_threshold": [-0.05, -0.05],
        }
    )
    fig = figure_search(trace, method="nr", alpha=0.1, stop_index=None)
    assert any("nothing released" in a.text for a in fig.layout.annotations)
    exact = figure_search(trace, method="nr", alpha=0.1, stop_index=None, nothing_released=False)
    assert any("fallback to the non-private θ*" in a.text for a in exact.layout.annotations)


def test_excess_risk_marks_alpha_and_success_rate(results):
    fig = figure_excess_risk(results, ALPHA)
    assert any(s.x0 == ALPHA for s in fig.layout.shapes)
    for trace, method in zip(fig.data, ["nr", "doubling", "theory"], strict=True):
        runs = results[results["method"] == method]
        assert f"({runs['success'].mean():.0%} ≤ α)" in trace.y[0]
        assert min(np.asarray(trace.x, dtype=float)) > 0  # a log axis cannot show 0
    assert EVALUATION_ONLY in fig.layout.xaxis.title.text


def test_test_quality_one_panel_per_metric():
    quality = pd.DataFrame(
        {
            "model": ["θ*", "Noise reduction", "θ*", "Noise reduction"],
            "method": ["nonprivate", "nr"] * 2,
            "metric": ["r2", "r2", "mse", "mse"],
            "value": [0.8, 0.6, 0.01, 0.02],
        }
    )
    fig = figure_test_quality(quality)
    assert len(fig.data) == 2
    np.testing.assert_allclose(np.asarray(fig.data[1].x, dtype=float), [0.01, 0.02])
    assert [a.text for a in fig.layout.annotations][:2] == ["R² (↑ better)", "MSE (↓ better)"]
    # Stacked, not side by side: the panels' titles cannot overlap at phone width, and each panel spans the width.
    upper, lower = fig.layout.yaxis.domain, fig.layout.yaxis2.domain
    assert lower[1] < upper[0] and fig.layout.xaxis.domain == fig.layout.xaxis2.domain == (0.0, 1.0)
    # Values are written outside the bars with room for them: none is cut off.
    for trace, axis in ((fig.data[0], fig.layout.xaxis), (fig.data[1], fig.layout.xaxis2)):
        assert trace.textposition == "outside" and trace.cliponaxis is False
        assert axis.range[1] >= 1.25 * max(trace.x)


def test_test_quality_writes_large_values_out():
    quality = pd.DataFrame(
        {"model": ["θ*", "NR"], "method": ["nonprivate", "nr"], "metric": ["rmse"] * 2, "value": [3358.2, -0.5]}
    )
    (bars,) = figure_test_quality(quality).data
    assert list(bars.text) == ["3,358", "-0.5"]


def test_missing_columns_are_reported():
    with pytest.raises(ValueError, match="needs columns"):
        figure_epsilon_distribution(pd.DataFrame({"method": ["nr"]}))


def test_noise_comparison_pairs_the_same_trials_and_names_delta(ridge_problem, results):
    laplace = results[results["method"].isin(["nr", "doubling"])]
    gaussian = run_trials(ridge_problem, [ALPHA], 0.1, ["nr", "doubling"], 5, 0, T=100, noise="gaussian", delta=1e-6)
    fig = figure_noise_comparison(laplace, with_fallbacks(gaussian, "doubling", 1))
    names = [t.y[0] for t in fig.data]
    assert names[0] == "Noise reduction, Laplace" and names[1] == "Noise reduction, Gaussian (δ = 10⁻⁶)"
    assert "1 × fallback" in names[3]
    for trace, frame in zip(fig.data[:2], (laplace, gaussian), strict=True):
        expected = frame.loc[frame["method"] == "nr", "eps_hypothesis"].to_numpy()
        np.testing.assert_allclose(np.asarray(trace.x, dtype=float), expected)
    ratio = (
        gaussian.loc[gaussian["method"] == "nr", "eps_hypothesis"].median()
        / laplace.loc[laplace["method"] == "nr", "eps_hypothesis"].median()
    )
    assert f"Noise reduction: Gaussian / Laplace median = {ratio:.2f}" in fig.layout.title.subtitle.text
    assert fig.layout.xaxis.type == "log"


def test_quality_reached_draws_each_released_model_in_sample_and_held_out_and_counts_the_rest():
    frame = pd.DataFrame(
        {
            "method": "nr",
            "trial": range(4),
            "quality": [0.82, 0.9, np.nan, 0.79],
            "heldout": [0.78, 0.88, np.nan, 0.7],
            "nothing_released": [False, False, True, False],
        }
    )
    fig = figure_quality_reached(frame, "R²", 0.8)
    inside, outside = fig.data
    assert list(inside.x) == [0.82, 0.9, 0.79] and list(outside.x) == [0.78, 0.88, 0.7]
    assert inside.y[0] == "in-sample<br>(67% ≥ 0.8)" and outside.y[0] == "held out<br>(33% ≥ 0.8)"
    assert "1 of 4 runs released nothing" in fig.layout.title.text.replace("<br>", " ")
    assert EVALUATION_ONLY in fig.layout.xaxis.title.text
    assert fig.layout.shapes[0].x0 == 0.8
