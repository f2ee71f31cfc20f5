"""The Gibbs posterior as a fourth method: seeds, rows, δ in every label, the CLI and the snippet.

Deterministic (fixed seeds); about 5 s.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from accfirst import (
    AccFirstError,
    ExPostFilter,
    LogisticProblem,
    RidgeProblem,
    SearchOptions,
    filtered_search,
    gibbs_run,
    run_trials,
    trial_rng,
)
from accfirst.cli import build_parser, command_line, main
from accfirst.interpret import format_delta, plain_sentence, summarise_runs
from accfirst.methods.registry import METHODS, paper_methods
from accfirst.plots import method_label
from accfirst.plots.explorer import figure_breakdown, figure_epsilon_distribution
from accfirst.plots.paper import fig1_epsilon, fig3_breakdown, html_report, paper_table
from accfirst.plots.quality import figure_excess_risk
from accfirst.snippet import DatasetSpec, RunSettings, settings_from_json, settings_json
from tests.data import make_logistic_data, make_ridge_data


@pytest.fixture(scope="module")
def ridge() -> RidgeProblem:
    # p = 20: at these α the derived (ε, δ) beats the pure ε, so the rows carry δ > 0.
    X, y = make_ridge_data(2, 1500, 20)
    return RidgeProblem(X, y, 0.005)


@pytest.fixture(scope="module")
def frame(ridge: RidgeProblem) -> pd.DataFrame:
    return run_trials(ridge, [0.02, 0.05], 0.1, ["nr", "theory", "gibbs"], 4, 3, T=200)


def test_gibbs_is_appended_so_earlier_seeds_stay(ridge: RidgeProblem) -> None:
    keys = list(METHODS)
    assert tuple(keys[: len(paper_methods())]) == paper_methods() and keys[-1] == "gibbs"
    state = trial_rng(0, "nr", 0.05, 1).bit_generator.state
    assert (
        state == np.random.default_rng(np.random.SeedSequence(0, spawn_key=(0, 50_000_000_000, 1))).bit_generator.state
    )


def test_rows_of_the_gibbs_method(ridge: RidgeProblem, frame: pd.DataFrame) -> None:
    rows = frame[frame["method"] == "gibbs"]
    assert len(rows) == 8 and set(rows["noise"]) == {"gibbs"} and set(rows["delta"]) == {1e-6}
    assert (rows["eps_test"] == 0).all() and not rows["fallback"].any()
    first = rows.iloc[0]
    again = gibbs_run(ridge, first["alpha"], 0.1, 1e-6, trial_rng(3, "gibbs", first["alpha"], int(first["trial"])))
    assert again.eps_total == first["eps_total"] and again.excess_risk == first["excess_risk"]
    assert set(frame.loc[frame["method"] != "gibbs", "delta"]) == {0.0}
    pure = run_trials(ridge, [0.05], 0.1, ["gibbs"], 1, 3, delta=0.0)
    # At δ > 0 a ridge run reports the guarantee with the smaller ε.
    assert pure["delta"].iloc[0] == 0 and pure["eps_total"].iloc[0] > rows.loc[rows["alpha"] == 0.05, "eps_total"].max()


def test_delta_option_is_validated() -> None:
    assert SearchOptions().delta == 1e-6
    for bad in (-1e-9, 1.0, float("nan"), "tiny"):
        with pytest.raises(AccFirstError, match="delta"):
            SearchOptions(delta=bad)
    X, y = make_logistic_data(0, 300, 3)
    with pytest.raises(AccFirstError, match="delta > 0"):
        run_trials(LogisticProblem(X, y, 0.01), [0.1], 0.1, ["gibbs"], 1, 0, delta=0.0)


def test_figures_name_the_delta_and_keep_gibbs_out_of_the_breakdown(frame: pd.DataFrame) -> None:
    label = f"Gibbs posterior (δ = {format_delta(1e-6)})"
    assert method_label("gibbs", frame[frame["method"] == "gibbs"]) == label
    assert method_label("nr", frame[frame["method"] == "nr"]) == "Noise reduction"
    fig = fig1_epsilon(frame, "gibbs")
    assert {t.name for t in fig.data} >= {f"{label}: median", "Noise reduction: median"}
    assert "(ε, δ) guarantee" in fig.layout.title.subtitle.text.replace("<br>", " ")
    assert not any("Gibbs" in (t.name or "") for t in fig3_breakdown(frame).data)
    assert f"{label}: median ε" in paper_table(frame).columns
    assert "(ε, δ) guarantee" in html_report(frame, {"data": "test"})
    alpha_rows = frame[frame["alpha"] == 0.05]
    assert any(label in str(t.y[0]) for t in figure_epsilon_distribution(alpha_rows).data)
    assert any(label in str(y) for y in figure_breakdown(alpha_rows).data[0].y)
    assert any(label in str(t.y[0]) for t in figure_excess_risk(alpha_rows, 0.05).data)
    with pytest.raises(ValueError, match="versus"):
        fig1_epsilon(frame, "lasso")


def test_plain_sentence_names_delta_and_the_missing_test(frame: pd.DataFrame) -> None:
    summary = summarise_runs(frame[frame["alpha"] == 0.05]).set_index("method")
    assert summary.loc["gibbs", "delta"] == 1e-6 and summary.loc["nr", "delta"] == 0
    sentence = plain_sentence(summary.loc["gibbs"].rename(None).to_dict() | {"method": "gibbs"})
    assert "fixed in advance" in sentence and "δ = 10⁻⁶" in sentence and "no private test" in sentence
    assert "δ" not in plain_sentence(summary.loc["nr"].to_dict() | {"method": "nr"})


def test_cli_runs_gibbs_with_a_delta(capsys) -> None:
    assert main(["run", "--dataset", "diabetes", "--method", "gibbs", "--alpha", "0.1", "--delta", "1e-7"]) == 0
    printed = capsys.readouterr().out
    # On 354 rows the Gaussian profile's ε at δ = 10⁻⁷ is the smaller: the run reports (ε, 10⁻⁷).
    assert "delta=1e-07" in printed and "(ε, δ)-DP with δ = 1e-07" in printed
    assert "Gibbs posterior: β = " in printed and "released on the lattice" in printed
    assert "acceptance" not in printed  # no count read from the data
    args = build_parser().parse_args(["sweep", "--dataset", "diabetes"])
    assert args.methods is None and args.delta == 1e-6  # no --methods: the sweep runs the paper's at each α
    settings = RunSettings(
        dataset=DatasetSpec.from_builtin("diabetes"),
        task="ridge",
        lam=0.005,
        alphas=(0.1,),
        gamma=0.1,
        methods=("nr", "gibbs"),
        trials=2,
        seed=0,
        options=SearchOptions(delta=1e-8),
    )
    assert "--delta 1e-08" in command_line(settings) and "--methods nr,gibbs" in command_line(settings)
    assert "--delta" not in command_line(RunSettings(**{**vars(settings), "options": SearchOptions()}))


def test_settings_record_carries_delta() -> None:
    settings = RunSettings(
        dataset=DatasetSpec.from_builtin("diabetes"),
        task="ridge",
        lam=0.005,
        alphas=(0.1,),
        gamma=0.1,
        methods=("gibbs",),
        trials=1,
        seed=0,
        options=SearchOptions(delta=1e-7),
    )
    record = json.loads(settings_json(settings))
    assert record["delta"] == 1e-7 and settings_from_json(settings_json(settings)) == settings
    del record["delta"]
    assert settings_from_json(json.dumps(record)).options.delta == 1e-6


def test_gibbs_runs_inside_an_expost_filter(ridge: RidgeProblem) -> None:
    """Its (ε, δ) is known in advance: declared, charged in full, no refund (docs/mathematics.md#the-ex-post-filter)."""
    budget = ExPostFilter(200.0, 1e-5)
    run = filtered_search(budget, ridge, "gibbs", 0.05, 0.1, rng=0)
    assert run.status == "released" and run.charged == run.declared == run.result.eps_total
    assert run.delta == run.result.delta == 1e-6 and budget.delta_spent == 1e-6


def test_logistic_gibbs_runs_inside_an_expost_filter() -> None:
    """Its (ε, δ) is fixed before it runs (the sampler's TV bound is proven, not diagnosed), so a filter
    admits it on that bound and charges it in full; a shape its sampler cannot finish is refused before
    admission, and the ledger is left as it was."""
    X, y = make_logistic_data(0, 1000, 4)
    budget = ExPostFilter(50.0, 1e-5)
    run = filtered_search(budget, LogisticProblem(X, y, 0.01), "gibbs", 0.05, 0.1, rng=0)
    assert run.status == "released" and run.charged == run.declared == run.result.eps_total
    assert run.delta == run.result.delta == 1e-6 and budget.delta_spent == 1e-6
    X, y = make_logistic_data(1, 300, 40)
    refused = filtered_search(budget, LogisticProblem(X, y, 1e-5), "gibbs", 0.05, 0.1, rng=0)
    assert refused.status == "refused" and "larger λ" in refused.error and refused.charged == 0
    assert budget.delta_spent == 1e-6 and list(budget.ledger["status"]) == ["charged", "refused"]
