"""``python -m accfirst run --r2|--accuracy|--lam auto|--json``: a target in the units people read from the command
line, and a refusal that spends nothing (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee, docs/mathematics.md#refusals-that-spend-nothing)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accfirst.cli import main
from accfirst.cli.output import EXIT_REFUSED
from accfirst.datasets import load_builtin
from accfirst.erm.logistic import LogisticProblem
from accfirst.erm.problems import prepared_problem
from accfirst.erm.quality import DEFAULT_TARGETS, Accuracy, VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.methods.certified import default_lambdas, refusal_before_reading
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import search, trial_rng
from accfirst.validation import REPEATABLE

PARTS = ("eps_prep", "eps_radius", "eps_scale", "eps_test", "eps_hypothesis")


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    status = main(["run", *argv, "--json"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines  # one JSON object, nothing else on stdout
    return status, json.loads(lines[0])


@pytest.fixture(scope="module")
def buzz() -> object:
    return load_builtin("synthetic-buzz")


def test_r2_with_lam_auto_is_the_packages_run_and_prints_every_key(buzz, capsys) -> None:
    status, record = run_json(["--dataset", "synthetic-buzz", "--r2", "0.85", "--lam", "auto"], capsys)
    assert status == 0
    target = VarianceExplained(0.85)
    expected = search(prepared_problem(buzz, 0.005), "nr", target, 0.1, trial_rng(0, "nr", target, 0), SearchOptions())
    assert expected.theta is not None
    assert record["theta"] == pytest.approx(list(expected.theta), rel=0, abs=0)
    assert record["lam"] == expected.lam and record["lam"] in default_lambdas(RidgeProblem, buzz.row_bound, shared=True)
    assert record["eps_total"] == expected.eps_total == pytest.approx(sum(record[part] for part in PARTS))
    assert record["eps_scale"] > 0 and record["eps_prep"] == 0  # the targets' variance; a public set is free
    assert (record["target"], record["goal"], record["met"], record["refused"]) == ("r2", 0.85, True, False)
    assert record["reason"] is None and record["released"] is True
    assert record["heldout_r2"] == pytest.approx(buzz.test_quality(expected.theta)["r2"])
    assert record["in_sample_r2"] == pytest.approx(expected.quality)
    assert record["evaluation_only"] == ["heldout_r2", "in_sample_r2"]


def test_a_number_fixes_lambda_and_the_text_says_what_was_certified(capsys) -> None:
    status, record = run_json(["--dataset", "synthetic-buzz", "--r2", "0.5", "--lam", "0.002"], capsys)
    assert status == 0 and record["lam"] == 0.002 and record["met"] is True
    assert main(["run", "--dataset", "synthetic-buzz", "--r2", "0.5", "--lam", "0.002"]) == 0
    printed = capsys.readouterr().out
    assert "certified R² ≥ 0.5 with probability ≥ 0.9 at λ = 0.002" in printed
    # --lam 0.002 fixes λ: the line must not say it was chosen privately.
    assert "at λ = 0.002 (fixed), on the training targets as prepared (clipped to their public range);" in printed
    assert "the targets' variance" in printed and "bounding R(0)" not in printed
    assert "held-out R²" in printed and "evaluation only" in printed


def test_accuracy_on_a_logistic_set_reports_the_heldout_accuracy(capsys) -> None:
    status, record = run_json(["--dataset", "synthetic-intrusion", "--accuracy", "0.8"], capsys)
    assert status == 0 and record["target"] == "accuracy" and record["met"] is True
    assert record["evaluation_only"] == ["heldout_accuracy", "in_sample_accuracy"]
    assert 0.8 <= record["heldout_accuracy"] <= 1 and len(record["theta"]) == 38
    assert main(["run", "--dataset", "synthetic-intrusion", "--accuracy", "0.8"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if "certified accuracy ≥ 0.8" in line]
    assert "clipped" not in line  # labels are not clipped: an accuracy certificate has no such scope
    assert "(chosen privately)" in line  # no --lam: λ came from the grid


def test_without_a_target_run_aims_at_the_default_and_refuses_a_small_table_before_preparing_it(
    monkeypatch, capsys
) -> None:
    """diabetes trains on 354 rows: R² ≥ 0.8 (the default) is out of reach within the default ceiling ε = 4 whatever the data, so the run
    says so with the package's sentence, exits 3, and never prepares the table (a private, charged preparation)."""
    monkeypatch.setattr("accfirst.cli.data.load_builtin", _must_not_prepare)
    assert DEFAULT_TARGETS["ridge"] == VarianceExplained(0.8) and DEFAULT_TARGETS["logistic"] == Accuracy(0.9)
    sentence = refusal_before_reading(RidgeProblem, 354, DEFAULT_TARGETS["ridge"], 0.1, SearchOptions())
    assert sentence is not None
    status, record = run_json(["--dataset", "diabetes"], capsys)
    assert status == EXIT_REFUSED == 3
    assert (record["refused"], record["met"], record["theta"], record["lam"]) == (True, False, None, None)
    assert record["reason"] == sentence and record["eps_total"] == 0 and all(record[part] == 0 for part in PARTS)
    assert (record["target"], record["goal"], record["n"]) == ("r2", 0.8, 354)
    alternative = "python -m accfirst run --dataset diabetes --json --method theory --alpha 0.05"
    assert record["uncertified_command"] == alternative  # asked for JSON, its alternative prints JSON too
    assert main(["run", "--dataset", "diabetes"]) == EXIT_REFUSED
    captured = capsys.readouterr()
    assert captured.out == (
        f"refused: {sentence}\nnot certified: the theory approach releases one model at the ε it sets in advance from "
        "α = 0.05 and public numbers (its R² is not promised): python -m accfirst run --dataset diabetes --method "
        "theory --alpha 0.05\n"
    )
    assert "R² ≥ 0.8, the default for ridge" in captured.err


@pytest.mark.parametrize(
    ("argv", "kept"),
    [
        (["--dataset", "diabetes", "--r2", "0.9", "--lam", "auto", "--ceiling", "2"], ["--dataset", "diabetes"]),
        (
            ["--data=diabetes", "--r2=0.9", "--lam", "0.01", "--ceil", "2", "--seed", "1", "--noise-seed", "4"],
            ["--dataset", "diabetes", "--lam", "0.01", "--seed", "1", "--noise-seed", "4"],
        ),
        (
            ["--dataset", "breast-cancer", "--acc", "0.99", "--method", "nr", "--T", "50"],
            ["--dataset", "breast-cancer"],
        ),
    ],
)
def test_a_refusal_says_the_exact_command_of_the_uncertified_alternative_and_it_runs(argv, kept, capsys) -> None:
    """The command keeps the data and the other options (written in full or abbreviated, ``--x=v`` or ``--x v``),
    leaves out the target and how it is certified, and names the theory approach at α = 0.05; run as printed, it
    releases that model (exit 0). Before, the alternative was named in words only."""
    assert main(["run", *argv]) == EXIT_REFUSED
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("not certified: the theory approach releases one model")
    command = last.split("): ", 1)[1]
    words = shlex.split(command)
    T = ["--T", "50"] if "--T" in argv else []
    assert words == [
        "python",
        "-m",
        "accfirst",
        "run",
        *kept[:2],
        *T,
        *kept[2:],
        "--method",
        "theory",
        "--alpha",
        "0.05",
    ]
    assert main(words[3:]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("RunResult(method='theory'") and "(ε set in advance" not in printed.split("\n")[0]


def test_a_csv_refusal_counts_the_training_split_and_reads_no_statistic(tmp_path, monkeypatch, capsys) -> None:
    rng = np.random.default_rng(0)
    path = tmp_path / "small.csv"
    pd.DataFrame({"x": rng.normal(size=100), "y": rng.normal(size=100)}).to_csv(path, index=False)
    monkeypatch.setattr("accfirst.cli.data.from_frame", _must_not_prepare)
    status, record = run_json(["--csv", str(path), "--target", "y", "--r2", "0.5", "--ceiling", "2"], capsys)
    expected = refusal_before_reading(RidgeProblem, 80, VarianceExplained(0.5), 0.1, SearchOptions(ceiling=2.0))
    assert status == EXIT_REFUSED and record["reason"] == expected and "no table of 80 rows" in expected


def test_alpha_keeps_working_and_its_json_marks_the_excess_risk(capsys) -> None:
    status, record = run_json(["--dataset", "diabetes", "--alpha", "0.4", "--noise-seed", "1", "--seed", "3"], capsys)
    assert status == 0 and (record["target"], record["goal"], record["lam"]) == ("alpha", 0.4, 0.005)
    assert record["evaluation_only"] == ["excess_risk", "heldout_r2"] and record["eps_prep"] > 0
    assert record["eps_total"] == pytest.approx(sum(record[part] for part in PARTS))
    assert record["seed"] == f"3 ({REPEATABLE})"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--dataset", "synthetic-intrusion", "--r2", "0.5"], "a target in R² is for ridge regression"),
        (["run", "--dataset", "diabetes", "--r2", "0.5", "--alpha", "0.1"], "not allowed with"),
        (["run", "--dataset", "diabetes", "--r2", "1.5"], r"r (the R² target) must be in (0, 1)"),
        (["run", "--dataset", "diabetes", "--alpha", "0.1", "--lam", "auto"], "--lam auto chooses λ"),
        (["run", "--dataset", "diabetes", "--alpha", "0.1", "--ceiling", "3"], "--ceiling only applies"),
        (["run", "--dataset", "diabetes", "--lam", "fast"], "expected a number > 0 or 'auto'"),
        (["run", "--dataset", "synthetic-buzz", "--method", "doubling"], "certified by noise reduction"),
        (["run", "--dataset", "synthetic-buzz", "--r2", "0.5", "--radius", "2"], "--radius applies with --alpha"),
        (["run", "--parquet", "data/*.parquet", "--target", "y", "--r2", "0.5"], "with --parquet give --alpha"),
        (["sweep", "--dataset", "diabetes", "--lam", "auto"], "a sweep runs every method at one λ"),
    ],
)
def test_bad_target_options_give_one_line_and_exit_2(argv, message, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "o")] if argv[0] == "sweep" else argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_refusal_from_the_shell_is_one_json_object_and_status_3() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "accfirst", "run", "--dataset", "breast-cancer", "--accuracy", "0.99", "--json"],
        capture_output=True,
        text=True,
        env={"OPENBLAS_NUM_THREADS": "1", "PATH": "", "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert done.returncode == EXIT_REFUSED, done.stderr
    record = json.loads(done.stdout)
    options = SearchOptions()
    assert record["reason"] == refusal_before_reading(LogisticProblem, 455, Accuracy(0.99), 0.1, options)
    assert "Traceback" not in done.stderr


def _must_not_prepare(*args: object, **kwargs: object) -> None:
    raise AssertionError("a refused target must not prepare the table")
