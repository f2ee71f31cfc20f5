"""The Learn pages' figure builders: each draws what its docstring promises, from public numbers."""

from __future__ import annotations

import numpy as np
import pytest

from accfirst.plots.learn import (
    figure_chi_square,
    figure_composition,
    figure_gibbs_epsilon,
    figure_group_privacy,
    figure_integer_noise,
    figure_live_estimate,
    figure_neighbour_densities,
    figure_poll_spread,
    figure_post_processing,
    figure_posterior_samples,
    figure_response_table,
    figure_tail_bound,
)
from accfirst.teaching import TWO_COINS, RandomizedResponse


def test_response_table_and_poll_figures() -> None:
    fig = figure_response_table(TWO_COINS)
    assert [list(t.y) for t in fig.data] == [[0.75, 0.25], [0.25, 0.75]]
    assert "ε = 1.1" in fig.layout.title.text and "3 times" in fig.layout.title.text
    assert "∞" in figure_response_table(RandomizedResponse(1.0, 0.5)).layout.title.text
    spread = figure_poll_spread(np.linspace(0, 0.6, 50), 0.3, 0.1, 0.35, (0.1, 0.6))
    assert spread.data[0].type == "histogram" and len(spread.layout.shapes) == 3
    live = figure_live_estimate(1.2, (0.4, 1.0), 9, 10)
    assert live.data[1].x[0] == 1.0  # an estimate above 1 is drawn at the edge, its interval kept
    assert not figure_live_estimate(None, None, 0, 0).data
    misfit = figure_live_estimate(1.5, None, 20, 20)  # answers no true share fits: the clipped estimate, no bar
    assert misfit.data[1].x[0] == 1.0 and misfit.data[1].error_x.array is None and "no interval" in misfit.data[1].name


def test_neighbour_ratio_stays_in_the_shaded_band() -> None:
    fig = figure_neighbour_densities(10, 11, 0.7)
    ratio = np.asarray(fig.data[2].y)
    assert ratio.max() == pytest.approx(np.exp(0.7)) and ratio.min() == pytest.approx(np.exp(-0.7))
    band = fig.layout.shapes[0]
    assert (band.y0, band.y1) == pytest.approx((np.exp(-0.7), np.exp(0.7)))


def test_tail_bound_crosses_d_at_the_slides_threshold() -> None:
    fig = figure_tail_bound(10_000, 1.0, 0.05)
    exact, bound = (np.asarray(t.y) for t in fig.data)
    assert np.all(exact <= bound + 1e-12)
    assert fig.layout.shapes[1].x0 == pytest.approx(np.log(10_000 / 0.05))


def test_integer_noise_titles_name_both_losses() -> None:
    titles = [a.text for a in figure_integer_noise(10, 1.0).layout.annotations]
    assert "e^1.00" in titles[0] and "e^1.69" in titles[1]


def test_composition_figures() -> None:
    pure = figure_composition(0.1, 0.0, 50, 1e-6)
    assert len(pure.data) == 3 and pure.data[0].y[-1] == pytest.approx(5.0)
    assert len(figure_composition(0.1, 1e-8, 50, 1e-6).data) == 2  # zCDP is for pure rounds
    groups = figure_group_privacy(0.5, 1e-6, 5)
    assert list(groups.data[0].y) == pytest.approx([0.5, 1.0, 1.5, 2.0, 2.5])
    post = figure_post_processing(1.0, 10, 11)
    for trace in post.data[2:]:
        assert np.max(np.abs(np.log(np.asarray(trace.y)))) <= 1.0 + 1e-6


def test_gibbs_figures() -> None:
    fig = figure_gibbs_epsilon(80_000, 38, 0.005, 16.1, 1e-6, 0.01, radius=14.1)
    assert len(fig.data) == 3 and "0.01" in fig.layout.annotations[0].text
    assert len(figure_gibbs_epsilon(80_000, 38, 0.005, 2.0, 1e-6, 0.01).data) == 2
    rng = np.random.default_rng(0)
    center, basis = np.zeros(3), np.eye(3)[:, :2]
    cloud = figure_posterior_samples(
        {"β = 1": rng.normal(size=(50, 3)), "β = 4": rng.normal(size=(50, 3)) / 2}, center, basis
    )
    assert [t.name for t in cloud.data] == ["β = 1", "β = 4", "θ* (non-private)"]
    assert len(figure_chi_square(rng.chisquare(3, 500), 3, 6.25).data) == 2
