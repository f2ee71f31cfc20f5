"""Runs toward a target in R² or accuracy summarised for a card, and their sentences
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#refusals-that-spend-nothing).

The frames come from real runs (``run_cells``) on a small ridge problem, so a summary that reads the wrong column, or
a frame that lost one, fails here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from accfirst.erm.quality import VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.interpret.certified import (
    HELDOUT,
    certified_parts,
    stopped_sentence,
    summarise_certified,
    target_text,
)
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import COLUMNS, MODEL, run_cells


def _ridge(n: int, signal: float = 1.0) -> RidgeProblem:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 3)) / 3
    y = np.clip(signal * X @ np.array([2.4, -1.6, 1.0]) + rng.normal(scale=0.2, size=n), -1, 1)
    return RidgeProblem(X, y, 0.01).with_preparation(0.3, 0.0)


def _runs(problem: RidgeProblem, target: VarianceExplained, options: SearchOptions, trials: int = 4) -> pd.DataFrame:
    rows = run_cells(problem, 0.1, 5, options, [("nr", target, trial) for trial in range(trials)])
    return pd.DataFrame(rows, columns=[*COLUMNS, MODEL])


def test_the_summary_gives_the_whole_bill_its_parts_the_lambda_and_the_quality():
    runs = _runs(_ridge(3000), VarianceExplained(0.5), SearchOptions(ceiling=20.0))
    runs[HELDOUT] = np.linspace(0.4, 0.7, len(runs))
    [row] = summarise_certified(runs).to_dict("records")
    assert row["trials"] == 4 and row["released"] == 4 and row["refused"] == 0
    assert row["median_eps"] == pytest.approx(runs["eps_total"].median())
    assert row["median_eps_prep"] == 0.3
    assert [name for name, _ in certified_parts(row)] == [
        "preparing the data",
        "the targets' variance",
        "the private check",
        "the model",
    ]
    assert row["median_lam"] == pytest.approx(runs["lam"].median())
    assert row["median_quality"] == pytest.approx(runs["quality"].median())
    assert row["met"] == int((runs["quality"] >= 0.5).sum())
    assert row["median_heldout"] == pytest.approx(0.55)
    assert target_text(row) == "R² ≥ 0.5" and stopped_sentence(row) == ""
    assert all(theta is not None and theta.shape == (3,) for theta in runs[MODEL])


def test_a_refusal_is_said_in_the_packages_own_sentence_and_spends_nothing_beyond_the_preparation():
    runs = _runs(_ridge(60), VarianceExplained(0.95), SearchOptions(ceiling=1.0), trials=2)
    [row] = summarise_certified(runs).to_dict("records")
    assert row["refused"] == 2 and row["released"] == 0 and math.isnan(row["median_lam"])
    assert row["median_eps"] == 0.3 and certified_parts(row) == [("preparing the data", 0.3)]
    sentence = stopped_sentence(row)
    assert sentence.startswith("Refused before reading the data: no table of 60 rows")
    assert "Nothing was read or spent" in sentence
    assert all(theta is None for theta in runs[MODEL])


def test_runs_that_read_the_data_and_released_nothing_say_why_and_what_they_were_charged():
    # Targets that are pure noise: no model explains half their variance, and the test never passes.
    runs = _runs(_ridge(3000, signal=0.0), VarianceExplained(0.5), SearchOptions(ceiling=20.0, T=5), trials=2)
    [row] = summarise_certified(runs).to_dict("records")
    assert row["released"] == 0 and row["refused"] == 0
    sentence = stopped_sentence(row)
    assert sentence.startswith("2 of 2 runs released nothing: ") and row["stopped"] in sentence
    assert "charged what it spent" in sentence


def test_the_summary_refuses_a_frame_of_several_targets():
    problem = _ridge(3000)
    options = SearchOptions(ceiling=20.0)
    frame = pd.concat(
        [_runs(problem, VarianceExplained(0.5), options, 1), _runs(problem, VarianceExplained(0.6), options, 1)]
    )
    with pytest.raises(ValueError, match="single target"):
        summarise_certified(frame)
