"""The parallel α sweep: same rows as run_trials, progress, stopping, validation (accfirst.search.sweep)."""

from __future__ import annotations

import math
import multiprocessing

import numpy as np
import pandas as pd
import pytest

from accfirst import AccFirstError, LogisticProblem, run_trials, theory_epsilon
from accfirst.search.experiments import COLUMNS
from accfirst.search.sweep import SWEEP_COLUMNS, parse_alphas, sweep
from tests.data import make_logistic_data

COMPARED = list(COLUMNS)  # a sweep's frame adds E(α)


def test_parse_alphas_paper_grid_is_exact():
    alphas = parse_alphas("0.005:0.2:0.005")
    assert len(alphas) == 40
    assert alphas == [round(0.005 * k, 3) for k in range(1, 41)]
    assert 0.15 in alphas and 0.2 in alphas  # no 0.15000000000000002, stop included


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.05,0.075", [0.05, 0.075]), (" 0.1 ", [0.1]), ("0.1:0.3:0.1", [0.1, 0.2, 0.3]), ("0.1:0.1:0.5", [0.1])],
)
def test_parse_alphas_lists_and_ranges(text, expected):
    assert parse_alphas(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "abc",
        "0.1:0.2",
        "0.1:0.2:0",
        "0.1:0.2:-0.1",
        "0.2:0.1:0.01",
        "0,0.1",
        "-0.1",
        "0.1,0.1",
        "nan",
        "0.1:inf:0.1",
        "1e-9:1:1e-9",
    ],
)
def test_parse_alphas_rejects_bad_text(text):
    with pytest.raises(AccFirstError):
        parse_alphas(text)


@pytest.mark.parametrize("workers", [1, 2])
def test_sweep_rows_equal_run_trials(ridge_problem, workers):
    alphas = [0.02, 0.05, 0.1]
    methods = ["nr", "doubling", "theory"]
    reference = run_trials(ridge_problem, alphas, 0.1, methods, 3, seed=11, T=200)
    calls = []
    frame = sweep(
        ridge_problem,
        alphas,
        0.1,
        methods,
        3,
        seed=11,
        T=200,
        workers=workers,
        chunk_size=4,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert list(frame.columns) == list(SWEEP_COLUMNS)
    pd.testing.assert_frame_equal(frame[COMPARED], reference[COMPARED])
    dones = [done for done, _ in calls]
    assert dones == sorted(dones) and calls[-1] == (27, 27)
    assert {total for _, total in calls} == {27}


def test_sweep_logistic_and_options_match_run_trials(logistic_problem):
    options = {"T": 50, "calibration": "paper-code", "eps_min": 1e-3, "eps_max": 50.0, "spacing": "linear"}
    reference = run_trials(logistic_problem, [0.03, 0.08], 0.2, ["nr", "doubling"], 2, seed=5, **options)
    frame = sweep(logistic_problem, [0.03, 0.08], 0.2, ["nr", "doubling"], 2, seed=5, workers=2, **options)
    pd.testing.assert_frame_equal(frame[COMPARED], reference[COMPARED])


def test_sweep_carries_the_radius_and_an_exact_calibration_to_its_workers():
    X, y = make_logistic_data(1, 2000, 5)
    problem = LogisticProblem(X, y, 0.005, radius=1.5)
    options = {"T": 60, "calibration": "exact-opt"}
    reference = run_trials(problem, [0.03], 0.1, ["nr", "doubling"], 2, seed=5, **options)
    frame = sweep(problem, [0.03], 0.1, ["nr", "doubling"], 2, seed=5, workers=2, **options)
    pd.testing.assert_frame_equal(frame[COMPARED], reference[COMPARED])
    assert set(frame["norm_bound"]) == {1.5} and set(frame["calibration"]) == {"exact-opt", "exact"}


@pytest.mark.parametrize("mode", ["none", "free"])
def test_eps_theory_is_the_theory_methods_epsilon(ridge_problem, mode):
    """E on the radius the options give: M, or R₀ (without a private radius the theory runs pay exactly that)."""
    frame = sweep(ridge_problem, [0.03, 0.06], 0.1, ["theory", "nr"], 2, seed=0, T=100, workers=1, radius_mode=mode)
    radius = None if mode == "none" else ridge_problem.free_radius(ridge_problem.lam)
    for alpha, rows in frame.groupby("alpha"):
        expected = theory_epsilon(ridge_problem.with_radius(radius), alpha)
        assert np.allclose(rows["eps_theory"], expected, rtol=0, atol=0)
        assert np.all(rows.loc[rows["method"] == "theory", "eps_total"] == expected)


@pytest.mark.parametrize("workers", [1, 2])
def test_should_stop_returns_the_rows_finished_so_far(ridge_problem, workers):
    calls = []
    frame = sweep(
        ridge_problem,
        [0.02, 0.05, 0.1, 0.2],
        0.1,
        ["nr", "doubling"],
        4,
        seed=3,
        T=200,
        workers=workers,
        chunk_size=2,
        progress=lambda done, total: calls.append(done),
        should_stop=lambda: len(calls) >= 1,
    )
    reference = run_trials(ridge_problem, [0.02, 0.05, 0.1, 0.2], 0.1, ["nr", "doubling"], 4, seed=3, T=200)
    assert 0 < len(frame) < len(reference)
    merged = frame[COMPARED].merge(reference[COMPARED], how="left", indicator=True)
    assert (merged["_merge"] == "both").all()  # every returned row is the reference's row
    # Work is handed out α by α, in order, and what was handed out finishes: a prefix of the schedule.
    schedule = [(a, m, t) for a in (0.02, 0.05, 0.1, 0.2) for m in ("nr", "doubling") for t in range(4)]
    returned = set(zip(frame["alpha"], frame["method"], frame["trial"], strict=True))
    assert returned == set(schedule[: len(frame)])


def test_an_exception_in_progress_cancels_the_pool(ridge_problem):
    def progress(done: int, total: int) -> None:
        raise KeyboardInterrupt  # what Streamlit's stop or Ctrl-C looks like to the sweep

    others = set(multiprocessing.active_children())  # e.g. a shared pool another test started
    with pytest.raises(KeyboardInterrupt):
        sweep(
            ridge_problem,
            [0.01 * k for k in range(1, 21)],
            0.1,
            ["nr"],
            20,
            seed=0,
            T=1000,
            workers=2,
            chunk_size=1,
            progress=progress,
        )
    assert set(multiprocessing.active_children()) <= others  # the sweep's workers were shut down, not left running


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": ["nr", "nr"]}, "must not repeat"),
        ({"alphas": [0.1, 0.1]}, "must not repeat"),
        ({"alphas": []}, "at least one alpha"),
        ({"methods": ["bogus"]}, "unknown method"),
        ({"workers": 0}, "workers"),
        ({"trials": 0}, "trials"),
        ({"calibration": "nope"}, "calibration"),
        ({"T": 1}, "T"),
        ({"gamma": 1.5}, "gamma"),
        ({"generator": "covariance", "problem": "logistic"}, "ridge"),
    ],
)
def test_bad_arguments_fail_before_any_work(ridge_problem, logistic_problem, kwargs, message):
    problem = logistic_problem if kwargs.pop("problem", None) == "logistic" else ridge_problem
    arguments = {"alphas": [0.05], "gamma": 0.1, "methods": ["nr"], "trials": 1, "seed": 0, "workers": 2} | kwargs
    calls = []
    with pytest.raises(AccFirstError, match=message):
        sweep(problem, progress=lambda done, total: calls.append(done), **arguments)
    assert calls == []


def test_fallback_rows_are_kept_releasing_nothing_or_theta_star_at_infinite_epsilon(ridge_problem):
    # ε_max far too small to reach α: no run passes its test.
    grid = {"T": 20, "eps_min": 1e-6, "eps_max": 1e-5, "workers": 1}
    frame = sweep(ridge_problem, [0.001], 0.1, ["nr", "doubling"], 2, seed=0, **grid)
    assert len(frame) == 4
    assert frame["fallback"].all() and frame["nothing_released"].all() and np.isfinite(frame["eps_total"]).all()
    exact = sweep(ridge_problem, [0.001], 0.1, ["nr", "doubling"], 2, seed=0, fallback="exact", **grid)
    assert exact["fallback"].all() and np.isinf(exact["eps_total"]).all()
    assert all(math.isinf(v) for v in exact["exp_eps_total"])
