"""The ui helpers without a browser: chunked runs equal run_trials, replays equal their row,
settings parse and print their URL values, the session memo forgets old entries."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from accfirst import run_trials
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import TIMING, trial_result
from accfirst.search.sweep import run_cells
from tests.app.page_text import link_notice, shown
from ui.epsilon_charts import halted_sentence
from ui.quality import above_reference, alpha_against_zero
from ui.runs import CHUNK, _frame, chunk_bounds, released
from ui.settings import Choice, FloatSlider, IntSetting, InvalidValue, MultiChoice, OptionalFloat, Toggle
from ui.spend import Spend, spend_sentence
from ui.text import plain, short
from ui.work import measured_costs


@pytest.mark.parametrize("trials", [1, 3, 2 * CHUNK + 2])
def test_chunks_cover_the_trials_once_trial_zero_alone(trials):
    bounds = chunk_bounds(trials)
    assert bounds[0] == (0, 1)
    assert [t for first, count in bounds for t in range(first, first + count)] == list(range(trials))
    assert all(first % CHUNK == 0 for first, _ in bounds[2:])  # the same chunks for any larger number of trials


@pytest.mark.parametrize("method", ["nr", "doubling", "theory"])
def test_chunks_are_exactly_the_rows_of_run_trials(ridge_problem, method):
    trials, options = 2 * CHUNK + 2, SearchOptions(T=100)
    rows = [
        row
        for first, count in chunk_bounds(trials)
        for row in run_cells(ridge_problem, 0.1, 5, options, [(method, 0.1, t) for t in range(first, first + count)])
    ]
    ours = _frame(rows)
    assert (ours[TIMING] > 0).all() and measured_costs(ours)[method] > 0  # the page measures its own work …
    theirs = run_trials(ridge_problem, [0.1], 0.1, [method], trials, 5, T=100)
    pd.testing.assert_frame_equal(released(ours), theirs)  # … and no download carries it


@pytest.mark.parametrize("exact", [False, True])
def test_a_replayed_trial_is_its_row(ridge_problem, exact):
    options = SearchOptions(T=100, radius_mode="none")  # on M this seed rejects levels on their lower bound
    rows = run_trials(ridge_problem, [0.1], 0.1, ["nr"], 4, 2, **options.to_dict())
    replay = trial_result(ridge_problem, "nr", 0.1, 3, 0.1, 2, options, exact)
    private = trial_result(ridge_problem, "nr", 0.1, 3, 0.1, 2, SearchOptions(T=100), exact)
    assert (
        private.eps_radius > 0
        and private.eps_total == run_trials(ridge_problem, [0.1], 0.1, ["nr"], 4, 2, T=100)["eps_total"].iloc[3]
    )
    assert replay.eps_total == rows["eps_total"].iloc[3]
    assert replay.excess_risk == pytest.approx(rows["excess_risk"].iloc[3])
    assert replay.trace is not None and len(replay.trace.level) == (replay.stop_index or options.T)
    assert exact == bool(pd.notna(replay.trace.excess_risk).all())


def test_settings_parse_and_print_url_values():
    alpha = FloatSlider("t", "alpha", "α", 0.05, low=0.001, high=0.5)
    assert alpha.parse(["0.0125"]) == 0.0125 and alpha.to_url(0.0125) == "0.0125"
    with pytest.raises(InvalidValue, match=r"between 0\.001 and 0\.5"):
        alpha.parse(["0.9"])
    with pytest.raises(InvalidValue, match="must be a number"):
        alpha.parse(["abc"])
    lam = Choice("t", "lam", "λ", 0.005, options=(0.001, 0.005, 0.01), widget_type="select_slider")
    assert lam.parse(["5e-3"]) == 0.005 and lam.to_url(0.005) == "0.005"
    with pytest.raises(InvalidValue, match=r"one of 0\.001, 0\.005, 0\.01"):
        lam.parse(["0.002"])
    methods = MultiChoice("t", "methods", "m", ["nr"], options=("nr", "doubling", "theory"))
    assert methods.parse(["theory,nr"]) == ["nr", "theory"]
    assert methods.parse(["nr", "doubling"]) == ["nr", "doubling"]  # repeated keys work too
    assert methods.to_url(["theory", "nr"]) == "nr,theory"
    with pytest.raises(InvalidValue, match="magic"):
        methods.parse(["nr,magic"])
    seed = IntSetting("t", "seed", "seed", 0, low=0, high=10)
    assert seed.parse(["7"]) == 7
    with pytest.raises(InvalidValue):
        seed.parse(["2.5"])
    eps = OptionalFloat("t", "eps_min", "ε", None)
    assert eps.parse([""]) is None and eps.to_url(None) is None and eps.parse(["1e-5"]) == 1e-5
    with pytest.raises(InvalidValue, match="> 0"):
        eps.parse(["-1"])
    flag = Toggle("t", "exact", "exact", False)
    assert flag.parse(["1"]) is True and flag.to_url(False) == "0"


# Python's float() and int() read all of these; a number box cannot be typed so, and a link may not either.
NOT_TYPED = ["٣", "３", " 5", "5 ", "1_000", "nan", "NaN", "inf", "-inf", "+infinity", "0x10", "1e", "", "½"]


@pytest.mark.parametrize("text", NOT_TYPED)
def test_a_link_number_is_read_as_a_number_box_reads_it(text):
    settings = [
        FloatSlider("t", "alpha", "α", 0.05, low=0.001, high=1000.0),
        IntSetting("t", "seed", "seed", 0, low=0, high=10_000),
        Choice("t", "lam", "λ", 5.0, options=(3.0, 5.0, 1000.0, 16.0)),
    ]
    for setting in settings:
        with pytest.raises(InvalidValue):
            setting.parse([text])
    assert [setting.parse(["5"]) for setting in settings] == [5.0, 5, 5.0]
    assert [setting.parse(["1e3"]) for setting in (settings[0], settings[2])] == [1000.0, 1000.0]


def test_restore_warns_once_and_write_keeps_the_url_in_step():
    def page():
        import streamlit as st

        from ui.settings import FloatSlider, OptionalFloat, restore_from_url, write_to_url

        settings = (FloatSlider("p", "alpha", "α", 0.05, low=0.001, high=0.5), OptionalFloat("p", "eps_min", "ε", None))
        restore_from_url(settings)
        settings[0].widget()
        settings[1].widget()
        write_to_url(settings)
        st.write(f"alpha={st.session_state['p.alpha']}")

    at = AppTest.from_function(page)
    at.query_params.update({"alpha": "7", "eps_min": "0.001"})
    at.run()
    assert link_notice(at) == ["alpha must be between 0.001 and 0.5; got 7; using the default (0.05)."]
    assert at.query_params == {"alpha": "0.05", "eps_min": "0.001"}
    at.number_input[0].set_value(0.002).run()
    assert not link_notice(at)  # a page run on its own: noticed on the first run only
    assert at.query_params == {"alpha": "0.05", "eps_min": "0.002"}


def test_session_memo_keeps_the_most_recent_entries():
    def page():
        import streamlit as st

        from ui.cache import session_memo

        calls = st.session_state.setdefault("calls", [])
        for key in ("a", "b", "c", "a"):
            session_memo("space", key, lambda key=key: calls.append(key) or key.upper(), max_entries=2)

    at = AppTest.from_function(page).run()
    assert at.session_state["calls"] == ["a", "b", "c", "a"]  # "a" was evicted by "c", so computed again
    assert list(at.session_state["ui.session_memo"]["space"]) == ["c", "a"]


def test_plain_text_keeps_every_character_and_no_markdown():
    hostile = (
        "[sign in](https://evil.example) ![t](http://host/t.png) <b>x</b> `c` *e* $m$ :red[r] a@b.co www.x.org\n# h"
    )
    escaped = plain(hostile)
    assert shown(escaped) == hostile.replace("\n", " ")
    assert not re.search(r"(?<!\\)[\[\]()!<>`*$:#]", escaped)  # every Markdown-active character is escaped
    assert not re.search(r"(?i)https?\\?:|www\\?\.|@\w", escaped)  # no autolink prefix is left intact


def test_a_long_value_is_cut_to_about_80_characters():
    value = "x" * 100_000
    assert len(shown(short(value))) == 80 and shown(short(value)).endswith("…")
    with pytest.raises(InvalidValue) as error:
        FloatSlider("t", "alpha", "α", 0.05).parse([value])
    assert len(str(error.value)) < 140


def _quality_rows(best: float, *private: float) -> list[tuple[str, str, dict[str, float]]]:
    return [("θ*", "nonprivate", {"r2": best, "rmse": 1.0})] + [
        (f"m{i}", "nr", {"r2": r2, "rmse": 1.0}) for i, r2 in enumerate(private)
    ]


def test_a_model_above_theta_star_held_out_is_explained_and_only_then():
    assert above_reference(_quality_rows(0.6, 0.735), "ridge").startswith("A private model can score above θ*")
    assert above_reference(_quality_rows(0.6, 0.5, 0.6), "ridge") == ""


def test_alpha_is_set_against_the_zero_models_excess_risk():
    assert alpha_against_zero(0.05, 0.0575).startswith("Meeting α bounds the excess risk on the training objective")
    assert "α = 0.05 is 87% of R(0) = 0.0575" in alpha_against_zero(0.05, 0.0575)
    assert "keeps only 13% of what θ* gains" in alpha_against_zero(0.05, 0.0575)
    assert alpha_against_zero(0.05, 0.03).startswith("Meeting α promises nothing here")


def test_no_split_of_epsilon_names_why_no_trial_halted():
    frame = pd.DataFrame(
        {
            "method": ["nr", "nr", "nr", "doubling", "doubling", "doubling"],
            "eps_test": [0.0] * 6,
            "eps_hypothesis": [math.inf, 0.0, 0.0, math.inf, 0.0, 0.0],
            "fallback": [True, False, True, True, False, False],
            "nothing_released": [False, False, True, False, False, False],
            "alpha": [0.1, math.nan, 0.1, 0.1, math.nan, math.nan],
            "eps_total": [math.inf, 0.2, 3.0, math.inf, 0.2, 0.2],
        }
    )
    sentence = halted_sentence(frame)
    assert "of the 6 runs (3 trials per method), 1 passed no level of the test and released nothing" in sentence
    assert "and 2 fell back and released the exact, non-private model (ε = ∞)" in sentence
    assert "3 found no signal a private model could keep" in sentence
    assert halted_sentence(frame.assign(fallback=False, alpha=0.1)) == ""


def test_the_sessions_spend_adds_releases_to_one_preparation():
    spend = Spend(
        prep_epsilon=0.919, prep_delta=1e-6, releases=3, epsilon=6.0, delta=0.0, evaluation=False, upload=True
    )
    words = spend_sentence(spend)
    assert "ε = 6.92, δ = 10⁻⁶** — preparing it once (ε = 0.919) and 3 releases" in words
    assert "A new session (a reload) prepares your file again" in words
    evaluation = replace(spend, evaluation=True, prep_epsilon=math.inf, upload=False)
    assert "ε = 6.00" in spend_sentence(evaluation) and "evaluation only, not counted" in spend_sentence(evaluation)
    assert math.isinf(replace(spend, epsilon=math.inf).total_epsilon)
