"""The report of a sweep over targets in R² or accuracy (accfirst.plots.certified), on real runs: the table counts what
the frame holds goal by goal, and the figures draw every goal."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accfirst import RidgeProblem, run_trials
from accfirst.interpret.certified import CERTIFIED_PARTS
from accfirst.plots.certified import certified_table, figure_certified_parts, figure_certified_quality


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    """Three runs at R² ≥ 0.6 (every one releases a model) and three at 0.97 (the targets vary too little to certify
    it within the ceiling: each stops after the variance's ε), on 4,000 rows three coefficients explain well."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 3)) / 3
    y = np.clip(X @ np.array([2.4, -1.6, 1.0]) + rng.normal(scale=0.1, size=4000), -1, 1)
    return run_trials(RidgeProblem(X, y, 0.005), [], 0.1, ["nr"], 3, 0, goals=[0.6, 0.97], T=50)


def test_the_table_counts_each_goals_runs(runs: pd.DataFrame) -> None:
    table = certified_table(runs)
    assert table["target"].tolist() == ["R² ≥ 0.6", "R² ≥ 0.97"]
    for (_, row), (_, goal_runs) in zip(table.iterrows(), runs.groupby("goal"), strict=True):
        released = goal_runs[~goal_runs["nothing_released"]]
        assert row["released"] == f"{len(released)}/{len(goal_runs)}"
        assert row["met in-sample (evaluation only)"] == f"{int(released['success'].sum())}/{len(released)}"
        assert row["refused before reading"] == f"{int(goal_runs['refused'].sum())}/{len(goal_runs)}"
        assert row["median ε"] == pytest.approx(goal_runs["eps_total"].median())
    assert table["released"].tolist() == ["3/3", "0/3"]  # the two goals show both outcomes
    assert "the targets vary too little" in table["why nothing was released"].iloc[1]
    assert table["why nothing was released"].iloc[0] == ""


def test_the_figures_draw_every_goal_and_the_goal_line(runs: pd.DataFrame) -> None:
    parts = figure_certified_parts(runs)
    assert len(parts.data) == len(CERTIFIED_PARTS)  # one method: a bar trace per part
    assert all(list(trace.x) == ["R² ≥ 0.6", "R² ≥ 0.97"] for trace in parts.data)
    totals = np.sum([np.asarray(trace.y) for trace in parts.data], axis=0)
    medians = runs.groupby("goal")[[part for part, _ in CERTIFIED_PARTS]].median().sum(axis=1).to_numpy()
    np.testing.assert_allclose(totals, medians)
    quality = figure_certified_quality(runs)
    names = [trace.name for trace in quality.data]
    assert names[-1] == "the goal" and list(quality.data[-1].x) == [0.6, 0.97]
    assert quality.layout.title.subtitle.text == "3 of 6 runs released nothing and are not drawn"
