"""``python -m accfirst sweep|run`` end to end: files, columns, the same rows as the package, exit codes."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accfirst import run_trials
from accfirst.cli import build_parser, command_line, main
from accfirst.datasets import load_builtin
from accfirst.datasets.prepared import EXCLUDES_PREPARATION
from accfirst.erm.problems import prepared_problem
from accfirst.interpret import format_epsilon, format_exp_epsilon
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import COLUMNS, search, trial_rng
from accfirst.snippet import DatasetSpec, RunSettings


def accfirst(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m accfirst *args`` run in this process (``main``), from ``cwd``: its exit status, stdout and stderr.

    A new interpreter costs seconds of imports per call; what only the shell shows (the exit status of the process,
    Ctrl-C, the output of ``python -m``) is checked by the tests that start one (``shell`` below).
    """
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            status = main(list(args))
        except SystemExit as exit_info:
            status = exit_info.code if isinstance(exit_info.code, int) else 1
    return subprocess.CompletedProcess(["accfirst", *args], status, stdout.getvalue(), stderr.getvalue())


ROOT = Path(__file__).resolve().parents[2]
# A process of its own imports this checkout's package, whatever else is installed.
OWN_PACKAGE = {**os.environ, "PYTHONPATH": str(ROOT)}


def shell(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m accfirst *args`` in a process of its own, from ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "accfirst", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=OWN_PACKAGE,
    )


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("sweep") / "out"
    done = accfirst(
        "sweep",
        "--dataset",
        "diabetes",
        "--alphas",
        "0.2:0.4:0.2",
        "--trials",
        "3",
        "--methods",
        "nr,doubling,theory",
        "--seed",
        "7",
        "--noise-seed",
        "0",
        "--T",
        "300",
        "--workers",
        "2",
        "--out",
        str(out),
        cwd=out.parent,
    )
    return done, out


def test_sweep_writes_the_results_and_the_report(swept):
    done, out = swept
    assert done.returncode == 0, done.stderr
    results = pd.read_csv(out / "results.csv")
    assert set(COLUMNS) <= set(results.columns) and "eps_theory" in results.columns
    assert len(results) == 2 * 3 * 3
    assert set(results["method"]) == {"nr", "doubling", "theory"} and set(results["alpha"]) == {0.2, 0.4}
    report = (out / "report.html").read_text(encoding="utf-8")
    assert report.startswith("<!doctype html>") and report.count("Plotly.newPlot") == 6
    assert "--seed 7" in report  # the command is recorded in the report's settings
    assert "Data preparation" in report and "the sum of the columns&#x27; half-ranges" in report
    assert "repeatable run (noise seed 0): not a private release" in report  # diabetes: prepared privately, seeded
    assert "; preparation: ε = " in done.stderr
    assert "wrote" in done.stdout and "results.csv" in done.stdout
    assert "runs (100%)" in done.stderr  # the progress line


def test_sweep_rows_are_the_packages_rows(swept):
    _, out = swept
    results = pd.read_csv(out / "results.csv")
    data = load_builtin("diabetes", noise_seed=0)
    problem = prepared_problem(data, 0.005)  # the preparation's ε is part of every row's total
    reference = run_trials(problem, [0.2, 0.4], 0.1, ["nr", "doubling", "theory"], 3, seed=7, T=300)
    assert (results["eps_prep"] == data.prep_epsilon).all() and data.prep_epsilon > 0
    for column in ("eps_total", "eps_test", "excess_risk", "theta_norm"):
        np.testing.assert_allclose(results[column], reference[column], rtol=1e-12)
    np.testing.assert_array_equal(results["stop_index"], reference["stop_index"].astype(float))


def test_run_prints_the_sweeps_row(swept, tmp_path):
    _, out = swept
    done = accfirst(
        "run",
        "--dataset",
        "diabetes",
        "--alpha",
        "0.4",
        "--seed",
        "7",
        "--noise-seed",
        "0",
        "--T",
        "300",
        "--trial",
        "2",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RunResult(method='nr'")
    results = pd.read_csv(out / "results.csv")
    row = results[(results["method"] == "nr") & (results["alpha"] == 0.4) & (results["trial"] == 2)].iloc[0]
    assert f"eps_total={float(row['eps_total'])!r}" in done.stdout


def test_run_with_a_public_radius(tmp_path, capsys):
    argv = ["run", "--dataset", "diabetes", "--alpha", "0.3", "--T", "100", "--radius", "2.5", "--seed", "0"]
    assert main([*argv, "--noise-seed", "4"]) == 0
    printed = capsys.readouterr().out
    data = load_builtin("diabetes", noise_seed=4)
    problem = prepared_problem(data, 0.005, radius=2.5)
    expected = search(problem, "nr", 0.3, 0.1, trial_rng(0, "nr", 0.3, 0), SearchOptions(T=100))
    assert "norm_bound=2.5," in printed and f"eps_total={expected.eps_total!r}" in printed
    assert "seed 0 (repeatable run: not a private release)" in printed


def test_run_with_a_private_radius_prints_its_part(capsys):
    """A stated ε_R and β: with diabetes's row bound the test is cheap enough that the rule would skip the radius."""
    argv = ["run", "--dataset", "diabetes", "--alpha", "0.1", "--T", "100", "--radius-mode", "private", "--seed", "0"]
    stated = ["--radius-epsilon", "0.5", "--radius-beta", "0.01"]
    assert main([*argv, *stated, "--noise-seed", "4"]) == 0
    printed = capsys.readouterr().out
    problem = prepared_problem(load_builtin("diabetes", noise_seed=4), 0.005)
    options = SearchOptions(T=100, radius_mode="private", radius_epsilon=0.5, radius_beta=0.01)
    expected = search(problem, "nr", 0.1, 0.1, trial_rng(0, "nr", 0.1, 0), options)
    assert expected.eps_radius > 0 and f"eps_total={expected.eps_total!r}" in printed
    assert f"the private radius {format_epsilon(expected.eps_radius)} + testing" in printed
    assert f"released radius R = {expected.norm_bound:.4g}" in printed


def test_csv_input_with_task_inferred(tmp_path, capsys):
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.exponential(size=(400, 4)), columns=["a", "b", "c", "d"])
    table["label"] = np.where(table["a"] + rng.normal(size=400) > 1, "yes", "no")
    table.to_csv(tmp_path / "mine.csv", index=False)
    status = main(
        [
            "sweep",
            "--csv",
            str(tmp_path / "mine.csv"),
            "--target",
            "label",
            "--log1p",
            "a,b",
            "--positive-class",
            "yes",
            "--alphas",
            "0.3",
            "--trials",
            "2",
            "--T",
            "50",
            "--workers",
            "1",
            "--noise-seed",  # a repeatable preparation: on 400 rows about 1 in 13 noise draws leaves a column out
            "0",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert status == 0
    results = pd.read_csv(tmp_path / "o" / "results.csv")
    assert len(results) == 3 * 2 and set(results["generator"]) == {"output"}  # logistic: output perturbation
    assert results["n"].iloc[0] == 320 and results["p"].iloc[0] == 4
    assert "logistic problem" in capsys.readouterr().err


def test_csv_preparation_options_reach_from_frame(tmp_path, capsys):
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": rng.normal(5, 1, 200), "kind": rng.choice(["x", "y", "z"], 200)})
    table["y"] = 3 * table["a"] + np.where(table["kind"] == "x", 4.0, 0.0) + rng.normal(size=200)
    table.loc[::10, "a"] = np.nan
    table.to_csv(tmp_path / "mine.csv", index=False)
    # 160 training rows: a table's budget of 100 lets the preparation take what its statistics need (8.2).
    common = [
        "run",
        "--csv",
        str(tmp_path / "mine.csv"),
        "--target",
        "y",
        "--alpha",
        "0.3",
        "--T",
        "20",
        "--budget",
        "100",
    ]
    shapes = {}
    for name, extra in {
        "defaults": [],
        "legacy": [
            *("--preparation", "evaluation", "--missing", "drop"),
            *("--max-levels", "0", "--no-center", "--no-standardize"),
        ],
        "capped": ["--max-levels", "2"],
    }.items():
        assert main([*common, *extra]) == 0
        out = capsys.readouterr().out
        shapes[name] = tuple(int(re.search(rf"\b{key}=(\d+)", out).group(1)) for key in ("n", "p"))
    assert shapes == {"defaults": (160, 4), "legacy": (144, 1), "capped": (160, 3)}


def test_csv_with_a_schema_and_a_budget(tmp_path, capsys):
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"a": rng.normal(5, 1, 400), "kind": rng.choice(["x", "y"], 400), "id": np.arange(400.0)})
    table["label"] = np.where(table["a"] + rng.normal(size=400) > 5, "yes", "no")
    table.to_csv(tmp_path / "mine.csv", index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(
        '{"positive_class": "yes", "columns": {"a": {"range": [0, 10]}, "kind": {"levels": ["x", "y"]}, '
        '"id": {"read": false}}}',
        encoding="utf-8",
    )
    common = ["run", "--csv", str(tmp_path / "mine.csv"), "--target", "label", "--alpha", "0.3", "--T", "20"]
    assert main([*common, "--schema", str(schema), "--no-center"]) == 0
    captured = capsys.readouterr()
    assert re.search(r"\bp=3\b", captured.out)  # a, kind=x, kind=y: the id column is not read
    assert "preparation: ε = 0 (every statistic was declared" in captured.err
    assert main([*common, "--schema", str(schema)]) == 0  # centred at the middle of its declared range: free too
    assert "preparation: ε = 0 (every statistic was declared" in capsys.readouterr().err
    # Gaps filled with a private median: the one statistic left to release takes the stated budget.
    stated = ["--prep-epsilon", "0.4", "--noise-seed", "3", "--missing", "median"]
    assert main([*common, "--schema", str(schema), *stated]) == 0
    err = capsys.readouterr().err
    assert "preparation: ε = 0.4, δ = 0" in err and "repeatable run (noise seed 3): not a private release" in err
    assert main([*common, "--preparation", "evaluation", "--positive-class", "yes"]) == 0
    assert EXCLUDES_PREPARATION in capsys.readouterr().err


def test_csv_with_declared_ranges_and_a_table_budget(tmp_path, capsys):
    """``--range`` declares a column's range (free: no charged step for it); ``--budget`` caps the default ε_prep
    at a quarter of it, and the report says so."""
    rng = np.random.default_rng(4)
    table = pd.DataFrame({"a": rng.normal(5, 1, 1_000), "b": rng.uniform(-4, 4, 1_000)})
    table["y"] = table["a"] + table["b"] + rng.normal(size=1_000)
    table.to_csv(tmp_path / "mine.csv", index=False)
    common = ["run", "--csv", str(tmp_path / "mine.csv"), "--target", "y", "--alpha", "0.3", "--T", "20"]
    assert main([*common, "--noise-seed", "1", "--range", "a=0:10", "--range", "b=-5:5", "--budget", "4"]) == 0
    # Only the target's median, distance and mean are charged: 150 × 2.5 / 800 rows, 12% of the stated budget.
    err = capsys.readouterr().err
    assert "preparation: ε = 0.469, δ = 0 (3 private step(s)" in err and ": 12% of the table's budget ε = 4" in err
    assert main([*common, "--noise-seed", "1"]) == 0  # a and b private too: 1.31 needed, a quarter of 2 given
    err = capsys.readouterr().err
    assert "preparation: ε = 0.5, δ = 0 (9 private step(s)" in err and ": 25% of the table's budget ε = 2" in err


def test_run_prints_a_huge_risk_factor_as_a_power_of_ten(tmp_path):
    """The paper's calibration (on unit rows) on diabetes pays ε in the thousands: e^ε overflows a float."""
    done = accfirst(
        "run",
        "--dataset",
        "diabetes",
        "--alpha",
        "0.01",
        "--T",
        "100",
        "--method",
        "doubling",
        "--radius-mode",
        "none",
        "--calibration",
        "paper-code",
        # Repeatable: the stop varies from run to run, and an early one pays far less.
        "--seed",
        "1",
        "--noise-seed",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    eps = float(done.stdout.split("eps_total=")[1].split(",")[0])
    assert eps > 710 and f"e^ε = {format_exp_epsilon(eps)}," in done.stdout and "e^ε = inf" not in done.stdout


BAD_OPTIONS = [
    ([], "required"),
    (["sweep"], "one of the arguments --dataset --csv --parquet is required"),
    (["sweep", "--dataset", "nope"], "invalid choice"),
    (["sweep", "--dataset", "diabetes", "--csv", "x.csv"], "not allowed with"),
    (["sweep", "--dataset", "diabetes", "--trials", "many"], "invalid int value"),
    (["sweep", "--dataset", "diabetes", "--alphas", "0.2:0.1:0.01"], "must not end before"),
    (["sweep", "--dataset", "diabetes", "--alphas", "abc"], "not a number"),
    (["sweep", "--dataset", "diabetes", "--methods", "nr,oracle"], "unknown method"),
    (["sweep", "--dataset", "diabetes", "--trials", "0"], "--trials must be at least 1"),
    (["sweep", "--dataset", "diabetes", "--workers", "0"], "--workers must be at least 1"),
    (["sweep", "--dataset", "diabetes", "--gamma", "1.5"], "gamma"),
    (["sweep", "--dataset", "diabetes", "--lam", "-1"], "lam"),
    (["sweep", "--dataset", "diabetes", "--T", "1"], "at least 2"),
    (["sweep", "--dataset", "diabetes", "--target", "y"], "--target only applies with --csv"),
    (["sweep", "--dataset", "diabetes", "--no-center"], "--center/--no-center only applies with --csv"),
    (["sweep", "--dataset", "diabetes", "--missing", "drop"], "--missing only applies with --csv"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--max-levels", "1"], "max_levels"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--missing", "mean"], "invalid choice"),
    (["sweep", "--csv", "missing.csv", "--target", "y"], "cannot read missing.csv"),
    (["sweep", "--csv", "table.csv"], "--csv needs --target"),
    (["sweep", "--csv", "table.csv", "--target", "nope"], "not a column of table.csv"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--task", "logistic"], "positive"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--missing", "drop"], "missing='drop' drops rows"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--schema", "none.json"], "cannot read the schema file"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--prep-epsilon", "-1"], "prep_epsilon must be"),
    (["sweep", "--dataset", "diabetes", "--schema", "s.json"], "--schema only applies with --csv"),
    (["sweep", "--dataset", "diabetes", "--range", "age=0:1"], "--range only applies with --csv"),
    (["sweep", "--dataset", "diabetes", "--budget", "2"], "--budget only applies with --csv"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--range", "x"], "expected COL=LOW:HIGH"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--range", "x=0-1"], "expected LOW:HIGH"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--range", "x=1:0"], "range must have low < high"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--range", "z=0:1"], "'z'"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--range", "x=0:1", "--range", "x=0:2"], "x more than one"),
    (["sweep", "--csv", "table.csv", "--target", "y", "--budget", "0"], "budget must be a finite number > 0"),
    (["sweep", "--dataset", "synthetic-buzz", "--noise-seed", "1"], "generated from public parameters, no noise"),
    (["sweep", "--dataset", "breast-cancer", "--generator", "covariance"], "ridge"),
    (["run", "--dataset", "diabetes", "--alpha", "0"], "alpha"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--seed", "-1"], "--seed must be at least 0"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--eps-min", "2", "--eps-max", "1"], "eps_min"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--calibration", "magic"], "invalid choice"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--noise", "gaussian", "--delta", "2"], "delta must be in"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--noise", "cauchy"], "invalid choice"),
    (["sweep", "--dataset", "diabetes", "--noise", "gaussian"], "no Gaussian version"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--radius", "100"], "radius R = 100 exceeds M = 14.1421"),
    (["run", "--dataset", "diabetes", "--alpha", "0.1", "--radius", "-2"], "radius"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_OPTIONS)
def test_bad_options_give_one_line_and_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"x": [0.1, 0.5, 0.9, 0.3] * 5, "y": [1.0, 2.0, 3.0, 4.0, 5.0] * 4}).to_csv("table.csv", index=False)
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "o")] if argv and argv[0] == "sweep" else argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("accfirst: error: ") and message in err[-1]
    assert not any("Traceback" in line for line in err)
    assert not (tmp_path / "o" / "results.csv").exists()


def test_bad_option_from_the_shell(tmp_path):
    done = shell("sweep", "--dataset", "diabetes", "--alphas", "0,0.1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "accfirst: error: alpha (the target excess risk) must be > 0; got 0.0"


def test_help_documents_every_option():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # the sweep and run parsers
    for name, sub in commands.items():
        text = sub.format_help()
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings} has no help"
                assert action.option_strings[0] in text
    assert "--alphas" in commands["sweep"].format_help() and "--alpha " in commands["run"].format_help()


def test_command_line_round_trips_through_the_parser():
    settings = RunSettings(
        dataset=DatasetSpec.from_builtin("diabetes"),
        task="ridge",
        lam=0.01,
        alphas=(0.05, 0.1),
        gamma=0.05,
        methods=("nr", "theory"),
        trials=4,
        seed=3,
        options=SearchOptions(T=500, generator="output", calibration="paper-code"),
        radius=2.5,
    )
    words = command_line(settings, "0.05:0.1:0.05").split()
    assert words[:4] == ["python", "-m", "accfirst", "sweep"]
    args = build_parser().parse_args(words[3:])
    assert (args.dataset, args.lam, args.gamma, args.trials, args.seed, args.T) == ("diabetes", 0.01, 0.05, 4, 3, 500)
    assert args.radius == 2.5
    assert (args.methods, args.generator, args.calibration) == (["nr", "theory"], "output", "paper-code")
    assert args.alphas == "0.05:0.1:0.05"
    assert (args.noise, args.delta) == ("laplace", 1e-6) and "--noise" not in words
    gaussian = RunSettings(
        dataset=DatasetSpec.from_builtin("diabetes"),
        task="ridge",
        lam=0.01,
        alphas=(0.05,),
        gamma=0.1,
        methods=("nr", "doubling"),
        trials=1,
        seed=0,
        options=SearchOptions(noise="gaussian", delta=1e-5),
    )
    args = build_parser().parse_args(command_line(gaussian).split()[3:])
    assert (args.noise, args.delta) == ("gaussian", 1e-5)
    for mode in ("none", "free", "private"):
        stated = {"radius_epsilon": 0.2, "radius_beta": 0.01} if mode == "private" else {}
        settings = dataclasses.replace(gaussian, options=SearchOptions(radius_mode=mode, **stated))
        args = build_parser().parse_args(command_line(settings).split()[3:])
        assert (args.radius_mode, args.radius_epsilon, args.radius_beta) == (
            mode,
            stated.get("radius_epsilon"),
            stated.get("radius_beta"),
        )


def test_run_with_gaussian_noise_states_its_delta(capsys):
    assert main(["run", "--dataset", "diabetes", "--alpha", "0.4", "--T", "100", "--noise", "gaussian"]) == 0
    out = capsys.readouterr().out
    assert "noise='gaussian'" in out and "delta=1e-06" in out
    assert "(ε, δ)-ex-post with δ = 1e-06 ε = " in out


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
def test_ctrl_c_keeps_the_finished_runs(tmp_path):
    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "accfirst",
            "sweep",
            "--dataset",
            "diabetes",
            "--alphas",
            "0.005:0.2:0.005",
            "--trials",
            "200",
            "--methods",
            "nr",
            "--T",
            "200",
            "--workers",
            "2",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env=OWN_PACKAGE,
    )
    deadline = time.monotonic() + 60
    for line in process.stderr:  # wait for the first progress line: the sweep is under way
        if "runs (" in line or time.monotonic() > deadline:
            break
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=60)[1]
    assert process.returncode == 130
    assert "interrupted after" in rest and "Traceback" not in rest
    results = pd.read_csv(out / "results.csv")
    assert 0 < len(results) < 8000 and set(COLUMNS) <= set(results.columns)


def test_a_private_preparation_chooses_the_task_without_reading_the_target(tmp_path, capsys):
    """Without --task and a declared class, a two-valued target is ridge (its values are not read to decide)."""
    rng = np.random.default_rng(3)
    table = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    # Two distinct values: a preparation that read them would choose logistic.
    table["label"] = np.where(table["a"] > 0, 1.0, 0.0)
    table.to_csv(tmp_path / "t.csv", index=False)
    argv = ["run", "--csv", str(tmp_path / "t.csv"), "--target", "label", "--alpha", "0.3", "--T", "50"]
    assert main(argv) == 0
    assert "generator='covariance'" in capsys.readouterr().out  # ridge: covariance perturbation
    assert main([*argv, "--preparation", "evaluation"]) == 0  # evaluation only reads the data, and says so
    assert "generator='output'" in capsys.readouterr().out  # logistic: output perturbation
