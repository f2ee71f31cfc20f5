"""The settings JSON and the reproduction snippet: round trip, no code injection, same numbers."""

from __future__ import annotations

import ast
import json
import sys
import types

import numpy as np
import pandas as pd
import pytest

from accfirst import AccFirstError, LogisticProblem, RidgeProblem, run_trials
from accfirst.datasets import ColumnSpec, Schema, from_frame
from accfirst.datasets.prepared import Preparation
from accfirst.erm.quality import Accuracy, VarianceExplained
from accfirst.methods.certified import default_lambdas
from accfirst.methods.options import SearchOptions
from accfirst.snippet import (
    LEGACY_PREPARATION,
    RESULTS_FILE,
    DatasetSpec,
    RunSettings,
    reproduction_snippet,
    settings_from_json,
    settings_json,
)
from tests.data import make_ridge_data

EVIL = "y'); import os; os.system('echo pwned') #\"\n"


def _settings(**changes):
    base = {
        "dataset": DatasetSpec.from_builtin("diabetes", test_size=0.2, seed=0),
        "task": "ridge",
        "lam": np.float64(0.01),
        "alphas": (np.float64(0.08),),
        "gamma": 0.1,
        "methods": ("nr", "doubling", "theory"),
        "trials": 3,
        "seed": 7,
    }
    names = (
        "eps_min",
        "eps_max",
        "generator",
        "noise",
        "delta",
        "radius_mode",
        "radius_epsilon",
        "radius_beta",
        "lambdas",
        "ceiling",
    )
    options = {name: changes.pop(name) for name in names if name in changes}
    return RunSettings(**{**base, **changes}, options=SearchOptions(T=50, **options))


def test_numpy_values_become_plain_python():
    settings = _settings()
    assert type(settings.lam) is float and type(settings.alphas[0]) is float
    assert "np.float64" not in reproduction_snippet(settings)


def test_json_round_trip():
    settings = _settings(eps_min=1e-4, eps_max=3.0, generator="output", extra={"trace_trial": 2})
    text = settings_json(settings)
    assert json.loads(text)["dataset"] == {"builtin": "diabetes", "options": {"test_size": 0.2, "seed": 0}}
    back = settings_from_json(text)
    assert back == settings and back.extra == {"trace_trial": 2}


def test_bad_records_and_options_are_rejected():
    with pytest.raises(AccFirstError, match="dataset spec names either"):
        settings_from_json('{"dataset": {}}')
    with pytest.raises(AccFirstError, match="settings record"):
        settings_from_json('{"dataset": {"builtin": "x"}}')
    with pytest.raises(AccFirstError, match="unknown dataset option"):
        DatasetSpec.from_upload("a.csv", target="y", __import__="os")
    with pytest.raises(AccFirstError, match="unknown method"):
        _settings(methods=("nr", "magic"))


def _string_constants(tree):
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_names_from_the_user_stay_string_literals():
    spec = DatasetSpec.from_upload(EVIL + ".csv", target=EVIL, task="ridge", features=[EVIL, "x"], scaling="paper")
    source = reproduction_snippet(_settings(dataset=spec))
    tree = ast.parse(source)
    assert {EVIL, EVIL + ".csv"} <= _string_constants(tree)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert imported == {"Path", "prepared_problem", "run_trials", "from_frame", "read_upload"}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import)]  # no `import os` smuggled in
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert called == {"Path", "read_upload", "from_frame", "prepared_problem", "run_trials", "print"}


def run_snippet(monkeypatch, tmp_path, settings: RunSettings, X, y) -> pd.DataFrame:
    """Execute the snippet of ``settings`` with a stand-in `accfirst.datasets` whose built-in table is (X, y); its
    results file."""
    data = types.SimpleNamespace(
        X_train=X,
        y_train=y,
        task=settings.task,
        preparation=Preparation("public"),
        row_bound=1.0,
        target_range=(-1.0, 1.0),
    )
    fake = types.ModuleType("accfirst.datasets")
    fake.load_builtin = lambda name, **kw: data if name == "diabetes" else None
    monkeypatch.setitem(sys.modules, "accfirst.datasets", fake)
    monkeypatch.chdir(tmp_path)
    exec(compile(reproduction_snippet(settings), "snippet.py", "exec"), {"__name__": "__main__"})
    return pd.read_csv(tmp_path / RESULTS_FILE)


@pytest.mark.parametrize("radius", [None, 0.5])
def test_builtin_snippet_reproduces_run_trials(monkeypatch, tmp_path, radius):
    """Executed with a stand-in `accfirst.datasets`, the snippet's frame equals a direct run."""
    X, y = make_ridge_data(5, 600, 4)
    settings = _settings(radius=radius)
    produced = run_snippet(monkeypatch, tmp_path, settings, X, y)
    expected = run_trials(RidgeProblem(X, y, **settings.problem_kwargs()), **settings.run_trials_kwargs())
    pd.testing.assert_series_equal(produced["eps_total"], expected["eps_total"], check_exact=False, rtol=1e-12)
    pd.testing.assert_series_equal(produced["excess_risk"], expected["excess_risk"], check_exact=False, rtol=1e-9)


def test_a_record_without_newer_options_reads_back_with_their_defaults():
    record = json.loads(settings_json(_settings()))
    del record["spacing"], record["eps_max"], record["radius"]
    again = settings_from_json(json.dumps(record))
    assert again.options == SearchOptions(T=50) and again.radius is None


def test_noise_and_delta_round_trip_and_reach_the_snippet():
    settings = _settings(noise="gaussian", delta=1e-5, methods=("nr", "doubling"))
    back = settings_from_json(settings_json(settings))
    assert back == settings and (back.options.noise, back.options.delta) == ("gaussian", 1e-5)
    snippet = reproduction_snippet(settings)
    assert "noise='gaussian'" in snippet and "delta=1e-05" in snippet
    with pytest.raises(AccFirstError, match="no Gaussian version"):
        _settings(noise="gaussian")  # the default methods include the theory approach


def test_an_upload_spec_states_every_preparation_option():
    spec = DatasetSpec.from_upload("t.csv", target="y", task="ridge", missing="median")
    options = dict(spec.options)
    assert options == {
        "target": "y",
        "task": "ridge",
        "missing": "median",
        "preparation": "private",
        "center": True,
        "standardize": True,
        "max_levels": 20,
        "budget": 2.0,
    }
    source = reproduction_snippet(_settings(dataset=spec))
    texts = (
        "preparation='private'",
        "center=True",
        "standardize=True",
        "missing='median'",
        "max_levels=20",
        "budget=2.0",
    )
    for text in texts:
        assert text in source
    again = settings_from_json(settings_json(_settings(dataset=spec)))
    assert dict(again.dataset.options) == options


def test_an_old_upload_record_reads_back_with_the_old_preparation():
    record = json.loads(settings_json(_settings(dataset=DatasetSpec.from_upload("t.csv", target="y", task="ridge"))))
    for name in LEGACY_PREPARATION:
        del record["dataset"]["options"][name]
    again = settings_from_json(json.dumps(record))
    assert dict(again.dataset.options) == {"target": "y", "task": "ridge", **LEGACY_PREPARATION}


def test_the_snippet_writes_a_file_the_app_does_not_offer():
    assert RESULTS_FILE not in {"accfirst_results.csv", "accfirst_sweep.csv"}
    assert f"results.to_csv({RESULTS_FILE!r}, index=False)" in reproduction_snippet(_settings())


def test_the_radius_round_trips_and_builds_the_problem(monkeypatch, tmp_path):
    settings = _settings(radius=np.float64(1.5))
    assert type(settings.radius) is float
    back = settings_from_json(settings_json(settings))
    assert back == settings and back.radius == 1.5
    source = reproduction_snippet(settings)
    assert "lam=0.01, radius=1.5)" in source
    assert " radius=" not in reproduction_snippet(_settings()) and ", radius=" not in reproduction_snippet(_settings())
    with pytest.raises(AccFirstError, match="radius must be > 0"):
        _settings(radius=-1.0)


def test_a_record_from_before_the_radius_modes_keeps_the_papers_radius():
    """Records written before the radius modes ran on M: they read back as "none", whatever the default is now."""
    record = json.loads(settings_json(_settings()))
    del record["radius_mode"], record["radius_epsilon"], record["radius_beta"]
    assert settings_from_json(json.dumps(record)).options.radius_mode == "none"
    private = _settings(radius_mode="private", radius_epsilon=0.2, radius_beta=0.01)
    assert settings_from_json(settings_json(private)) == private
    assert "radius_mode='private'" in reproduction_snippet(private) and "radius_beta=0.01" in reproduction_snippet(
        private
    )


def test_a_private_upload_records_its_schema_and_says_a_rerun_is_a_fresh_release(tmp_path, monkeypatch):
    """The record carries the choices and the schema; the snippet reruns them on the file, its totals with ε_prep."""
    rng = np.random.default_rng(2)
    evil = EVIL.strip()  # a schema's names are stripped, as the table's are
    frame = pd.DataFrame({"x": rng.normal(size=400), "kind": rng.choice(["a", "b"], size=400), evil: "id"})
    frame["y"] = frame["x"] + (frame["kind"] == "a") + rng.normal(scale=0.3, size=400)
    frame.to_csv(tmp_path / "t.csv", index=False)
    schema = Schema(
        {"x": ColumnSpec(range=(-4, 4)), "kind": ColumnSpec(levels=("a", "b")), evil: ColumnSpec(read=False)}
    )
    spec = DatasetSpec.from_upload("t.csv", target="y", task="ridge", schema=schema, prep_epsilon=0.5)
    settings = _settings(dataset=spec, methods=("nr",), trials=2)
    record = json.loads(settings_json(settings))["dataset"]["options"]
    assert record["schema"] == schema.to_dict() and record["prep_epsilon"] == 0.5
    assert settings_from_json(settings_json(settings)) == settings  # the schema round-trips
    source = reproduction_snippet(settings)
    assert "a fresh release (new noise, ε_prep paid" in source and "repeatable run: not a private release" in source
    assert evil in _string_constants(ast.parse(source))  # the schema's names stay string literals too
    seeded = reproduction_snippet(_settings(dataset=DatasetSpec.from_upload("t.csv", target="y", noise_seed=3)))
    assert "noise_seed is set: a repeatable run: not a private release" in seeded
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    exec(compile(source, "snippet.py", "exec"), namespace)
    produced, data = pd.read_csv(tmp_path / RESULTS_FILE), namespace["data"]
    assert data.prep_epsilon == pytest.approx(0.5) and np.allclose(produced["eps_prep"], 0.5)
    assert (produced["eps_total"] > 0.5).all() and evil not in data.feature_names
    assert data.feature_names == from_frame(frame, target="y", task="ridge", schema=schema).feature_names


def _explained(task: str, n: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """Rows with ‖x‖₁ ≤ 1 that three coefficients explain well: a target in [−1, 1] (R² ≈ 0.9) or its sign."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 3)) / 3
    y = np.clip(X @ np.array([2.4, -1.6, 1.0]) + rng.normal(scale=0.1, size=n), -1, 1)
    return X, (y if task == "ridge" else np.where(y > 0, 1.0, -1.0))


@pytest.mark.parametrize(
    ("task", "goal", "lambdas", "ceiling"),
    [("ridge", 0.5, None, 5.0), ("ridge", 0.5, (0.01,), 3.0), ("logistic", 0.8, None, 5.0)],
)
def test_a_certified_snippet_reruns_the_target_lambda_and_ceiling(monkeypatch, tmp_path, task, goal, lambdas, ceiling):
    """A record of runs toward R² ≥ r or accuracy ≥ a, λ chosen privately (``lambdas=None``) or fixed, within a ceiling:
    the snippet, executed, makes the runs ``run_trials`` makes toward that target with those options, row for row.
    Before the record could hold a goal, its snippet ran the paper's α = 0.05 instead."""
    X, y = _explained(task)
    lam = 0.005 if lambdas is None else lambdas[0]
    settings = _settings(
        task=task, lam=lam, alphas=(), goals=(goal,), methods=("nr",), lambdas=lambdas, ceiling=ceiling
    )
    assert settings_from_json(settings_json(settings)) == settings
    source = reproduction_snippet(settings)
    assert f"goals=[{goal!r}]," in source and f"ceiling={ceiling!r}," in source
    assert ("λ chosen privately" in source) == (lambdas is None)
    produced = run_snippet(monkeypatch, tmp_path, settings, X, y)
    problem = (RidgeProblem if task == "ridge" else LogisticProblem)(X, y, lam)
    target = VarianceExplained(goal) if task == "ridge" else Accuracy(goal)
    expected = run_trials(problem, [], 0.1, ["nr"], 3, 7, goals=[target], T=50, lambdas=lambdas, ceiling=ceiling)
    assert (produced["target"] == target.key).all() and (produced["goal"] == goal).all()
    assert not produced["refused"].any() and (produced["quality"] >= goal).all()
    for column in ("eps_total", "eps_test", "eps_hypothesis", "lam", "quality"):
        pd.testing.assert_series_equal(produced[column], expected[column], check_exact=False, rtol=1e-12)
    grid = default_lambdas(type(problem), 1.0, shared=task == "ridge") if lambdas is None else lambdas
    assert set(produced["lam"].dropna()) <= set(grid) and (produced["eps_total"] <= ceiling).all()


def test_a_goal_is_read_in_the_tasks_units_and_takes_noise_reduction_alone():
    assert _settings(alphas=(), goals=(0.8,), methods=("nr",)).quality_target(0.8) == VarianceExplained(0.8)
    with pytest.raises(AccFirstError, match=r"certified by noise reduction \('nr'\)"):
        _settings(alphas=(), goals=(0.8,), methods=("nr", "doubling"))
    with pytest.raises(AccFirstError, match=r"r \(the R² target\) must be in \(0, 1\)"):
        _settings(alphas=(), goals=(1.5,), methods=("nr",))
    record = json.loads(settings_json(_settings()))
    assert "goals" not in record and settings_from_json(json.dumps(record)).goals == ()
