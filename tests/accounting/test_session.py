"""A queue of analyses under one budget (docs/mathematics.md#the-ex-post-filter,
docs/mathematics.md#many-analyses-one-budget): the ledger adds up, a refusal does not end the queue, a fallback is
charged its bound, and the same queue under doubling fits fewer analyses.

Fixed seeds throughout (a repeatable run; a session's default draws from the operating system); the comparisons are
deterministic given them (no statistical claim).
"""

from __future__ import annotations

import numpy as np
import pytest

from accfirst import AccFirstError, SearchOptions
from accfirst.accounting.session import Analysis, describe_budget, fitted, run_session, session_budget
from accfirst.erm.ridge import RidgeProblem
from tests.data import make_ridge_data


@pytest.fixture(scope="module")
def problem() -> RidgeProblem:
    X, y = make_ridge_data(3, 20_000, 8)
    return RidgeProblem(X, y, 5e-3)


def final(problem, analyses, epsilon=8.0, delta=1e-6, options=None, **kwargs):
    """The last step of a session; the budgets below were set for searches on M (``radius_mode="none"``)."""
    options = SearchOptions(eps_max=1.0, radius_mode="none") if options is None else options
    kwargs = {"seed": 0, **kwargs}
    steps = list(run_session(problem, analyses, [5_000, 20_000, 800], epsilon, delta, options=options, **kwargs))
    assert [len(step.ledger) for step in steps] == list(range(1, len(analyses) + 1))  # one row more per analysis
    return steps[-1]


def test_text_form_round_trips_and_bad_text_says_why() -> None:
    for text in ("nr-laplace-0.05", "doubling-gaussian-0.1", "counts-nr-0.2", "counts-doubling-0.05"):
        assert Analysis.from_text(text).to_text() == text
    for bad in ("nr-0.05", "counts-nr-x", "median-laplace-0.1", "nr-uniform-0.1", "counts-nr--1"):
        with pytest.raises(AccFirstError, match=r"analysis|method|noise|alpha"):
            Analysis.from_text(bad)
    assert Analysis.from_text("nr-gaussian-0.05").under("doubling").to_text() == "doubling-gaussian-0.05"


def test_ledger_adds_up_and_a_refusal_does_not_end_the_queue(problem) -> None:
    queue = [Analysis.from_text(t) for t in ("nr-laplace-0.1", "counts-nr-0.1", "nr-laplace-0.02", "nr-laplace-0.2")]
    step = final(problem, queue, epsilon=8.0)  # regressions get ε = 4: 2.4 left, α = 0.02 declares 4.3 and is refused
    ledger = step.ledger
    assert ledger["status"].tolist() == ["released", "done", "refused", "released"]
    admitted = ledger[ledger["status"] != "refused"]
    assert (admitted["realised"] <= admitted["declared"] + 1e-12).all()
    assert np.allclose(admitted["refund"], admitted["declared"] - admitted["realised"])
    regressions = ledger[ledger["kind"] == "regression"]
    # Each part's remaining budget is its total less every charge so far.
    spent = regressions["realised"].cumsum()
    assert np.allclose(regressions["remaining"], regressions["budget"] - spent)
    assert regressions["unit"].eq("ε").all() and regressions["budget"].eq(4.0).all()
    counts = ledger[ledger["kind"] == "counts"].iloc[0]
    assert counts["unit"] == "ρ" and counts["status"] == "done" and "of 3 counts certified" in counts["note"]
    # The whole round-by-round ledger of both filters is there: 2 + 1 regressions rounds, 3 counts.
    assert len(step.rounds) == 3 + 3


def test_a_refused_analysis_is_charged_nothing_and_says_why(problem) -> None:
    queue = [Analysis.from_text(t) for t in ("doubling-laplace-0.02", "nr-laplace-0.2")]
    ledger = final(problem, queue, epsilon=5.0).ledger  # doubling at α = 0.02 declares 83
    refused, later = ledger.iloc[0], ledger.iloc[1]
    assert refused["status"] == "refused" and refused["realised"] == 0 and refused["refund"] == 0
    assert refused["note"].startswith("refused: declares") and not refused["fits"]
    assert later["status"] == "released"  # a later, cheaper analysis still fits


def test_the_same_queue_under_doubling_fits_fewer(problem) -> None:
    queue = [Analysis.from_text(t) for t in ("nr-laplace-0.1", "nr-laplace-0.05", "nr-gaussian-0.1", "nr-laplace-0.2")]
    mine = final(problem, queue, epsilon=20.0).ledger
    twin = final(problem, [a.under("doubling") for a in queue], epsilon=20.0).ledger
    assert (fitted(mine), fitted(twin)) == (4, 2)


def test_gaussian_regressions_share_the_delta_of_the_expost_part(problem) -> None:
    queue = [Analysis.from_text(t) for t in ("nr-gaussian-0.1", "nr-gaussian-0.2", "counts-nr-0.1")]
    ledger = final(problem, queue, epsilon=8.0, delta=1e-6, expost_share=0.5).ledger
    assert ledger["delta"].tolist() == pytest.approx([2.5e-7, 2.5e-7, 0.0])
    budget = session_budget(8.0, 1e-6, queue, 0.5)
    assert budget.expost.delta == pytest.approx(5e-7) and budget.zcdp.delta == pytest.approx(5e-7)
    assert describe_budget(budget.expost) == "ε = 4, δ = 5 × 10⁻⁷"
    assert describe_budget(budget.zcdp).startswith("ρ = ") and "δ = 5 × 10⁻⁷" in describe_budget(budget.zcdp)


def test_one_kind_gets_the_whole_budget() -> None:
    laplace = [Analysis("regression", "nr", 0.1)]
    budget = session_budget(2.0, 1e-6, laplace, 0.5)
    assert budget.expost.epsilon == pytest.approx(2.0) and budget.expost.delta == 0
    assert describe_budget(budget.expost) == "ε = 2, δ = 0 (pure)"
    counts = session_budget(2.0, 1e-6, [Analysis("counts", "nr", 0.1)], 0.5)
    assert counts.zcdp.epsilon == pytest.approx(2.0)


def test_a_fallback_releases_nothing_and_is_charged_its_bound(problem) -> None:
    # A grid far too noisy for α: no level passes.
    options = SearchOptions(eps_min=1e-6, eps_max=1e-5, radius_mode="none")
    ledger = final(problem, [Analysis("regression", "nr", 0.01)], epsilon=1e3, options=options).ledger
    row = ledger.iloc[0]
    assert row["status"] == "fallback" and row["realised"] == row["declared"] and row["fits"]
    assert "nothing released" in row["note"]


def test_a_private_preparation_is_charged_once_as_the_first_round(problem):
    prepared = problem.with_preparation(0.5, 1e-7)
    analyses = [Analysis("regression", "nr", 0.1), Analysis("regression", "nr", 0.2, "gaussian")]
    steps = list(run_session(prepared, analyses, [5_000], 20.0, 1e-6, options=SearchOptions(eps_max=1.0), seed=0))
    ledger, rounds = steps[-1].ledger, steps[-1].rounds
    first = ledger.iloc[0]
    assert first["analysis"] == 0 and first["kind"] == "preparation" and first["realised"] == 0.5
    assert rounds.iloc[0]["kind"] == "preparation" and rounds.iloc[0]["delta"] == 1e-7
    assert fitted(ledger) == 2 and len(ledger) == 3
    # The runs themselves are not charged the preparation again.
    charged = rounds[rounds["kind"] != "preparation"]["realised"].sum()
    assert ledger["realised"].sum() == pytest.approx(0.5 + charged)


def test_a_preparation_the_budget_cannot_hold_stops_the_session(problem):
    prepared = problem.with_preparation(9.0, 0.0)
    steps = list(run_session(prepared, [Analysis("regression", "nr", 0.1)], [5_000], 8.0, 1e-6, seed=0))
    assert len(steps) == 1 and steps[0].ledger.iloc[0]["status"] == "refused" and fitted(steps[0].ledger) == 0
