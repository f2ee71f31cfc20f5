"""The method registry: a new method is one class plus one registration, and everything offers it."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from accfirst import RidgeProblem, run_trials
from accfirst.cli import build_parser, main
from accfirst.errors import AccFirstError
from accfirst.methods.base import Method
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import METHODS, method_label, paper_methods, register, unregister, validate_methods
from accfirst.plots import method_color, methods_in
from accfirst.result import RunResult
from accfirst.search.experiments import declared_bound, trial_rng
from tests.data import make_ridge_data

APP = str(Path(__file__).resolve().parents[2] / "app.py")


class Zero(Method):
    """A toy method: releases θ = 0 at an ε drawn from its rng (a test of the registry, not of privacy)."""

    key = "zero"
    label = "Zero model"
    in_sentence = "the zero model"
    color = "#123456"
    fixed_epsilon = True
    noises = frozenset({"laplace"})
    noise_refusal = "The zero model needs Laplace noise."

    def run(self, setting, rng, exact=False) -> RunResult:
        epsilon = float(rng.uniform(1, 2))
        return RunResult.untested(
            setting.problem,
            np.zeros(setting.problem.p),
            alpha=setting.alpha,
            started=time.perf_counter(),
            epsilon=epsilon,
            method=self.key,
            generator="none",
            calibration="none",
            gamma=setting.gamma,
        )

    def declared_bound(self, setting) -> tuple[float, float]:
        return 2.0, 0.0


@pytest.fixture
def zero() -> Iterator[Method]:
    method = register(Zero())
    yield method
    unregister(method.key)


@pytest.fixture(scope="module")
def ridge() -> RidgeProblem:
    X, y = make_ridge_data(0, 400, 4)
    return RidgeProblem(X, y, 0.005)


def test_the_four_methods_are_registered_in_seed_order() -> None:
    assert list(METHODS) == ["nr", "doubling", "theory", "gibbs"]
    assert paper_methods() == ("nr", "doubling", "theory")
    assert [m.tests_accuracy for m in METHODS.values()] == [True, True, False, False]
    assert [m.high_probability for m in METHODS.values()] == [True, True, False, True]
    assert len({m.color for m in METHODS.values()}) == 4 and method_label("nr") == "Noise reduction"


def test_a_registered_method_runs_in_run_trials_with_its_own_seed(zero: Method, ridge: RidgeProblem) -> None:
    frame = run_trials(ridge, [0.05], 0.1, ["nr", "zero"], 2, 3, T=50)
    assert list(frame["method"].unique()) == ["nr", "zero"]
    rows = frame[frame["method"] == "zero"]
    assert (rows["theta_norm"] == 0).all()
    # Its cells draw from seeds of its own position (4th → index 4), independent of the others.
    expected = [trial_rng(3, "zero", 0.05, t).uniform(1, 2) for t in range(2)]
    np.testing.assert_allclose(rows["eps_total"], expected)
    assert declared_bound(ridge, "zero", 0.05, 0.1, SearchOptions()) == (2.0, 0.0)
    assert methods_in(frame) == ["nr", "zero"] and method_color("zero") == "#123456"


def test_a_registered_method_checks_its_options(zero: Method) -> None:
    with pytest.raises(AccFirstError, match="needs Laplace noise"):
        validate_methods(["zero"], SearchOptions(noise="gaussian"))
    with pytest.raises(AccFirstError, match="unknown method"):
        validate_methods(["nope"])


def test_a_registered_method_is_a_choice_of_the_command_line(zero: Method, capsys: pytest.CaptureFixture) -> None:
    assert (
        build_parser().parse_args(["run", "--dataset", "diabetes", "--method", "zero", "--alpha", "0.1"]).method
        == "zero"
    )
    assert main(["run", "--dataset", "diabetes", "--method", "zero", "--alpha", "0.1"]) == 0
    assert "method='zero'" in capsys.readouterr().out
    help_text = build_parser()._subparsers._group_actions[0].choices["sweep"].format_help()
    assert "nr,doubling,theory,gibbs,zero" in " ".join(help_text.split())


def test_a_registered_method_is_an_option_of_the_explorer(zero: Method, monkeypatch: pytest.MonkeyPatch) -> None:
    # Registered here, in the test's process only: the worker processes that run the built-in data import
    # the registry afresh, so only the picker is checked (a method in the registry file reaches them too).
    # The app's modules read the registry when imported, as a server's first page does after every registration;
    # a test process may have imported them already, so the app imports them afresh for this test.
    # The fresh modules draw a fresh server secret. Afterwards the old modules come back (monkeypatch), the ones first
    # imported here go, and Streamlit's process-wide caches (where the table the fresh modules prepared sits under
    # the old modules' key) are emptied: later tests in this process see one secret, as a server does.
    before = [module for module in sys.modules if module == "ui" or module.startswith("ui.")]
    for name in before:
        monkeypatch.delitem(sys.modules, name)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"ds": "diabetes", "target": "alpha", "trials": "2", "T": "100", "methods": "nr,zero"})
    try:
        at.run()
    finally:
        for name in [module for module in sys.modules if module == "ui" or module.startswith("ui.")]:
            del sys.modules[name]
        st.cache_resource.clear()
        st.cache_data.clear()
    picker = next(group for group in at.get("button_group") if group.proto.id.endswith("explorer.methods"))
    assert "Zero model" in [option.content for option in picker.proto.options]
    assert list(at.session_state["explorer.methods"]) == ["nr", "zero"]


def test_only_the_last_method_can_be_removed() -> None:
    with pytest.raises(AccFirstError, match="only the last"):
        unregister("nr")
    with pytest.raises(AccFirstError, match="registered already"):
        register(METHODS["nr"])
