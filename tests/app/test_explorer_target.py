"""The explorer's default target through AppTest: R² (ridge) or accuracy (logistic), certified, λ chosen privately
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#refusals-that-spend-nothing).

The card is checked against the package run directly (same seed, same runs), so a card that shows the wrong bill, λ
or quality fails. A tiny upload is refused before it is prepared (nothing in the session's memo, ε = 0), and on a
real table the switch to α brings back the paper's comparison of methods with the package's numbers.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.erm.quality import VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.interpret import format_epsilon, median_with_inf
from accfirst.methods.certified import refusal_before_reading
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import run_cells, trial_result
from accfirst.snippet import RESULTS_FILE, DatasetSpec, reproduction_snippet, settings_from_json, settings_json
from tests.app.page_text import shown
from tests.app.test_explorer import app_table, assert_clean, expected_medians, headline, open_app
from tests.app.test_upload import spending_csv
from ui.runs import RunRequest
from ui.text import EVALUATION_LABEL


def _expected(data, target, trials: int) -> pd.DataFrame:
    """The page's runs, from the package: seed 0, the default options."""
    problem = prepared_problem(data, 0.005)
    runs = [trial_result(problem, "nr", target, t, 0.1, 0, SearchOptions()) for t in range(trials)]
    return pd.DataFrame(
        {
            "eps_total": [run.eps_total for run in runs],
            "lam": [run.lam for run in runs],
            "success": [run.success for run in runs],
            "heldout": [data.test_quality(run.theta)["r2"] for run in runs],
        }
    )


def test_the_default_view_certifies_r2_with_lambda_chosen_privately_and_labels_evaluation_only():
    at = open_app(trials="2")
    assert_clean(at)
    assert at.query_params["target"] == "quality" and at.query_params["r2"] == "0.8"
    assert at.subheader[0].value == "What it paid to certify R² ≥ 0.8"
    assert not [b for b in at.button if b.key == "explorer.uncertified"]  # released: no alternative offered
    markdown = [m.value for m in at.markdown]
    assert "#### Noise reduction: R² ≥ 0.8" in markdown
    # No method picker: one line says why noise reduction alone runs.
    assert not [m for m in at.get("multiselect") if m.label == "Methods"]
    # No δ to choose: the certificate's runs use Laplace noise, and the sidebar says what they give.
    assert not [s for s in at.select_slider if s.label.startswith("δ of the")]
    assert "A certified target's runs give a pure ε." in [c.value for c in at.sidebar.caption]
    assert any(m.startswith("**Noise reduction** certifies a target in R² or accuracy") for m in markdown)
    runs = _expected(load_builtin("synthetic-buzz"), VarianceExplained(0.8), 2)
    [total] = [m.value for m in at.metric if m.label == "Median total ε"]
    assert total == format_epsilon(median_with_inf(runs["eps_total"]))
    [lines] = [m for m in markdown if m.startswith("λ chosen privately")]
    assert f"λ chosen privately: **{runs['lam'].median():.3g}**" in lines
    assert f"met in-sample: **{int(runs['success'].sum())}/2**" in lines
    assert "Certified: R² ≥ 0.8 on the training targets as prepared (clipped to their public range) with" in lines
    assert f"Held-out R²: **{runs['heldout'].median():.3f}**" in lines
    assert lines.count(EVALUATION_LABEL) == 2  # the in-sample and the held-out figures
    charts = [chart.proto.id for chart in at.get("plotly_chart")]
    assert [any(i.endswith(key) for i in charts) for key in ("eps_distribution", "quality_reached")] == [True, True]
    # The settings record and the snippet rerun these runs (test_the_certified_record_and_snippet_rerun_the_pages_runs)
    assert [d.label for d in at.get("download_button")] == ["Results (CSV)", "Settings (JSON)", "Python snippet"]


@pytest.mark.parametrize(("lambdas", "lam"), [(None, 0.005), ((0.002,), 0.002)])
def test_the_certified_record_and_snippet_rerun_the_pages_runs(monkeypatch, tmp_path, lambdas, lam):
    """The explorer's request toward R² ≥ 0.6, λ chosen privately or fixed, within a ceiling of 3: its settings record
    reads back the same, and the Python snippet made from it, executed, makes the rows the page's chunks make
    (``run_cells`` with the request's own cells and seed). Before, the record refused a target in R² or accuracy and
    the page offered the results alone."""
    options = SearchOptions(T=50, ceiling=3.0, lambdas=lambdas)
    target = VarianceExplained(0.6)
    request = RunRequest(alpha=target, gamma=0.1, methods=("nr",), trials=2, seed=4, options=options, chosen_seed=4)
    chosen = SimpleNamespace(spec=DatasetSpec.from_builtin("synthetic-buzz"), task="ridge", lam=lam, radius=None)
    settings = request.settings(chosen)
    assert settings.goals == (0.6,) and settings.options == options and settings.lam == lam
    assert settings_from_json(settings_json(settings)) == settings
    problem = prepared_problem(load_builtin("synthetic-buzz"), lam)
    page = pd.DataFrame(run_cells(problem, 0.1, 4, options, [("nr", target, trial) for trial in range(2)]))
    monkeypatch.chdir(tmp_path)
    exec(compile(reproduction_snippet(settings), "snippet.py", "exec"), {"__name__": "__main__"})
    produced = pd.read_csv(tmp_path / RESULTS_FILE)
    assert (produced["target"] == "r2").all() and (produced["goal"] == 0.6).all() and produced["quality"].notna().all()
    for column in ("eps_total", "eps_scale", "eps_test", "eps_hypothesis", "lam", "quality"):
        np.testing.assert_allclose(produced[column], page[column], rtol=1e-12)


def test_a_tiny_upload_is_refused_before_it_is_prepared_and_nothing_is_spent():
    at = open_app(ds="upload", trials="2", T="100")
    at.file_uploader(key="app.upload_file").set_value(("spending.csv", spending_csv(300), "text/csv")).run()
    assert_clean(at)
    sentence = refusal_before_reading(RidgeProblem, 240, VarianceExplained(0.8), 0.1, SearchOptions())
    assert sentence is not None and "Nothing was read or spent" in sentence
    [warning] = [shown(w.value) for w in at.warning]
    assert warning == f"Refused before the table was prepared: {sentence}."
    assert [(m.label, m.value) for m in at.metric] == [("ε spent", "0")]
    assert "upload_prepared" not in at.session_state["ui.session_memo"]  # the preparation was never paid
    assert [b.label for b in at.button if b.key == "explorer.uncertified"] == [
        "Run the theory approach at α = 0.05 instead (not certified)"
    ]
    # Another kind of target prepares the table and runs on it.
    at.button_group(key="explorer.target").set_value("alpha").run()
    assert_clean(at)
    assert "upload_prepared" in at.session_state["ui.session_memo"]
    cards = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert cards == ["#### Noise reduction", "#### Doubling", "#### Theory"]
    assert len([m for m in at.metric if m.label.startswith(("Median ex-post ε", "ε (set in advance)"))]) == 3


def test_on_a_real_table_the_refusal_spends_nothing_and_alpha_brings_back_the_papers_comparison():
    at = open_app(ds="diabetes", r2="0.9", trials="3", T="200", seed="0")
    assert_clean(at)
    [metric] = at.metric
    assert (metric.label, metric.value) == ("ε spent by the search", "0")
    [warning] = [shown(w.value) for w in at.warning if "Refused before reading" in shown(w.value)]
    assert "no table of 354 rows can certify R² ≥ 0.9" in warning and "Nothing was read or spent" in warning
    at.button_group(key="explorer.target").set_value("alpha").run()
    assert_clean(at)
    assert at.query_params["target"] == "alpha"
    assert headline(at) == expected_medians(
        app_table("diabetes"), alphas=[0.05], gamma=0.1, methods=["nr", "doubling", "theory"], trials=3, seed=0, T=200
    )
    assert any(h.value == "The search, step by step" for h in at.subheader)
    assert np.isfinite(float(at.slider(key="explorer.alpha").value))


def test_a_refusal_offers_its_uncertified_alternative_and_the_button_runs_it():
    """Refused on diabetes (354 training rows, R² ≥ 0.8): a button labelled not certified switches to the theory
    approach alone at α = 0.05, and the page runs it: the package's numbers. A view that released a model offers none.
    Before, the alternative was named in the refusal's words only."""
    at = open_app(ds="diabetes", trials="2", seed="0")
    [button] = [b for b in at.button if b.key == "explorer.uncertified"]
    assert button.label == "Run the theory approach at α = 0.05 instead (not certified)"
    button.click().run()
    assert_clean(at)
    assert at.query_params["target"] == "alpha" and float(at.slider(key="explorer.alpha").value) == 0.05
    assert headline(at) == expected_medians(
        app_table("diabetes"), alphas=[0.05], gamma=0.1, methods=["theory"], trials=2, seed=0
    )
    assert not [b for b in at.button if b.key == "explorer.uncertified"]


def test_a_fixed_lambda_is_the_one_the_card_shows_and_accuracy_is_the_logistic_target():
    at = open_app(ds="synthetic-intrusion", trials="1", lamsel="fixed", lam="0.002")
    assert_clean(at)
    assert at.subheader[0].value == "What it paid to certify accuracy ≥ 0.9"
    assert any("λ = 0.002, as set in the Data section" in c.value for c in at.caption)
    [lines] = [m.value for m in at.markdown if m.value.startswith("λ: ")]
    assert lines.startswith("λ: **0.002** (fixed)") and "Held-out accuracy: **" in lines


def test_a_noise_the_certificate_does_not_use_is_refused_where_it_is_set_and_nothing_runs():
    at = open_app(trials="1", noise="gaussian")
    assert not at.exception
    assert any("certified with Laplace noise" in e.value for e in at.sidebar.error)
    assert any(e.value.startswith("Nothing ran") for e in at.main.error)
    assert not at.metric


def _sidebar_disabled(at) -> dict[str, bool]:
    """``{label: disabled}`` of the Data sidebar's λ slider, size-bound radio and public bound box."""
    widgets = [*at.sidebar.select_slider, *at.sidebar.radio, *at.sidebar.number_input]
    labels = ("Regularisation λ (log scale)", "Bound on the model's size", "Public bound on ‖θ‖ (optional)")
    return {w.label: w.disabled for w in widgets if w.label in labels}


def test_the_sidebar_disables_what_the_target_does_not_read_and_a_linked_bound_reaches_an_alpha_run():
    """A certified target runs each λ on the bound it implies: λ (when chosen privately) and the size bound are drawn
    disabled, with the sentence that says why; a fixed λ is read again; the α target reads all three, and a public
    bound in its link reaches the run from the first load (the frame restores the target before drawing)."""
    every = ("Regularisation λ (log scale)", "Bound on the model's size", "Public bound on ‖θ‖ (optional)")
    at = open_app(trials="1")
    assert _sidebar_disabled(at) == dict.fromkeys(every, True)
    assert any(c.value.startswith("A target in R² or accuracy chooses λ privately") for c in at.sidebar.caption)
    at = open_app(trials="1", lamsel="fixed")
    assert _sidebar_disabled(at) == {every[0]: False, every[1]: True, every[2]: True}
    at = open_app(trials="1", target="alpha", radius="3")
    assert_clean(at)
    assert _sidebar_disabled(at) == dict.fromkeys(every, False)
    assert not [c for c in at.sidebar.caption if c.value.startswith("A target in R² or accuracy")]
    assert at.session_state["ui.selection"].radius == 3.0
