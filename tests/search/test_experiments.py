"""run_trials (docs/mathematics.md#what-a-run-reports): tidy rows, reproducibility, independence of rows, progress."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accfirst import AccFirstError, run_one, run_trials, trial_rng
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import COLUMNS, declared_bound


def test_one_row_per_method_alpha_trial(ridge_problem) -> None:
    calls = []
    df = run_trials(
        ridge_problem,
        [0.02, 0.05],
        0.1,
        ["nr", "doubling", "theory"],
        3,
        seed=1,
        T=100,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert list(df.columns) == list(COLUMNS)
    assert len(df) == 18
    assert df.groupby(["method", "alpha"]).size().eq(3).all()
    assert calls == [(i, 18) for i in range(1, 19)]
    assert np.allclose(df.eps_total, df.eps_radius + df.eps_test + df.eps_hypothesis)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(df.exp_eps_total, np.exp(df.eps_total), rtol=1e-12)
    assert set(df.generator) == {"covariance"}


def test_rows_are_reproducible_and_independent_of_other_rows(ridge_problem) -> None:
    both = run_trials(ridge_problem, [0.02, 0.05], 0.1, ["nr", "doubling"], 2, seed=5, T=100)
    alone = run_trials(ridge_problem, [0.05], 0.1, ["doubling"], 2, seed=5, T=100)
    again = run_trials(ridge_problem, [0.02, 0.05], 0.1, ["nr", "doubling"], 2, seed=5, T=100)
    assert list(both.columns) == list(COLUMNS) and both.equals(again)
    picked = both[(both.method == "doubling") & (both.alpha == 0.05)].reset_index(drop=True)
    assert picked.equals(alone)
    single = run_one(ridge_problem, "nr", 0.05, 0.1, trial_rng(5, "nr", 0.05, 1), T=100)
    row = both[(both.method == "nr") & (both.alpha == 0.05) & (both.trial == 1)].iloc[0]
    assert row.eps_total == single.eps_total and row.excess_risk == single.excess_risk


def test_fallback_rows_release_nothing_at_their_declared_top_or_theta_star_when_asked(ridge_problem) -> None:
    """docs/mathematics.md#what-a-failed-run-releases: nothing by default, charged the declared top; θ* at ε = ∞ only
    with the paper's fallback."""
    grid = {"T": 20, "eps_min": 1e-9, "eps_max": 1e-8, "radius_mode": "none"}
    df = run_trials(ridge_problem, [1e-4], 0.1, ["nr"], 2, seed=0, **grid)
    assert df.fallback.all() and df.nothing_released.all() and df.stop_index.isna().all()
    top, _ = declared_bound(ridge_problem, "nr", 1e-4, 0.1, SearchOptions(**grid))
    np.testing.assert_allclose(df.eps_total, top, rtol=1e-12)
    assert df.excess_risk.isna().all() and df.theta_norm.isna().all() and not df.success.any()
    exact = run_trials(ridge_problem, [1e-4], 0.1, ["nr"], 2, seed=0, fallback="exact", **grid)
    assert exact.fallback.all() and not exact.nothing_released.any() and (exact.eps_total == math.inf).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": []}, "at least one method"),
        ({"methods": ["nr", "magic"]}, "unknown method"),
        ({"alphas": []}, "at least one alpha"),
        ({"alphas": [0.05, -1]}, "alpha"),
        ({"trials": 0}, "trials must be at least 1"),
        ({"seed": -1}, "seed must be at least 0"),
        ({"T": 1}, "at least 2"),
        ({"gamma": 2}, "gamma"),
        ({"calibration": "magic"}, "unknown calibration"),
        ({"generator": "magic"}, "unknown generator"),
        ({"spacing": "cubic"}, "spacing"),
        ({"eps_min": -1.0}, "eps_min must be > 0"),
        ({"levels": 10}, r"unknown search option\(s\) \['levels'\]"),
    ],
)
def test_bad_settings_fail_before_any_work(kwargs, message, ridge_problem) -> None:
    calls = []
    arguments = {"alphas": [0.05], "gamma": 0.1, "methods": ["nr"], "trials": 1, "seed": 0, "T": 50} | kwargs
    with pytest.raises(AccFirstError, match=message):
        run_trials(ridge_problem, progress=lambda *a: calls.append(a), **arguments)
    assert calls == []


def test_defaults_and_the_papers_configuration(ridge_problem) -> None:
    """The defaults chosen by measurement (docs/benchmarks.md#calibration, docs/benchmarks.md#a-bound-on-the-models-size)
    and a failed run that releases nothing; paper() is the authors' setup, on their radius M, with their θ* fallback."""
    defaults = SearchOptions()
    assert (defaults.T, defaults.calibration, defaults.radius_mode, defaults.fallback) == (
        100,
        "exact-paper-opt",
        "private",
        "nothing",
    )
    assert SearchOptions.paper() == SearchOptions(
        T=1000, calibration="paper-code", radius_mode="none", fallback="exact"
    )
    rows = run_trials(ridge_problem, [0.05], 0.1, ["nr", "doubling"], 1, seed=2)
    assert list(rows["calibration"]) == ["exact-paper-opt", "exact"] and rows["T"].iloc[0] == 100
    paper = run_trials(ridge_problem, [0.05], 0.1, ["nr", "doubling"], 1, seed=2, **SearchOptions.paper().to_dict())
    assert list(paper["calibration"]) == ["paper-code", "paper"] and paper["T"].iloc[0] == 1000
