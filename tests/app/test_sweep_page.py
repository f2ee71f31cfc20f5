"""The α sweep page through AppTest: a small grid runs to the end and draws the paper's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.page_text import link_notice

APP = str(Path(__file__).resolve().parents[2] / "app.py")
FIGURE_TITLES = ("Fig. 1", "Fig. 2", "Fig. 3", "Fig. 4")


def open_page(**query: str) -> AppTest:
    """The app on the sweep page, with a small dataset and grid from the URL."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"ds": "diabetes", "alphas": "0.2,0.4", "trials": "2", "T": "200", **query})
    at.run()  # the explorer (default page) registers the pages
    at.switch_page("pages/sweep.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


@pytest.fixture(scope="module")
def swept() -> AppTest:
    at = open_page()
    at.button(key="sweep.run").click().run()
    return at


def test_before_running_nothing_is_computed():
    at = open_page()
    assert at.title[0].value.startswith("α sweep")
    assert "**12 runs**" in at.markdown[0].value  # 3 methods × 2 α × 2 trials
    assert not at.get("plotly_chart") and not at.get("progress")
    assert any("Run sweep" in info.value for info in at.info)


def test_a_small_sweep_runs_to_the_end_and_draws_every_figure(swept):
    assert not swept.exception and not swept.error
    (bar,) = swept.get("progress")
    assert bar.value == 100 and bar.proto.text.startswith("Done: 12 runs in")
    assert "sweep.stop" not in [button.key for button in swept.button]  # gone once the sweep is over
    specs = figures(swept)
    titles = [spec["layout"]["title"]["text"] for spec in specs]
    assert [title[:6] for title in titles] == list(FIGURE_TITLES)
    for spec in specs:
        assert spec["layout"]["xaxis"]["title"]["text"].startswith("α")
        assert spec["layout"]["yaxis"]["title"]["text"]
        assert spec["data"]
    fig1 = {trace["name"] for trace in specs[0]["data"]}
    assert {"Noise reduction: median", "Theory approach E(α): expected error only"} <= fig1


def test_the_table_and_the_downloads(swept):
    table = swept.dataframe[0].value
    assert list(table["α"]) == [0.2, 0.4]
    assert {"Noise reduction: median ε", "Doubling: median e^ε", "Theory: fallback share"} <= set(table.columns)
    labels = [button.label for button in swept.get("download_button")]
    assert labels == ["Results (CSV)", "Report (HTML, works offline)", "Settings (JSON)", "Python snippet"]
    assert swept.code[0].value.startswith("python -m accfirst sweep --dataset diabetes --alphas 0.2,0.4")


def test_switching_figure_one_keeps_the_results(swept):
    swept.button_group(key="sweep.fig1").set_value("doubling")
    swept.button_group(key="sweep.axis").set_value("exp").run()
    assert not swept.exception and not swept.get("progress")  # no new sweep
    fig1 = figures(swept)[0]
    assert {trace["name"] for trace in fig1["data"]} >= {"Noise reduction: median", "Doubling: median"}
    assert fig1["layout"]["yaxis"]["type"] == "log"


def test_a_stopped_sweep_is_reported_and_the_old_results_stay(swept):
    swept.session_state["sweep.running"] = (5, 12)  # what an interrupted run leaves behind
    swept.run()
    assert any("stopped after 5 of 12 runs" in warning.value for warning in swept.warning)
    assert len(figures(swept)) == 4


def test_a_bad_grid_is_explained_and_nothing_runs():
    at = open_page()
    at.text_input(key="sweep.alphas").set_value("0.2:0.1:0.05").run()
    assert any("must not end before it starts" in error.value for error in at.error)
    assert at.button(key="sweep.run").disabled


def test_a_bad_grid_in_the_link_falls_back_to_the_papers():
    at = open_page(alphas="0.2:oops")
    [line] = link_notice(at)
    assert line.startswith("alphas: ") and line.endswith("; using the default (0.005:0.2:0.005).")
    assert at.text_input(key="sweep.alphas").value == "0.005:0.2:0.005"


def test_a_sweep_stopped_before_any_finished():
    at = open_page()
    at.session_state["sweep.running"] = (3, 12)
    at.run()
    assert any("stopped after 3 of 12 runs; no sweep has finished yet" in w.value for w in at.warning)
    assert not at.get("plotly_chart")


def test_more_runs_than_one_click_may_start_are_refused():
    at = open_page(trials="4")
    at.text_input(key="sweep.alphas").set_value("0.0001:0.5:0.0001").run()  # 5,000 α × 3 methods × 4 trials
    assert any("60,000 runs is more than one click may start" in e.value for e in at.error)
    assert at.button(key="sweep.run").disabled


def test_a_link_beyond_the_run_cap_falls_back_to_the_defaults():
    at = open_page(alphas="0.0001:0.5:0.0001", trials="200")  # 3,000,000 runs
    [line] = link_notice(at)
    assert line.startswith("alphas, methods and trials together: 3,000,000 runs is more than one click may start")
    assert at.text_input(key="sweep.alphas").value == "0.005:0.2:0.005"
    assert at.number_input(key="sweep.trials").value == 10


def test_a_long_sweep_asks_first_and_shows_the_estimate(monkeypatch):
    monkeypatch.setattr("ui.work.CONFIRM_SECONDS", 0.0)
    at = open_page()
    assert "runs on" in at.markdown[0].value  # "… about N s for 12 runs on K cores"
    at.button(key="sweep.run").click().run()
    assert any("This sweep would take" in w.value for w in at.warning)
    assert not at.get("plotly_chart")  # nothing ran yet
    at.button(key="sweep.confirm").click().run()
    assert not at.exception and len(figures(at)) == 4


def test_a_sweep_longer_than_the_cap_is_refused(monkeypatch):
    monkeypatch.setattr("ui.work.MAX_SECONDS", 0.0)
    at = open_page()
    assert any("one click may start at most" in e.value for e in at.error)
    assert at.button(key="sweep.run").disabled


def test_the_go_ahead_and_its_button_go_once_the_sweep_is_done(monkeypatch):
    """The 'would take about 30 s' box and its button stayed on screen under 'Done'."""
    monkeypatch.setattr("ui.work.CONFIRM_SECONDS", 0.0)
    at = open_page()
    at.button(key="sweep.run").click().run()
    at.button(key="sweep.confirm").click().run()
    (bar,) = at.get("progress")
    assert bar.proto.text.startswith("Done: 12 runs in")
    assert not any("This sweep would take" in w.value for w in at.warning)
    assert "sweep.confirm" not in [button.key for button in at.button]
