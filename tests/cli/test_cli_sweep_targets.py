"""``python -m accfirst sweep --r2|--accuracy``: a sweep over targets in the units people read, certified by noise
reduction with λ chosen privately (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee), and the command line that reruns such a record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accfirst.cli import build_parser, command_line, main
from accfirst.methods.certified import LAMBDA_RATIO
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import COLUMNS
from accfirst.snippet import DatasetSpec, RunSettings

# A small table three columns explain well (R² ≈ 0.9): each run takes a fraction of a second.
TABLE = ["--target", "y", "--task", "ridge", "--preparation", "evaluation", "--T", "50", "--seed", "3"]


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 3))
    y = X @ np.array([2.4, -1.6, 1.0]) + rng.normal(scale=0.3, size=4000)
    path = tmp_path_factory.mktemp("goals") / "t.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def swept(table: Path) -> tuple[pd.DataFrame, str]:
    out = table.parent / "out"
    argv = ["sweep", "--csv", str(table), *TABLE, "--r2", "0.5,0.7", "--trials", "2", "--ceiling", "4.5"]
    assert main([*argv, "--workers", "1", "--out", str(out)]) == 0
    return pd.read_csv(out / "results.csv"), (out / "report.html").read_text(encoding="utf-8")


def test_a_sweep_over_r2_goals_runs_noise_reduction_alone_with_lambda_chosen_privately(swept) -> None:
    """One row per goal and trial (the default methods become noise reduction), each λ from the default grid and each
    ε within the ceiling; the report is the certified one (before, --r2 was not a sweep option)."""
    frame, report = swept
    assert list(frame.columns) == [*COLUMNS, "eps_theory"] and len(frame) == 4
    assert (frame["method"] == "nr").all() and (frame["target"] == "r2").all()
    assert frame["goal"].tolist() == [0.5, 0.5, 0.7, 0.7] and frame["trial"].tolist() == [0, 1, 0, 1]
    assert not frame["nothing_released"].any() and (frame["quality"] >= frame["goal"]).all()
    # The default grid is geometric with ratio LAMBDA_RATIO (its top from the rows' bound): λ chosen from it, not fixed.
    steps = np.log(frame["lam"] / frame["lam"].max()) / np.log(LAMBDA_RATIO)
    assert np.allclose(steps, np.round(steps), atol=1e-9) and frame["lam"].nunique() > 1
    assert (frame["eps_total"] <= 4.5).all()
    assert "Accuracy-first sweep over certified targets" in report and "R² ≥ 0.5" in report
    assert "certified R² ≥ 0.5, 0.7" in report and "ε = 4.5 per run" in report and "chosen privately" in report


def test_run_at_a_goal_is_the_sweeps_row(swept, table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame, _ = swept
    argv = ["run", "--csv", str(table), *TABLE, "--r2", "0.7", "--ceiling", "4.5", "--trial", "1", "--json"]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    row = frame[(frame["goal"] == 0.7) & (frame["trial"] == 1)].iloc[0]
    assert (record["eps_total"], record["lam"]) == pytest.approx((row["eps_total"], row["lam"]), rel=1e-12)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--r2", "0.5", "--accuracy", "0.9"], "not allowed with"),
        (["--r2", "0.5", "--alphas", "0.1"], "not allowed with"),
        (["--r2", "0.5,0.5"], "r2 goal values must not repeat"),
        (["--r2", "1.5"], "r (the R² target) must be in (0, 1)"),
        (["--r2", "0.5", "--methods", "nr,doubling"], "certified by noise reduction ('nr')"),
        (["--r2", "0.5", "--radius", "2"], "--radius applies with --alpha or --kappa"),
        (["--accuracy", "0.9"], "a target in accuracy is for logistic regression; this is a ridge problem"),
        (["--alphas", "0.1", "--ceiling", "3"], "--ceiling only applies with a target in R² or accuracy"),
        (["--alphas", "0.1", "--lam", "auto"], "--lam auto chooses λ under the private test"),
    ],
)
def test_bad_target_options_give_one_line_and_exit_2(argv, message, table: Path, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", "--csv", str(table), *TABLE, *argv, "--workers", "1", "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_record_of_goals_reruns_from_the_command_line() -> None:
    """The command line of a record toward R² goals names them, λ auto (or the fixed λ) and a ceiling other than the
    default; the parser reads back what the record holds."""
    settings = RunSettings(
        dataset=DatasetSpec.from_builtin("synthetic-buzz"),
        task="ridge",
        lam=0.005,
        alphas=(),
        goals=(0.6, 0.8),
        gamma=0.1,
        methods=("nr",),
        trials=2,
        seed=1,
        options=SearchOptions(ceiling=3.0),
    )
    args = build_parser().parse_args(command_line(settings).split()[3:])
    assert (args.r2, args.accuracy, args.alphas, args.lam, args.ceiling) == ("0.6,0.8", None, None, "auto", 3.0)
    fixed = dataclasses.replace(settings, lam=0.002, options=SearchOptions(lambdas=(0.002,)))
    args = build_parser().parse_args(command_line(fixed).split()[3:])
    assert (args.lam, args.ceiling) == (0.002, None)
    logistic = dataclasses.replace(settings, dataset=DatasetSpec.from_builtin("synthetic-intrusion"), task="logistic")
    args = build_parser().parse_args(command_line(logistic).split()[3:])
    assert (args.accuracy, args.r2) == ("0.6,0.8", None)
