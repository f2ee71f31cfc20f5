"""Attack: a run on a user's table whose test never passes releases the exact minimiser.

The paper's Algorithm 3 releases θ*, the exact non-private minimiser, when no level passes its test
(ε = ∞). An attacker who knows every row but one and sees θ* solves the first-order condition for the
missing row. On a user's table a failed run must release nothing and be charged its declared top
(docs/mathematics.md#what-a-failed-run-releases). Measured on main (856a42a) on diabetes (prepared
privately) with a grid too noisy for any level to pass: the Python API's default released θ* bit for
bit (``theta`` equal to ``problem.theta_star``), and ``accfirst run --dataset diabetes`` printed
"fallback: θ* released" with ‖θ*‖. Deterministic: fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from accfirst import run_trials
from accfirst.cli import main
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import search

# A grid far too noisy for any level to pass at α = 0.001 on a few hundred rows (on the bound M: no radius is bought).
HOPELESS = {"T": 20, "eps_min": 1e-6, "eps_max": 1e-5, "radius_mode": "none"}
ALPHA = 0.001


@pytest.fixture(scope="module")
def problem():
    return prepared_problem(load_builtin("diabetes", noise_seed=3), 0.005)


def test_a_failed_run_on_a_real_table_releases_nothing(problem):
    run = search(problem, "nr", ALPHA, 0.1, np.random.default_rng(0), SearchOptions(**HOPELESS))
    assert run.fallback
    assert run.theta is None, "the exact minimiser left the run"
    assert run.nothing_released and math.isfinite(run.eps_total) and math.isnan(run.theta_norm)
    frame = run_trials(problem, [ALPHA], 0.1, ["nr", "doubling"], 2, seed=None, **HOPELESS)
    failed = frame[frame["fallback"]]
    assert len(failed) and failed["nothing_released"].all() and failed["theta_norm"].isna().all()
    assert np.isfinite(failed["eps_total"]).all()


def test_the_command_line_says_a_failed_run_released_nothing(capsys):
    argv = [
        "run",
        "--dataset",
        "diabetes",
        "--alpha",
        str(ALPHA),
        "--T",
        "20",
        "--eps-min",
        "1e-6",
        "--eps-max",
        "1e-5",
    ]
    argv += ["--radius-mode", "none"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "θ* released" not in printed and "nothing released" in printed
