"""The explorer's relative target through AppTest: the share of the gain on real tables, α released, R(0) notices.

Diabetes (354 rows: every run shows no signal) keeps most of these fast; one test runs
synthetic-intrusion at κ = 0.2, where every run releases α, and checks the page against the package.
"""

from __future__ import annotations

import json

from accfirst import LogisticProblem, RelativeTarget, SearchOptions, run_trials
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.interpret import format_epsilon, median_with_inf
from accfirst.snippet import DatasetSpec, reproduction_snippet, settings_json
from tests.app.page_text import shown
from tests.app.test_explorer import app_table, assert_clean, figures, headline, open_app
from ui.dataset import Selection
from ui.explorer_settings import PRESETS
from ui.runs import RunRequest
from ui.target import TARGET_MODE

RELATIVE_SMALL = {"ds": "diabetes", "target": "kappa", "trials": "3", "T": "100", "methods": "nr,theory"}


def test_a_real_table_asks_for_the_share_of_the_gain_and_says_when_there_is_no_signal():
    at = open_app(**RELATIVE_SMALL)
    assert_clean(at)
    assert at.session_state["explorer.target"] == "kappa"
    assert at.query_params["target"] == "kappa" and at.query_params["kappa"] == "0.2"
    assert at.query_params["budget"] == "10"
    assert "keep at least 80% of the gain" in at.subheader[0].value
    text = " ".join(m.value for m in at.markdown)
    assert "No α was released" in text and "no signal: **3/3**" in text
    data = app_table("diabetes")
    runs = run_trials(prepared_problem(data, 0.005), [], 0.1, ["nr", "theory"], 3, 0, kappas=[0.2], T=100)
    assert runs["alpha"].isna().all()
    assert headline(at) == {
        "Noise reduction": format_epsilon(median_with_inf(runs.loc[runs["method"] == "nr", "eps_total"])),
        "Theory": format_epsilon(median_with_inf(runs.loc[runs["method"] == "theory", "eps_total"])),
    }
    # No ranking of methods that learnt nothing, and no word about (ε, δ) promises they do not make.
    assert "No method learnt anything" in text and "Least privacy first" not in text and "not ranked" not in text


def test_alpha_at_or_above_r0_is_called_out_and_the_share_offered():
    data = app_table("diabetes")
    r0 = prepared_problem(data, 0.005).zero_risk
    assert 0.01 < r0 <= 0.1  # the premise: α = 0.1 is at or above R(0), α = 0.01 below it
    at = open_app(**{**RELATIVE_SMALL, "target": "alpha", "alpha": "0.1"})
    assert_clean(at)
    warning = " ".join(shown(w.value) for w in at.warning)
    assert f"R(0) = {r0:.3g} ≤ α = 0.1" in warning and "Evaluation only" in warning
    [button] = [b for b in at.button if b.label == "Ask for a share of the gain instead"]
    button.click().run()
    assert_clean(at)
    assert at.query_params["target"] == "kappa"
    # Below R(0) the notice goes away.
    at = open_app(**{**RELATIVE_SMALL, "target": "alpha", "alpha": "0.01"})
    assert not any("Predicting nothing already meets" in shown(w.value) for w in at.warning)


def test_the_target_is_r2_or_accuracy_by_default_a_links_stays_and_the_papers_presets_set_alpha():
    at = open_app(ds="synthetic-intrusion", trials="1", T="100")
    assert at.session_state["explorer.target"] == "quality"
    assert at.subheader[0].value == "What it paid to certify accuracy ≥ 0.9"
    at.selectbox(key="app.ds").set_value("diabetes").run()
    assert at.session_state["explorer.target"] == "quality"  # another dataset keeps the visitor's kind of target
    at = open_app(**{**RELATIVE_SMALL, "target": "alpha"})
    assert at.session_state["explorer.target"] == "alpha"  # a link's choice stays
    # The paper's presets compare the methods at an excess risk α (clicking one runs 20 trials on 80,000 rows).
    for name in ("Classroom demo", "Paper's Figure 1 settings"):
        assert (TARGET_MODE, "alpha") in PRESETS[name]


def test_a_relative_view_releases_alpha_and_matches_the_package():
    at = open_app(ds="synthetic-intrusion", target="kappa", kappa="0.2", trials="2", T="50", methods="nr")
    assert_clean(at)
    data = load_builtin("synthetic-intrusion")
    problem = LogisticProblem(data.X_train, data.y_train, 0.005).with_row_bound(data.row_bound)  # as the app's
    runs = run_trials(problem, [], 0.1, ["nr"], 2, 0, kappas=[RelativeTarget(0.2)], T=50)
    assert runs["alpha"].notna().all()
    assert headline(at) == {"Noise reduction": format_epsilon(median_with_inf(runs["eps_total"]))}
    text = " ".join(m.value for m in at.markdown)
    assert f"median **{runs['alpha'].median():.3g}**" in text
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "kept at least 80% of what the best model gains" in captions
    assert "Held-out test rows (evaluation only): the non-private model has accuracy" in captions
    titles = [spec["layout"]["title"]["text"] for spec in figures(at).values()]
    assert any(title.startswith("Accuracy reached: the share of the gain lost") for title in titles)
    breakdown = next(spec for spec in figures(at).values() if spec["layout"]["title"]["text"].startswith("Privacy"))
    assert any(trace["name"].startswith("bounding R(0)") for trace in breakdown["data"])


def test_a_relative_request_is_recorded_with_its_kappa_and_budget():
    chosen = Selection(
        key=("builtin", "diabetes"),
        title="diabetes",
        data=app_table("diabetes"),
        spec=DatasetSpec.from_builtin("diabetes"),
        lam=0.005,
        shared=True,
    )
    request = RunRequest(RelativeTarget(0.1), 0.1, ("nr",), 3, 0, SearchOptions(test_budget=30.0))
    record = json.loads(settings_json(request.settings(chosen)))
    assert record["kappas"] == [0.1] and record["alphas"] == [] and record["test_budget"] == 30.0
    assert "kappas=[0.1]" in reproduction_snippet(request.settings(chosen))
