"""``python -m accfirst run|sweep --parquet``: data larger than memory, end to end
(docs/mathematics.md#the-two-learning-problems, docs/data-preparation.md#scaling-into-the-unit-ball)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accfirst.cli import main
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import run_trials, search, trial_rng
from tests.cli.test_cli_sweep_run import accfirst
from tests.test_scale import FEATURES, write_parts

BOUNDS = ["--feature-bound", "3", "--target-bound", "2"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("parquet")
    write_parts(folder, parts=4, rows=2500)
    return folder


def test_run_reads_the_files_and_prints_the_packages_run(folder, tmp_path) -> None:
    from accfirst.scale import problem_from_parquet

    done = accfirst(
        "run",
        "--parquet",
        f"{folder}/*.parquet",
        "--target",
        "y",
        "--features",
        ",".join(FEATURES),
        *BOUNDS,
        "--alpha",
        "0.02",
        "--seed",
        "3",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    problem = problem_from_parquet(f"{folder}/*.parquet", "y", FEATURES, feature_bound=3.0, target_bound=2.0)
    run = search(problem, "nr", 0.02, 0.1, trial_rng(3, "nr", 0.02, 0), SearchOptions())
    assert not run.fallback
    assert done.stdout.startswith("RunResult(method='nr'") and f"eps_total={run.eps_total!r}" in done.stdout


def test_sweep_of_a_logistic_problem_in_parquet(folder, tmp_path) -> None:
    """Two worker processes receive the problem pickled and read the files themselves: the rows are the package's."""
    from accfirst.scale import problem_from_parquet

    out = tmp_path / "out"
    done = accfirst(
        "sweep",
        "--parquet",
        str(folder),
        "--target",
        "kind",
        "--positive-class",
        "spam",
        "--task",
        "logistic",
        "--features",
        ",".join(FEATURES),
        "--feature-bound",
        "3",
        "--alphas",
        "0.05",
        "--methods",
        "nr,doubling",
        "--trials",
        "1",
        "--workers",
        "2",
        "--seed",
        "0",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "repeatable run: not a private release" in done.stderr  # real data with a seed
    results = pd.read_csv(out / "results.csv")
    problem = problem_from_parquet(folder, "label", FEATURES, task="logistic", feature_bound=3.0)
    reference = run_trials(problem, [0.05], 0.1, ["nr", "doubling"], 1, seed=0)
    np.testing.assert_allclose(results["eps_total"], reference["eps_total"], rtol=1e-12)
    np.testing.assert_allclose(results["excess_risk"], reference["excess_risk"], rtol=1e-8)
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "read 10,000 rows of 4 features from the Parquet files" in report
    assert "not available" in report  # the paper's scaling, out of core
    assert "0 (repeatable run: not a private release)" in report


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--test-size", "0.3"], "--test-size does not apply with --parquet"),
        (["--center", "--log1p", "a"], "--log1p, --center/--no-center do not apply with --parquet"),
        (["--scaling", "paper"], "--scaling paper does not apply with --parquet: out of core"),
        (["--target-bound", "2"], "feature_bound is required"),
        (["--feature-bound", "3"], "ridge needs target_bound"),
        (["--feature-bound", "3", "--target-bound", "2", "--target", "nope"], "target 'nope' is not a column"),
    ],
)
def test_bad_parquet_options_give_one_line_and_exit_2(folder, extra, message, capsys) -> None:
    target = [] if "--target" in extra else ["--target", "y"]
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--parquet", str(folder), *target, "--features", ",".join(FEATURES), "--alpha", "0.1", *extra])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("accfirst: error: ") and message in error


def test_scheduler_applies_only_with_parquet(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--dataset", "diabetes", "--alpha", "0.1", "--scheduler", "tcp://127.0.0.1:1"])
    assert "--scheduler only applies with --parquet" in capsys.readouterr().err
