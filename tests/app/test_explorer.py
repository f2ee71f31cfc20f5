"""The explorer page through AppTest: headline, live α, settings from the URL, errors, uploads.

Small data (diabetes, a tiny CSV) and few trials keep the file fast; one test runs the
true default view (synthetic-buzz, 20 trials) once. Numbers are checked against the
package run directly, so a page that shows the wrong numbers fails. The app prepares the
real tables with its server's secret noise (``ui.dataset.SERVER_NOISE``): the tests, which
run in the same process, prepare them with it to get the same arrays. The upload flow has
its own file, ``test_upload.py``.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from accfirst import SearchOptions, run_trials
from accfirst.datasets import from_frame, load_builtin, read_upload
from accfirst.erm.problems import prepared_problem
from accfirst.interpret import format_epsilon, median_with_inf
from tests.app.page_text import link_notice, shown
from ui.dataset import SERVER_NOISE
from ui.errors import GENERIC_MESSAGE

APP = str(Path(__file__).resolve().parents[2] / "app.py")
# Diabetes is a real table: its own target is the share of the gain (``ui.target``); these tests use α.
SMALL = {"ds": "diabetes", "trials": "4", "T": "200", "target": "alpha", "seed": "0"}


def open_app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    return at.run()


def set_seed(at: AppTest, seed: int = 0) -> AppTest:
    """Type a seed into the page's seed box (a release on real data is then a repeatable run) and rerun."""
    [box] = [n for n in at.number_input if n.label.startswith("Seed")]
    box.set_value(seed).run()
    return at


def headline(at: AppTest) -> dict[str, str]:
    """``{method label: median ε shown}`` from the headline cards."""
    labels = [m.value.removeprefix("#### ") for m in at.markdown if m.value.startswith("#### ")]
    values = [m.value for m in at.metric if m.label in ("Median ex-post ε", "ε (set in advance)")]
    assert len(labels) == len(values), (labels, values)
    return dict(zip(labels, values, strict=True))


def figures(at: AppTest) -> dict[str, dict]:
    return {chart.proto.id: json.loads(chart.proto.spec) for chart in at.get("plotly_chart")}


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def app_table(name: str):
    """A built-in table as this process's app prepares it (a real one with the server's secret noise)."""
    return load_builtin(name, noise_seed=SERVER_NOISE)


def expected_medians(data, lam=0.005, **kwargs) -> dict[str, str]:
    problem = prepared_problem(data, lam)  # a real table's preparation is part of every total
    runs = run_trials(problem, **kwargs)
    labels = {"nr": "Noise reduction", "doubling": "Doubling", "theory": "Theory"}
    return {
        labels[m]: format_epsilon(median_with_inf(runs.loc[runs["method"] == m, "eps_total"]))
        for m in kwargs["methods"]
    }


def test_the_papers_comparison_at_alpha_shows_the_headline_and_every_chart():
    at = open_app(target="alpha")
    assert_clean(at)
    assert at.title[0].value.startswith("Set the accuracy you need")
    cards = headline(at)
    assert list(cards) == ["Noise reduction", "Doubling", "Theory"]
    expected = expected_medians(
        load_builtin("synthetic-buzz"),
        alphas=[0.05],
        gamma=0.1,
        methods=["nr", "doubling", "theory"],
        trials=20,
        seed=0,
    )
    assert cards == expected
    assert len(at.get("plotly_chart")) == 6
    assert at.query_params["ds"] == "synthetic-buzz" and at.query_params["alpha"] == "0.05"
    assert any("Noise reduction met the accuracy target" in c.value for c in at.caption)
    # The theory approach tests nothing: no 'no level passed' on its card; none fell back: no 'nothing released'.
    met = [m.value for m in at.markdown if m.value.startswith("Posterior bound")]
    assert len(met) == 3 and "no level passed" in met[0] and "no level passed" not in met[2]
    assert not any("nothing released" in m for m in met)
    # Noise reduction's trial 0 scores above θ* held out (R² 0.772 against 0.601, 128%): said why, in one line.
    [quality] = [shown(c.value) for c in at.caption if shown(c.value).startswith("Held-out test rows")]
    above = re.search(r"Noise reduction \(trial 0\): R² [\d.]+, (\d+)% of the non-private R²", quality)
    assert int(above.group(1)) > 100 and "A private model can score above θ* held out" in quality


def test_changing_alpha_changes_the_numbers_and_the_url():
    at = open_app(**SMALL)
    assert_clean(at)
    before = headline(at)
    at.slider(key="explorer.alpha").set_value(0.2).run()
    assert_clean(at)
    after = headline(at)
    assert after != before
    assert after == expected_medians(
        app_table("diabetes"), alphas=[0.2], gamma=0.1, methods=["nr", "doubling", "theory"], trials=4, seed=0, T=200
    )
    assert at.query_params["alpha"] == "0.2"
    assert "excess risk ≤ 0.2" in at.subheader[0].value


def test_url_parameters_restore_the_settings():
    at = open_app(
        ds="diabetes",
        target="alpha",
        lam="0.01",
        alpha="0.1",
        gamma="0.05",
        methods="nr,theory",
        trials="3",
        seed="4",
        T="300",
        cal="paper-code",
    )
    assert_clean(at)
    assert at.selectbox(key="app.ds").value == "diabetes"
    assert at.select_slider(key="app.lam").value == 0.01
    assert at.slider(key="explorer.alpha").value == 0.1
    assert at.select_slider(key="explorer.gamma").value == 0.05
    assert at.number_input(key="explorer.T").value == 300
    assert at.radio(key="explorer.cal").value == "paper-code"
    shown = headline(at)
    expected = expected_medians(
        app_table("diabetes"),
        lam=0.01,
        alphas=[0.1],
        gamma=0.05,
        methods=["nr", "theory"],
        trials=3,
        seed=4,
        T=300,
        calibration="paper-code",
    )
    assert shown == expected
    assert at.query_params["methods"] == "nr,theory" and at.query_params["seed"] == "4"


def test_bad_url_values_warn_and_fall_back_to_defaults():
    at = open_app(ds="diabetes", target="alpha", trials="3", alpha="9", methods="nr,magic", T="x")
    assert not at.exception
    notice = link_notice(at)
    assert len(notice) == 3 and not any("must be" in w.value for w in at.warning)  # one notice, no box each
    assert "alpha must be between 0.001 and 0.5; got 9; using the default (0.05)." in notice
    assert any("magic" in line for line in notice) and any("T must be a whole number" in line for line in notice)
    assert at.slider(key="explorer.alpha").value == 0.05
    assert list(headline(at)) == ["Noise reduction", "Doubling", "Theory"]
    assert at.query_params["alpha"] == "0.05"  # the URL now holds what is shown


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"eps_min": "2", "eps_max": "1"}, "ε_min (2) must be smaller than ε_max (1)"),
        ({"methods": ""}, "Choose at least one method"),
        ({"ds": "breast-cancer", "gen": "covariance"}, "Covariance perturbation needs ridge regression"),
    ],
)
def test_invalid_combinations_are_explained_and_nothing_runs(query, message):
    at = open_app(**{**SMALL, **query})
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any(message in e for e in errors), errors
    assert any("Nothing ran" in e for e in errors)
    assert not at.metric and not at.get("plotly_chart")


def test_a_package_error_shows_its_message_not_a_traceback():
    # 10,000 levels between 1 and 1 + 1e-12 cannot be told apart: epsilon_grid refuses.
    at = open_app(**{**SMALL, "eps_min": "1", "eps_max": "1.000000000001", "T": "10000"})
    assert not at.exception
    assert any("too close to tell apart" in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric


def test_an_unexpected_error_shows_a_generic_message_only():
    def page():
        from ui.errors import package_errors

        with package_errors():
            raise RuntimeError("secret internal detail")

    at = AppTest.from_function(page).run()
    assert not at.exception
    assert [e.value for e in at.error] == [GENERIC_MESSAGE]


def upload_csv(rows: int = 2_000, seed: int = 3) -> bytes:
    """A numeric upload large enough for the default preparation budget (a quarter of ε = 2) to find its ranges."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.exponential(size=(rows, 4)), columns=["clicks", "visits", "age", "score"])
    frame["spend"] = frame @ np.array([2.0, -1.0, 0.5, 1.5]) + rng.normal(scale=0.3, size=rows)
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def test_an_uploaded_csv_runs_end_to_end():
    content = upload_csv()
    at = open_app(ds="upload", target="alpha", trials="3", T="200", alpha="0.1")
    assert not at.metric  # nothing to run before a file arrives
    at.file_uploader(key="app.upload_file").set_value(("spending.csv", content, "text/csv")).run()
    set_seed(at)
    assert_clean(at)
    memo = at.session_state["ui.session_memo"]
    (data,) = memo["upload_prepared"].values()  # prepared privately, with this session's secret noise
    assert data.preparation.mode == "private" and data.prep_epsilon > 0
    assert headline(at) == expected_medians(
        data, alphas=[0.1], gamma=0.1, methods=["nr", "doubling", "theory"], trials=3, seed=0, T=200
    )
    assert len(at.get("plotly_chart")) == 6
    assert any("spending.csv" in shown(e.label) for e in at.expander)
    # Upload-derived work lives in this session only, not in a cache shared with others.
    assert {"upload_frames", "upload_prepared", "trial_rows"} <= set(memo)


def test_a_malformed_upload_shows_the_data_error_message():
    bad = b"a,b\n1,2\n3\n4,5,6,7\n"
    with pytest.raises(ValueError) as expected:
        from_frame(read_upload(bad, "broken.csv"), target="b", task="ridge")
    at = open_app(ds="upload", trials="3")
    at.file_uploader(key="app.upload_file").set_value(("broken.csv", bad, "text/csv")).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert str(expected.value) in errors  # next to the upload, in the sidebar
    assert f"The data cannot be used yet: {expected.value}" in errors  # and in the main area (phones hide the sidebar)
    assert not at.metric


def test_the_search_chart_replays_row_zero_of_the_trials():
    at = open_app(**SMALL)
    assert_clean(at)
    charts = figures(at)
    search = next(
        spec for spec in charts.values() if spec["layout"]["title"]["text"].startswith("Noise reduction: the search")
    )
    stop = [a["text"] for a in search["layout"]["annotations"] if a["text"].startswith("stop:")]
    data = app_table("diabetes")
    runs = run_trials(prepared_problem(data, 0.005), [0.05], 0.1, ["nr"], 1, 0, T=200)
    assert stop == [f"stop: level {int(runs['stop_index'].iloc[0])}, ε = {runs['eps_hypothesis'].iloc[0]:.3g}"]
    assert "evaluation only, not private" in search["data"][0]["name"]


def test_downloads_are_offered():
    at = open_app(**SMALL)
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Results (CSV)", "Settings (JSON)", "Python snippet"]


def test_a_link_beyond_the_level_cap_is_refused_like_a_bad_value():
    at = open_app(**{**SMALL, "T": "100000"})
    assert link_notice(at) == ["T must be between 2 and 10000; got 100000; using the default (100)."]
    assert at.number_input(key="explorer.T").value == SearchOptions.T
    assert list(headline(at)) == ["Noise reduction", "Doubling", "Theory"]


def test_a_long_run_waits_for_a_go_ahead_after_the_first_trial(monkeypatch):
    monkeypatch.setattr("ui.work.CONFIRM_SECONDS", 0.0)  # every remainder counts as long
    at = open_app(**SMALL)
    assert not at.exception
    assert any("First results: 1 trial per method" in c.value for c in at.caption)
    assert any("The other trials would take" in w.value for w in at.warning)
    # The numbers shown are trial 0's, exactly.
    assert headline(at) == expected_medians(
        app_table("diabetes"),
        alphas=[0.05],
        gamma=0.1,
        methods=["nr", "doubling", "theory"],
        trials=1,
        seed=0,
        T=200,
    )
    at.button(key="explorer.continue").click().run()
    assert_clean(at)
    assert not any("The other trials" in w.value for w in at.warning)
    assert headline(at) == expected_medians(
        app_table("diabetes"),
        alphas=[0.05],
        gamma=0.1,
        methods=["nr", "doubling", "theory"],
        trials=4,
        seed=0,
        T=200,
    )
