"""The explorer's default target through AppTest: R² (ridge) or accuracy (logistic), certified, λ chosen privately
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#refusals-that-spend-nothing).

The card is checked against the package run directly (same seed, same runs), so a card that shows the wrong bill, λ
or quality fails. A tiny upload is refused before it is prepared (nothing in the session's memo, ε = 0), and on a
real table the switch to α brings back the paper's comparison of methods with the package's numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.erm.quality import VarianceExplained
from accfirst.erm.ridge import RidgeProblem
from accfirst.interpret import format_epsilon, median_with_inf
from accfirst.methods.certified import refusal_before_reading
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import trial_result
from tests.app.page_text import shown
from tests.app.test_explorer import app_table, assert_clean, expected_medians, headline, open_app
from tests.app.test_upload import spending_csv
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
    assert f"Held-out R²: **{runs['heldout'].median():.3f}**" in lines
    assert lines.count(EVALUATION_LABEL) == 2  # the in-sample and the held-out figures
    charts = [chart.proto.id for chart in at.get("plotly_chart")]
    assert [any(i.endswith(key) for i in charts) for key in ("eps_distribution", "quality_reached")] == [True, True]
    assert [d.label for d in at.get("download_button")] == ["Results (CSV)"]


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
