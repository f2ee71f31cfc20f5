"""The explorer's presets, the Paper settings button, the public radius and Gaussian noise, through AppTest.

Diabetes (354 rows) and few trials keep most of these fast; the presets load
synthetic-buzz and run trial 0 of each method only (about 15 s on two busy cores).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import accfirst.snippet
import ui.downloads
import ui.headline
import ui.runs
from accfirst import SearchOptions, run_trials
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.interpret import format_epsilon, format_exp_epsilon, ranking_sentence, summarise_runs
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from tests.app.test_explorer import SMALL, assert_clean, open_app
from ui.text import EVALUATION_ONLY

PAPER = SearchOptions.paper()


def widget_values(at) -> dict[str, object]:
    """The value of every widget a preset sets, by URL key."""
    return {
        "ds": at.selectbox(key="app.ds").value,
        "lam": at.select_slider(key="app.lam").value,
        "radius": at.number_input(key="app.radius").value,
        "alpha": at.slider(key="explorer.alpha").value,
        "gamma": at.select_slider(key="explorer.gamma").value,
        "methods": list(at.session_state["explorer.methods"]),
        "cal": at.radio(key="explorer.cal").value,
        "T": at.number_input(key="explorer.T").value,
        "gen": at.radio(key="explorer.gen").value,
        "noise": at.session_state["explorer.noise"],
        "trials": at.slider(key="explorer.trials").value,
    }


def click(at, label: str):
    [button] = [b for b in at.button if b.label == label]
    return button.click().run()


def test_presets_set_every_widget_they_name(monkeypatch):
    every_trial = ui.runs.iter_trials
    # The presets ask for 20 trials on 80,000 rows; one shows the same widgets and the same sentence.
    monkeypatch.setattr(
        ui.headline, "iter_trials", lambda chosen, request: every_trial(chosen, replace(request, trials=1))
    )
    at = open_app(**SMALL, alpha="0.3", cal="theorem", radius="1", methods="nr")
    assert_clean(at)
    click(at, "Classroom demo")
    assert_clean(at)
    assert widget_values(at) == {
        "ds": "synthetic-buzz",
        "lam": 0.005,
        "radius": None,
        "alpha": 0.1,
        "gamma": 0.1,
        "methods": ["nr", "doubling", "theory"],
        "cal": SearchOptions.calibration,
        "T": SearchOptions.T,
        "gen": "paper",
        "noise": "laplace",
        "trials": 20,
    }
    assert "Noise reduction paid" in " ".join(m.value for m in at.markdown)  # the measured saving shows
    assert at.radio(key="explorer.fallback").value == "nothing"

    click(at, "Paper's Figure 1 settings")
    assert_clean(at)
    assert widget_values(at) == {
        "ds": "synthetic-buzz",
        "lam": 0.005,
        "radius": None,
        "alpha": 0.05,
        "gamma": 0.1,
        "methods": ["nr", "doubling", "theory"],
        "cal": "paper-code",
        "T": PAPER.T,
        "gen": "paper",
        "noise": "laplace",
        "trials": 20,
    }
    assert at.query_params["cal"] == "paper-code" and at.query_params["T"] == "1000"
    assert at.radio(key="explorer.fallback").value == "exact"  # the paper's θ* fallback, on a synthetic table only

    click(at, "Your data")
    assert not at.exception
    assert at.selectbox(key="app.ds").value == "upload"
    assert any("Choose a dataset" in i.value or "Upload" in i.value for i in at.info)


def test_paper_settings_button_restores_the_authors_configuration():
    at = open_app(**SMALL, lam="0.05", gamma="0.3", cal="exact", spacing="linear")
    assert_clean(at)
    click(at, "Paper settings")
    assert_clean(at)
    values = widget_values(at)
    assert (values["lam"], values["gamma"], values["cal"], values["T"]) == (0.005, 0.1, "paper-code", 1000)
    assert at.radio(key="explorer.spacing").value == "geometric"
    assert values["ds"] == "diabetes" and values["trials"] == 4  # the data and the trials stay
    # A real table: a failed run releases nothing whatever the button set, and no choice is offered.
    assert not [radio for radio in at.radio if radio.key == "explorer.fallback"]


def test_calibration_choices_show_their_epsilon_a_beside_fixed_labels_and_doubling_follows():
    at = open_app(**SMALL)
    radio = at.radio(key="explorer.cal")
    options, captions = list(radio.options), list(radio.proto.captions)
    assert len(captions) == 6 and all(caption.startswith("ε_A = ") for caption in captions)
    assert any("Doubling follows the choice" in c.value for c in at.caption)
    at.slider(key="explorer.alpha").set_value(0.1).run()
    radio = at.radio(key="explorer.cal")
    # ε_A moves with α beside the options; the options' text, which the browser sends back, does not.
    assert list(radio.options) == options and list(radio.proto.captions) != captions
    assert radio.value == SearchOptions.calibration


def test_a_radius_above_m_is_refused_with_a_clear_error():
    at = open_app(**SMALL, radius="20")  # λ = 0.005: M = 1/√λ ≈ 14.1
    assert not at.exception
    assert any("above M = 1/√λ = 14.14" in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric


def test_a_binding_radius_is_noticed_and_reaches_the_settings_json(monkeypatch):
    records = []
    original = accfirst.snippet.settings_json
    monkeypatch.setattr(ui.downloads, "settings_json", lambda s: records.append(original(s)) or records[-1])
    at = open_app(**SMALL, radius="0.5")
    assert_clean(at)
    assert any("domain knowledge, never from this data" in w.value for w in at.warning)
    assert any(i.value.endswith(EVALUATION_ONLY) and "outside the public bound R = 0.5" in i.value for i in at.info)
    assert json.loads(records[-1])["radius"] == 0.5
    assert at.query_params["radius"] == "0.5"


def test_gaussian_noise_runs_shows_delta_and_the_head_to_head():
    at = open_app(**SMALL, noise="gaussian", methods="nr,doubling")
    assert_clean(at)
    labels = [m.label for m in at.metric if m.label.startswith("Median ex-post ε")]
    assert labels == ["Median ex-post ε, δ = 10⁻⁶"] * 2
    assert "noise_comparison" in {chart.proto.id.split("-")[-1] for chart in at.get("plotly_chart")} or any(
        "Laplace vs Gaussian" in s.value for s in at.subheader
    )
    assert any("δ = 10⁻⁶" in m.value for m in at.markdown if m.value.startswith("**Least privacy"))


@pytest.mark.parametrize(
    ("query", "message"),
    [({"noise": "gaussian"}, "no Gaussian version"), ({"noise": "gaussian", "delta": "0"}, "choose δ > 0")],
)
def test_gaussian_noise_needs_delta_and_no_theory(query, message):
    at = open_app(**{**SMALL, **query})
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not at.metric


def test_the_classroom_demo_figures_the_readme_states_reproduce():
    """The README's Classroom demo sentence and its screenshot's caption are the preset's run (synthetic-buzz, α = 0.1,
    20 trials, the page's defaults; seed 0 as the page's seed box takes it). They said 0.357 against 0.661 while the
    preset gave 0.407 against 0.682 (0.290 against 0.660 since a failed run releases nothing and the radius's noise
    moved). About 35 s of CPU: 60 runs on 80,000 rows."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    stated = re.search(
        r"\*\*Classroom demo\*\*\s+\(synthetic-buzz, α = 0\.1, 20 trials, seed 0\): noise reduction pays a median "
        r"ε = ([\d.]+)\s+\(e\^ε = ([\d.]+)\) against doubling's ([\d.]+)",
        readme,
    )
    runs = run_trials(prepared_problem(load_builtin("synthetic-buzz"), 0.005), [0.1], 0.1, ["nr", "doubling"], 20, 0)
    summary = summarise_runs(runs).set_index("method")
    nr, doubling = summary.loc[NoiseReduction.key], summary.loc[Doubling.key]
    assert stated.groups() == (
        format_epsilon(nr["median_eps"]),
        format_exp_epsilon(nr["median_eps"]),
        format_epsilon(doubling["median_eps"]),
    )
    assert "less privacy than doubling" in ranking_sentence(summary.reset_index())
