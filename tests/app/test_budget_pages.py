"""The privacy-budget pages through AppTest: the ledger, the refusal, doubling beside it, counts NR vs doubling.

Small data (diabetes, 353 training rows) so that each page run takes a few seconds. On
diabetes (rows of norm ≤ ρ = 0.316) a noise-reduction regression at α = 0.1 with ε_max = 50 on M declares about 60
and is charged about 23; doubling declares about 232: beyond the preparation's 10.6, a budget of 128 admits three of
the first and none of the second.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from accfirst.datasets import load_builtin
from tests.app.page_text import link_notice, shown

APP = str(Path(__file__).resolve().parents[2] / "app.py")
FOUR_REGRESSIONS = ",".join(["nr-laplace-0.1"] * 4)
BUDGET = 128


def open_page(page: str, **query: str) -> AppTest:
    """The app on ``page`` with diabetes and a cheap explorer (the default page runs first)."""
    at = AppTest.from_file(APP, default_timeout=120)
    # The explorer runs first, at a share of the gain: one cheap trial of noise reduction, a release.
    at.query_params.update({"ds": "diabetes", "target": "kappa", "trials": "1", "methods": "nr", **query})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(elements) -> list[str]:
    return [shown(element.value) for element in elements]


@pytest.fixture(scope="module")
def budget() -> AppTest:
    # The budget was set for searches on M: the link asks for the paper's radius. Diabetes is a real table: a seed
    # makes the queue's noise repeatable (and the page says so).
    return open_page("pages/budget.py", eps=str(BUDGET), eps_max="50", queue=FOUR_REGRESSIONS, rmode="none", seed="0")


def test_the_default_bound_on_the_models_size_fits_more_in_the_same_budget():
    """The same link with the default radius: every declared bound is smaller, and all four regressions fit."""
    at = open_page("pages/budget.py", eps="256", eps_max="100", queue=FOUR_REGRESSIONS, seed="0")
    assert at.query_params["rmode"] == "private"
    assert at.metric[0].value == "4 of 4"


def test_the_ledger_shows_declared_charged_refund_and_remaining(budget):
    mine, twin = budget.dataframe[0].value, budget.dataframe[1].value
    assert list(mine.columns) == ["#", "analysis", "outcome", "declared", "δ", "charged", "refund", "remaining"]
    # Diabetes is a real table, prepared privately: its preparation is the first round, charged once.
    assert mine["analysis"].tolist() == ["preparing the table"] + ["NR regression, α = 0.1"] * 4
    assert mine["outcome"].tolist() == ["charged"] + ["released"] * 3 + ["refused"]
    assert mine["charged"].iloc[0] == twin["charged"].iloc[0] == f"{load_builtin('diabetes').prep_epsilon:.3g} ε"
    assert all(value.endswith(" ε") for value in mine["charged"])
    assert mine["δ"].eq("0").all()  # Laplace searches are pure: δ shown as 0
    assert any("derived; consistent with Rogers et al. 2023" in text for text in texts(budget.markdown))
    assert any(f"Budget (ε, δ) = ({BUDGET}, 10⁻⁶)" in text for text in texts(budget.markdown))
    assert twin["outcome"].iloc[1:].eq("refused").all()
    assert "Seed 0: repeatable run: not a private release. Anyone with the seed can replay the noise." in texts(
        budget.warning
    )


def test_the_refusal_appears_when_the_budget_is_exhausted(budget):
    errors = texts(budget.error)
    assert any(
        "Analysis 4 (Regression, noise reduction (Laplace), α = 0.1): refused: declares" in text for text in errors
    )


def test_doubling_fits_fewer_in_the_same_budget(budget):
    assert [metric.value for metric in budget.metric] == ["3 of 4", "0 of 4"]
    assert "**3 of 4 analyses fit**" in texts(budget.markdown)
    assert "**0 of 4 analyses fit**" in texts(budget.markdown)
    (info,) = [text for text in texts(budget.info) if text.startswith("In the same budget")]
    assert "3 of 4 analyses fit as queued and 0 under doubling" in info
    spec = json.loads(budget.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["title"]["text"] == "Privacy charged per analysis"


def test_adding_and_removing_analyses_changes_the_queue_and_the_url():
    at = open_page("pages/budget.py", eps="256", eps_max="100", share="0.9", queue="nr-laplace-0.5")
    at.radio(key="budget.add_kind").set_value("counts")
    at.button(key="budget.add").click().run()
    assert not at.exception
    assert at.query_params["queue"] == "nr-laplace-0.5,counts-nr-0.1"
    mine = at.dataframe[0].value
    assert mine["outcome"].tolist() == ["charged", "released", "done"] and mine["charged"].iloc[2].endswith(" ρ")
    assert any(
        text.startswith("Each batch of counts: training rows of the prepared column progression")
        for text in texts(at.caption)
    )
    at.button(key="budget.remove.0").click().run()
    assert at.query_params["queue"] == "counts-nr-0.1" and len(at.dataframe[0].value) == 2


def test_bad_parameters_give_a_message_not_a_traceback():
    at = open_page("pages/budget.py", queue="nr-laplace-0.5,median-x-1", share="7")
    share, queue = link_notice(at)
    assert share == "share must be between 0.05 and 0.95; got 7; using the default (0.5)."
    assert queue.startswith("queue: ") and "cannot read the analysis 'median-x-1'" in queue
    # The example queue does not start: the default budget (ε = 1) cannot hold diabetes's preparation.
    ledger = at.dataframe[0].value
    assert ledger["outcome"].tolist() == ["refused"] and ledger["analysis"].iloc[0] == "preparing the table"
    at = open_page("pages/budget.py", queue="counts-nr-0.1", mode="categories")
    assert any("distinct values" in text for text in texts(at.error)) and not at.dataframe


def test_counts_page_certifies_more_with_noise_reduction_on_log_uniform_counts():
    at = open_page("pages/counts.py")
    nr, doubling = (int(metric.value.replace(",", "")) for metric in at.metric)
    assert nr > doubling > 0
    assert all("δ = 10⁻⁶" in metric.label for metric in at.metric)
    assert any("derived; consistent with Rogers et al. 2023" in text for text in texts(at.markdown))
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]
    assert len(titles) == 3 and titles[0].startswith("Counts certified")
    assert any(text.startswith("Noise reduction certified") for text in texts(at.info))


def test_counts_page_counts_a_column_of_the_data_and_explains_bad_choices():
    at = open_page("pages/counts.py", src="data", mode="bins-data", bins="8", cap="7")
    assert any("cap must be one of" in line for line in link_notice(at))
    assert any(
        text.startswith("**training rows of the prepared column progression in 8 bins over its own range**")
        for text in texts(at.markdown)
    )
    assert len(at.metric) == 2
    at = open_page("pages/counts.py", src="data", mode="categories")
    assert any("distinct values" in text for text in texts(at.error)) and not at.metric


def test_both_queues_count_in_the_sessions_spend_on_the_table(budget):
    """The queue and its twin under doubling are two releases, each within the budget beyond the preparation."""
    [spend] = [text for text in texts(budget.info) if "This session's spend on this table" in text]
    prep = load_builtin("diabetes").prep_epsilon  # the same whatever the noise: the steps' budgets are public
    # The explorer ran first (one trial of noise reduction), then the two queues.
    assert f"preparing it once (ε = {prep:.3g}) and 3 releases" in spend
    total = float(re.search(r"table: ε = ([\d.,]+)", spend).group(1).replace(",", ""))
    queues = float(f"{prep + 2 * (BUDGET - prep):.3g}")  # as the page rounds it
    assert queues <= total < queues + 100
