"""Attack: the app's cells for two questions on one table share their noise.

On a real table the explorer draws its runs' noise from a secret kept in the visitor's session, so that
a rerun shows the same release. Each cell's generator comes from (secret, method, α, trial). If one
secret served every question on the table, the cells of two questions that differ only in γ (or T, or
any other option) would draw the same noise: two released radii R = N + b·L + m with one unit draw L,
from which ‖θ*‖ follows (``tests.attacks.norm_from_two_radii``). The released radius is the
``norm_bound`` column of the page's results download.

The test runs the explorer on diabetes at γ = 0.1, then at γ = 0.05 in the same session, records the
requests the page hands to its runs, and recomputes each cell's radius as the workers do. Measured on
main (856a42a), whose secret was drawn once per table: the pair gave ‖θ*‖ to within 10⁻⁷·Δ_N. With one
secret per question the two radii are independent, and the solution lands within 10⁻⁴·Δ_N of ‖θ*‖
with probability about 10⁻⁵ (the false-failure rate; the secret is fresh entropy on every run).
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

import ui.frame
import ui.runs
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.methods.pipeline import run_step
from accfirst.search.experiments import trial_result
from tests.attacks import norm_from_two_radii
from ui.dataset import SERVER_NOISE

APP = str(Path(__file__).resolve().parents[2] / "app.py")
ALPHA = 0.005  # small enough that the rule buys a radius on diabetes's rows (ρ = 0.316) at both γ
GAMMAS = (0.1, 0.05)
RECOVERED = 1e-4


class InProcess:
    """The server's worker pool, run in this process: the same tasks on the same problem, without the processes."""

    workers = 1

    def submit(self, source, task, *args, priority=0):
        done: Future = Future()
        done.set_result(task(source.build(), *args))
        return done


def test_explorer_cells_of_two_questions_release_independent_radii(monkeypatch):
    asked: dict[float, ui.runs.RunRequest] = {}
    chunk = ui.runs._chunk

    def recorded(chosen, request, method, first, count):  # the page's cells, as its workers receive them
        asked[request.gamma] = request
        return chunk(chosen, request, method, first, count)

    monkeypatch.setattr(ui.runs, "_chunk", recorded)
    pool = InProcess()
    monkeypatch.setattr(ui.runs, "worker_pool", lambda: pool)
    monkeypatch.setattr(ui.frame, "worker_pool", lambda: pool)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(ds="diabetes", target="alpha", alpha=str(ALPHA), gamma=str(GAMMAS[0]), methods="nr")
    at.query_params.update(trials="1", T="100")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.select_slider(key="explorer.gamma").set_value(GAMMAS[1]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert sorted(asked) == sorted(GAMMAS)

    problem = prepared_problem(load_builtin("diabetes", noise_seed=SERVER_NOISE), 0.005)
    requests = [asked[gamma] for gamma in GAMMAS]
    steps = [run_step(problem, "nr", ALPHA, r.gamma, r.options) for r in requests]
    plans = [step.bought for step in steps]
    assert all(plan is not None for plan in plans), "the rule must buy a radius at both γ for this attack"
    radii = [trial_result(problem, "nr", ALPHA, 0, r.gamma, r.seed, r.options).norm_bound for r in requests]
    truth = float(np.linalg.norm(steps[0].ceiling.theta_star))
    error = abs(norm_from_two_radii([plan for plan in plans if plan is not None], radii) - truth)
    assert error > RECOVERED * plans[0].sensitivity  # type: ignore[union-attr]
