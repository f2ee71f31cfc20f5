"""Figures of a count release (docs/mathematics.md#counts-to-a-relative-error): every arm drawn, the target shown,
evaluation-only labels."""

from __future__ import annotations

import pytest

from accfirst.accounting.counts import compare_counts, log_uniform_counts
from accfirst.plots.counts import count_figures, figure_counts_certified, figure_counts_errors, figure_counts_privacy


@pytest.fixture(scope="module")
def frame():
    return compare_counts(log_uniform_counts(200, rng=0), 0.1, 1.0, 1e-6, seed=1)


def test_certified_curve_ends_at_each_arms_total(frame):
    fig = figure_counts_certified(frame)
    for trace, (_, rows) in zip(fig.data, frame.groupby("method", sort=False)):
        assert trace.y[-1] == rows["certified"].sum() and trace.x[-1] == rows["spent"].iloc[-1]
        assert f"{int(rows['certified'].sum())} certified" in trace.name


def test_errors_show_only_certified_counts_and_the_target(frame):
    fig = figure_counts_errors(frame, 0.1)
    assert sum(len(t.x) for t in fig.data) == int(frame["certified"].sum())
    assert any(a.text == "target α = 0.1" for a in fig.layout.annotations)
    assert "evaluation only" in fig.layout.title.subtitle.text.lower()


def test_privacy_marks_counts_that_were_never_certified(frame):
    fig = figure_counts_privacy(frame)
    names = {t.name for t in fig.data}
    assert {"Noise reduction: certified", "Doubling: certified"} <= names
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    assert sum(len(t.x) for t in fig.data) == int((frame["status"] != "refused").sum())
    assert len(count_figures(frame, 0.1)) == 3
