"""``python -m accfirst run|sweep --kappa``: a relative target from the command line
(docs/mathematics.md#a-relative-accuracy-target)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from accfirst import RelativeTarget, SearchOptions
from accfirst.cli import build_parser, command_line, main
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.search.experiments import COLUMNS, search, trial_rng
from accfirst.snippet import DatasetSpec, RunSettings, reproduction_snippet, settings_from_json, settings_json


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("kappa") / "out"
    argv = ["sweep", "--dataset", "synthetic-buzz", "--kappa", "0.5,0.2", "--methods", "nr,theory", "--trials", "2"]
    assert main([*argv, "--T", "50", "--radius-mode", "free", "--workers", "1", "--out", str(out)]) == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "The target was <strong>relative</strong>" in report and "κ = 0.5,0.2" in report
    return pd.read_csv(out / "results.csv")


def test_sweep_at_kappa_writes_the_bill_and_the_released_alpha(swept: pd.DataFrame) -> None:
    assert list(swept.columns) == [*COLUMNS, "eps_theory"]
    assert sorted(swept["kappa"].unique()) == [0.2, 0.5] and len(swept) == 8
    assert (swept["eps_scale"] > 0).all() and swept["alpha"].notna().all() and swept["r0"].notna().all()
    parts = swept[["eps_prep", "eps_radius", "eps_scale", "eps_test", "eps_hypothesis"]].sum(axis=1)
    pd.testing.assert_series_equal(parts, swept["eps_total"], check_names=False)
    assert (swept["alpha"] == swept["kappa"] * swept["scale"]).all()


def test_run_at_kappa_is_the_sweeps_row(swept: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--dataset", "synthetic-buzz", "--kappa", "0.2", "--T", "50", "--radius-mode", "free"]
    assert main([*argv, "--trial", "1"]) == 0
    printed = capsys.readouterr().out
    row = swept[(swept["method"] == "nr") & (swept["kappa"] == 0.2) & (swept["trial"] == 1)].iloc[0]
    assert f"eps_total={float(row['eps_total'])!r}" in printed
    assert "bounding R(0)" in printed and "released α = κ·Ŝ" in printed and "evaluation only" in printed


def test_a_table_without_signal_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--dataset", "diabetes", "--kappa", "0.2"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("NoSignal(") and "no signal a private model could keep" in printed
    problem = prepared_problem(load_builtin("diabetes"), 0.005)
    target = RelativeTarget(0.2)
    expected = search(problem, "nr", target, 0.1, trial_rng(0, "nr", target, 0), SearchOptions())
    assert f"eps_total={expected.eps_total!r}" in printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--dataset", "diabetes", "--kappa", "1.5"], "kappa (the relative target) must be in (0, 1)"),
        (["run", "--dataset", "diabetes", "--kappa", "0.2", "--alpha", "0.1"], "not allowed with"),
        (["run", "--dataset", "diabetes", "--alpha", "0.1", "--test-budget", "3"], "--test-budget only applies"),
        (["run", "--dataset", "diabetes", "--kappa", "0.2", "--test-budget", "0"], "test_budget must be > 0"),
        (["sweep", "--dataset", "diabetes", "--kappa", "0.2", "--alphas", "0.1"], "not allowed with"),
        (["sweep", "--dataset", "diabetes", "--kappa", "0.2,0.2"], "must not repeat"),
        (["sweep", "--dataset", "diabetes", "--kappa", "0.2,x"], "in kappas"),
    ],
)
def test_bad_relative_options_give_one_line(argv, message, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "o")] if argv[0] == "sweep" else argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_relative_view_reruns_from_the_command_line_and_the_snippet() -> None:
    settings = RunSettings(
        dataset=DatasetSpec.from_builtin("diabetes"),
        task="ridge",
        lam=0.005,
        alphas=(),
        kappas=(0.2,),
        gamma=0.1,
        methods=("nr",),
        trials=3,
        seed=1,
    )
    args = build_parser().parse_args(command_line(settings).split()[3:])
    assert args.kappa == "0.2" and args.alphas is None
    assert settings_from_json(settings_json(settings)) == settings
    assert "kappas=[0.2]" in reproduction_snippet(settings) and "'kappa'" in reproduction_snippet(settings)
    budgeted = dataclasses.replace(settings, options=SearchOptions(test_budget=30.0))
    args = build_parser().parse_args(command_line(budgeted).split()[3:])
    assert args.test_budget == 30.0 and "test_budget=30.0" in reproduction_snippet(budgeted)
