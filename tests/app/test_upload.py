"""An upload through AppTest: declared metadata, private preparation by default, evaluation only labelled.

The page's numbers are checked against the package run directly on the data the session
prepared (its noise is the session's secret, so the test reads the prepared table from the
session's memo, never from a seed). Small tables and few trials keep the file fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from accfirst.datasets import PreparedData, load_builtin
from accfirst.datasets.prepare.noise import SecretSeed
from accfirst.datasets.prepared import EXCLUDES_PREPARATION
from accfirst.interpret import format_epsilon
from tests.app.page_text import link_notice, shown
from tests.app.test_explorer import assert_clean, expected_medians, figures, headline, set_seed
from ui.dataset import SERVER_NOISE, builtin_data, builtin_source

APP = str(Path(__file__).resolve().parents[2] / "app.py")
RUNS = {"trials": "3", "T": "200", "alpha": "0.1", "target": "alpha"}
METHODS = ["nr", "doubling", "theory"]


def spending_csv(rows: int = 2_000, seed: int = 3) -> bytes:
    """A numeric upload large enough for the default preparation budget (a quarter of ε = 2) to find its ranges."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.exponential(size=(rows, 4)), columns=["clicks", "visits", "age", "score"])
    frame["spend"] = frame @ np.array([2.0, -1.0, 0.5, 1.5]) + rng.normal(scale=0.3, size=rows)
    return frame.to_csv(index=False).encode()


def regions_csv(rows: int = 400) -> bytes:
    """A ridge table with a text column (its levels are selected privately: the preparation has a δ)."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"visits": rng.exponential(size=rows), "region": rng.choice(["north", "south"], size=rows)})
    frame["spend"] = 2 * frame["visits"] + (frame["region"] == "north") + rng.normal(scale=0.3, size=rows)
    return frame.to_csv(index=False).encode()


def churn_csv(rows: int = 400) -> bytes:
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"usage": rng.exponential(size=rows), "plan": rng.choice(["basic", "pro"], size=rows)})
    frame["churned"] = np.where(frame["usage"] + rng.normal(scale=0.5, size=rows) < 0.7, "yes", "no")
    return frame.to_csv(index=False).encode()


def key(content: bytes, name: str) -> str:
    """The widget key of an upload's control (keys carry the file's hash)."""
    return f"app.upload.{hashlib.sha256(content).hexdigest()[:12]}.{name}"


def uploaded(content: bytes, name: str = "spending.csv", page: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"ds": "upload", **RUNS, **query})
    at.run()
    at.file_uploader(key="app.upload_file").set_value((name, content, "text/csv")).run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def prepared(at: AppTest) -> PreparedData:
    (data,) = at.session_state["ui.session_memo"]["upload_prepared"].values()
    return data


def captions(at: AppTest) -> list[str]:
    return [shown(c.value) for c in at.caption]


def subtitles(at: AppTest) -> dict[str, str]:
    return {
        spec["layout"]["title"]["text"]: spec["layout"]["title"]
        .get("subtitle", {})
        .get("text", "")
        .replace("<br>", " ")
        for spec in figures(at).values()
    }


def test_an_upload_is_prepared_privately_and_every_epsilon_includes_it():
    content = spending_csv()
    at = uploaded(content)
    assert_clean(at)
    data = prepared(at)
    assert data.preparation.mode == "private" and data.prep_epsilon > 0 and data.preparation.noise_seed is None
    # The headline's totals are the package's on the same prepared table: they include ε_prep.
    assert headline(set_seed(at)) == expected_medians(
        data, alphas=[0.1], gamma=0.1, methods=METHODS, trials=3, seed=0, T=200
    )
    tag = f"includes preparing the data, ε = {format_epsilon(data.prep_epsilon)}"
    assert captions(at).count(tag) == 3  # one under each card's ε
    note = f"Every ε includes preparing the data, ε = {format_epsilon(data.prep_epsilon)}, paid once and shared by "
    assert any(c.startswith(note + "these 9 runs. Each of the 9 runs is a release of its own") for c in captions(at))
    charts = figures(at)
    (breakdown,) = [s for s in charts.values() if s["layout"]["title"]["text"].startswith("Privacy spent on preparing")]
    assert breakdown["data"][0]["name"].startswith("preparing the data")
    assert breakdown["data"][0]["text"] == [format_epsilon(data.prep_epsilon)] * 3  # the same part in every bar
    assert tag in subtitles(at)["Ex-post ε of each of 3 trials"]
    # The data report lists every step with its cost, and the total.
    report = at.dataframe[0].value
    assert list(report.columns) == ["step", "column", "cost", "what it did"]
    assert {"declared", "post-processing"} <= set(report["cost"]) and report["cost"].str.startswith("private, ε").any()
    shown_markdown = [shown(m.value) for m in at.markdown]
    assert any("Preparation, step by step" in m and "paid once for this table" in m for m in shown_markdown)


def test_a_rerun_with_the_same_choices_never_prepares_again():
    content = spending_csv()
    at = uploaded(content)
    first = prepared(at)
    at.slider(key="explorer.alpha").set_value(0.2).run()
    assert prepared(at) is first  # the same release, not a new one
    at.number_input(key=key(content, "prep_epsilon")).set_value(3.0).run()
    assert prepared(at).prep_epsilon == pytest.approx(3.0)  # new choices: a new preparation
    at.number_input(key=key(content, "prep_epsilon")).set_value(None).run()
    again = prepared(at)
    assert again is not first and again.prep_epsilon == first.prep_epsilon
    np.testing.assert_array_equal(again.X_train, first.X_train)  # back to the first choices: the same release


def test_declared_metadata_makes_every_step_free():
    content = spending_csv()
    at = uploaded(content)
    ranges = {row: {"low": 0.0, "high": 10.0} for row in range(4)} | {4: {"low": -10.0, "high": 40.0}}
    at.session_state[key(content, "schema")] = {"edited_rows": ranges, "added_rows": [], "deleted_rows": []}
    at.checkbox(key=key(content, "private.center")).uncheck().run()
    assert_clean(at)
    data = prepared(at)
    assert data.prep_epsilon == 0 and set(data.preparation.to_frame()["kind"]) == {"declared", "post-processing"}
    report = at.dataframe[0].value
    assert report.loc[report["step"] == "declared metadata", "cost"].eq("declared").sum() == 5
    assert any(
        c.startswith("Preparing the data cost ε = 0: every statistic was declared (nothing read).")
        for c in captions(at)
    )
    assert headline(set_seed(at)) == expected_medians(
        data, alphas=[0.1], gamma=0.1, methods=METHODS, trials=3, seed=0, T=200
    )


def test_what_a_visitor_types_is_checked_by_the_package_and_shown_next_to_the_table():
    content = spending_csv()
    at = uploaded(content)
    edits = {0: {"low": 5.0, "high": 1.0}, 1: {"levels": "a, , b"}, 2: {"low": 1.0}}
    at.session_state[key(content, "schema")] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception and not at.metric  # nothing runs on metadata the package refuses
    errors = [shown(e.value) for e in at.sidebar.error]
    assert "column 'clicks': range must have low < high; got [5, 1]" in errors
    assert any(e.startswith("column 'visits': levels must be distinct and non-empty") for e in errors)
    assert any(e.startswith("column 'age': range must be two finite numbers [low, high]") for e in errors)
    assert any("the declared metadata has errors" in shown(e.value) for e in at.main.error)


def test_the_positive_class_is_typed_not_picked_from_the_data():
    content = churn_csv()
    at = uploaded(content, "churn.csv")
    assert at.radio(key=key(content, "task.churned")).value == "logistic"  # a text target: from its type only
    assert not [s for s in at.selectbox if "Positive" in s.label]  # no list of the data's classes
    assert any("needs the positive class declared" in shown(e.value) for e in at.sidebar.error)
    at.text_input(key=key(content, "positive.churned")).input("yes").run()
    assert_clean(at)
    data = prepared(at)
    assert data.report.positive_class == "yes" and data.prep_delta > 0  # the plan's levels are a private selection
    report = at.dataframe[0].value
    assert report.loc[report["step"] == "labels", "cost"].eq("declared").all()
    assert report.loc[report["step"] == "private levels", "cost"].str.contains("δ = ").all()


def test_evaluation_only_labels_every_number():
    content = spending_csv()
    at = uploaded(content)
    at.radio(key=key(content, "mode")).set_value("evaluation").run()
    assert not at.exception
    data = prepared(at)
    assert data.preparation.mode == "evaluation"
    assert captions(at).count(EXCLUDES_PREPARATION) == 3  # under each card's ε
    warnings = [shown(w.value) for w in at.warning]
    assert any(EXCLUDES_PREPARATION in w and w.startswith("Every ε") for w in warnings)  # under the headline
    assert any(w == f"Every ε shown {EXCLUDES_PREPARATION}." for w in warnings)  # in the data report
    assert any(EXCLUDES_PREPARATION in shown(w.value) for w in at.sidebar.warning)
    for title, subtitle in subtitles(at).items():
        if title.startswith(("Ex-post ε", "Privacy spent")):
            assert EXCLUDES_PREPARATION in subtitle, title
    assert headline(set_seed(at)) == expected_medians(
        data, alphas=[0.1], gamma=0.1, methods=METHODS, trials=3, seed=0, T=200
    )


def test_the_budget_page_charges_an_uploads_preparation_first():
    content = spending_csv(rows=2000)
    at = uploaded(content, page="pages/budget.py", eps="64", eps_max="10", queue="nr-laplace-0.3")
    data = prepared(at)
    mine = at.dataframe[0].value
    assert mine["analysis"].tolist()[0] == "preparing the table" and mine["outcome"].iloc[0] == "charged"
    assert mine["charged"].iloc[0] == f"{data.prep_epsilon:.3g} ε"
    assert not at.warning or all("repeatable" not in shown(w.value) for w in at.warning)


@pytest.mark.parametrize("page", [None, "pages/sweep.py", "pages/budget.py", "pages/counts.py"])
def test_a_link_never_carries_a_seed_for_a_release_on_an_upload(page):
    """The explorer (where an upload lands) drops a link's seed and says so; no page applies one to the upload."""
    content = spending_csv()
    query = {"queue": "counts-nr-0.1"} if page == "pages/budget.py" else {"src": "data"} if page else {}
    at = uploaded(content, seed="5", **query)
    assert any(
        line.startswith("seed: a link cannot set the noise of a release on your upload") for line in link_notice(at)
    )
    if page is not None:
        at.switch_page(page).run()
    assert "seed" not in at.query_params  # dropped from the link …
    assert not any("repeatable" in shown(w.value) for w in at.warning)  # … and not used
    box = [n for n in at.number_input if n.label.startswith("Seed")]
    assert len(box) == 1 and box[0].value is None and "operating system" in box[0].label
    box[0].set_value(7).run()  # a visitor's own seed: repeatable, said so, still not in the link
    assert "Seed 7: repeatable run: not a private release. Anyone with the seed can replay the noise." in [
        shown(w.value) for w in at.warning
    ]
    assert "seed" not in at.query_params


def test_a_seed_stays_for_synthetic_counts_and_data():
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"ds": "synthetic-buzz", "trials": "1", "methods": "nr", "seed": "3"})
    at.run()
    at.switch_page("pages/counts.py").run()
    assert not at.exception and at.query_params["seed"] == "3"
    assert not any("repeatable" in shown(w.value) for w in at.warning)


def test_a_built_in_real_table_is_prepared_from_the_servers_secret():
    data = builtin_data("diabetes")
    assert isinstance(SERVER_NOISE, SecretSeed) and data.preparation.noise_seed is None
    np.testing.assert_array_equal(data.X_train, load_builtin("diabetes", noise_seed=SERVER_NOISE).X_train)
    assert (
        builtin_source("diabetes", 0.01).noise is SERVER_NOISE and builtin_source("synthetic-buzz", 0.01).noise is None
    )
    assert str(SERVER_NOISE.entropy) not in repr(builtin_source("diabetes", 0.01)) + " ".join(data.report.steps)
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"ds": "diabetes", "target": "alpha", "trials": "2", "T": "100"})
    at.run()
    assert_clean(at)
    page_text = json.dumps(dict(at.query_params)) + " ".join(shown(m.value) for m in [*at.markdown, *at.caption])
    assert str(SERVER_NOISE.entropy) not in page_text
    assert captions(at).count(f"includes preparing the data, ε = {format_epsilon(data.prep_epsilon)}") == 3


SERVER = """
import numpy as np
from ui.dataset import builtin_data
print(float(builtin_data("diabetes").X_train.sum()))
"""


def test_two_server_processes_prepare_a_real_table_with_different_noise():
    """Each server draws its own secret: its arrays differ from another server's (equal with probability ~0)."""
    root = str(Path(__file__).resolve().parents[2])
    sums = [
        subprocess.run(
            [sys.executable, "-c", SERVER],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env={**os.environ, "PYTHONPATH": root},
        ).stdout.split()[-1]
        for _ in range(2)
    ]
    assert sums[0] != sums[1]


def test_an_upload_and_its_choices_survive_a_visit_to_the_learn_pages():
    """The Data sidebar is hidden there, not dropped (Streamlit forgets a file uploader a run does not draw): the
    file, its preparation choices and its release are the same on return."""
    content = spending_csv()
    at = uploaded(content)
    at.number_input(key=key(content, "prep_epsilon")).set_value(2.0).run()
    first, numbers = prepared(at), headline(at)
    at.switch_page("pages/learn_laplace.py").run()
    assert not at.exception
    at.switch_page("pages/explorer.py").run()
    assert_clean(at)
    assert prepared(at) is first and first.prep_epsilon == pytest.approx(2.0)
    assert headline(at) == numbers


def test_the_apps_own_seed_is_not_blamed_on_a_link_after_choosing_your_data():
    """The demo wrote seed=0 into the address; choosing "Your data" and uploading drops it without a notice."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"trials": "1", "T": "200", "methods": "nr"})
    at.run()
    assert at.query_params["seed"] == "0"  # the simulation's seed, written by the page
    [button] = [b for b in at.button if b.label == "Your data"]
    button.click().run()
    at.file_uploader(key="app.upload_file").set_value(("spending.csv", spending_csv(), "text/csv")).run()
    assert not at.exception
    assert link_notice(at) == []
    assert "seed" not in at.query_params


def test_the_same_file_uploaded_again_is_the_same_release_and_the_spend_says_so():
    """A table prepared once in a session is reused while its file and choices stay; the spend counts it once."""
    content = spending_csv()
    at = uploaded(content)
    first, numbers = prepared(at), headline(at)
    spend = [shown(i.value) for i in at.info if "This session's spend on this table" in i.value]
    assert (
        len(spend) == 1 and f"preparing it once (ε = {format_epsilon(first.prep_epsilon)}) and 9 releases" in spend[0]
    )
    at.file_uploader(key="app.upload_file").set_value(("again.csv", content, "text/csv")).run()
    assert prepared(at) is first and headline(at) == numbers
    assert [shown(i.value) for i in at.info if "This session's spend on this table" in i.value] == spend
    at.slider(key="explorer.alpha").set_value(0.2).run()  # new runs are new releases, on the same preparation
    assert prepared(at) is first
    [again] = [shown(i.value) for i in at.info if "This session's spend on this table" in i.value]
    assert "and 18 releases" in again and again != spend[0]


def test_on_an_upload_delta_from_the_preparation_is_said_once_and_ranks_every_method():
    """Every run carries the preparation's δ: the theory approach is ranked like the others, the noise caption and
    the sentences say where δ comes from, and nothing calls Laplace noise a pure ε."""
    at = uploaded(regions_csv())
    data = prepared(at)
    assert data.prep_delta > 0  # the text column's levels are selected privately, with a δ
    ranking = next(shown(m.value) for m in at.markdown if m.value.startswith("**Least privacy first"))
    assert "not ranked" not in ranking and "Theory (ε =" in ranking
    assert "every method on this table shares that δ, so they compare as pure ε figures would" in ranking
    caption = "With Laplace noise, noise reduction and doubling each give an (ε, δ) guarantee with δ = 10⁻⁶ from"
    assert any(shown(c.value).startswith(caption) for c in at.sidebar.caption)
    noise = at.sidebar.get("button_group")[0].proto
    assert list(noise.options) and not any("pure" in option.content for option in noise.options)
    assert not any("weaker promise than a pure ε" in c for c in captions(at))
