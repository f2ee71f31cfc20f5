"""The Learn pages through AppTest: every page opens clean, its numbers are the package's,
links reproduce the view, and the live poll aggregates answers across sessions while the
server keeps only randomized answers. Deterministic; about 40 s (the Gibbs page and the
explorer build the 100,000-row problem once each).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from accfirst import RidgeProblem
from accfirst.datasets import load_builtin
from accfirst.erm.gibbs import ridge_plan
from accfirst.erm.gibbs_privacy import gibbs_epsilon, ridge_gradient_gap
from accfirst.interpret import format_epsilon
from accfirst.teaching import RandomizedResponse, max_error_threshold, parse_room_code
from tests.app.page_text import error_message, link_notice
from tests.teaching.test_poll import ROOM_FIELDS
from ui.poll import BROWSER_COOKIE, BROWSER_STATE, poll_rooms

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "learn_randomized_response": "Randomized response: answers nobody can hold against you",
    "learn_laplace": "The Laplace mechanism: noise that hides one person",
    "learn_composition": "How privacy adds up",
    "learn_gibbs": "The Gibbs posterior: privacy without sensitivity",
}
HOSTILE_ROOMS = ["[click](https://example.org)", "<script>alert(1)</script>", "ABC", "**BIG**", "ABCDE0"]


def open_page(name: str, **query: str) -> AppTest:
    """The page as a visitor's link opens it: inside ``app.py``'s frame (menu and dataset sidebar)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(query)
    return at.switch_page(f"pages/{name}.py").run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("name", list(PAGES))
def test_every_learn_page_opens_with_something_to_see(name: str) -> None:
    at = open_page(name, ds="diabetes")
    assert_clean(at)
    assert at.title[0].value == PAGES[name]
    assert len(at.get("plotly_chart")) >= 2 and at.metric


def test_randomized_response_shows_epsilon_live_and_keeps_it_in_the_link() -> None:
    at = open_page("learn_randomized_response", p="0.5", q="0.5")
    assert metrics(at)["Privacy loss ε"] == "1.099"  # the slides' ln 3
    at.slider(key="rr.p").set_value(0.75).run()
    assert_clean(at)
    assert metrics(at)["Privacy loss ε"] == f"{RandomizedResponse(0.75, 0.5).epsilon:.3f}"
    assert at.query_params["p"] == "0.75"
    again = open_page("learn_randomized_response", p="0.75", n="100", truth="0.6", seed="3")
    assert metrics(again)["Privacy loss ε"] == metrics(at)["Privacy loss ε"]
    assert again.slider(key="rr.truth").value == 0.6


def test_live_poll_aggregates_two_students_and_stores_only_randomized_answers() -> None:
    teacher = open_page("learn_randomized_response")
    teacher.button(key="open_room").click().run()
    assert_clean(teacher)
    code = parse_room_code(next(m.value for m in teacher.metric if m.label == "Room code"))
    assert teacher.code[0].value.endswith(f"?room={code}")
    assert any("One answer per browser" in c.value and "the Back button" in c.value for c in teacher.caption)
    for answer in (True, False):
        student = open_page("learn_randomized_response", room=code.lower())
        assert_clean(student)
        assert "Flip a coin" in student.info[0].value
        assert "token" not in student.query_params  # nothing of the answer in the address
        student.button(key=f"answer_{answer}").click().run()
        assert_clean(student)
        assert student.success and not student.button
        student.run()  # the same session again (the Back button in a single-page app): still answered
        assert student.success and not student.button
    teacher.run()
    assert_clean(teacher)
    shown = poll_rooms().snapshot(code)
    assert (shown.yes, shown.answers) == (1, 2)
    assert any("From 2 randomized answers (1 “yes”)" in c.value for c in teacher.caption)
    room = poll_rooms()._rooms[code]
    assert {f.name for f in dataclasses.fields(room)} == ROOM_FIELDS
    joining = open_page("learn_randomized_response")
    joining.text_input(key="join_code").input(f" {code.lower()} ")
    joining.button[0].click().run()  # the form's submit button
    assert joining.query_params["room"] == code and joining.info and "Flip a coin" in joining.info[0].value
    teacher.button(key="close_room").click().run()
    assert_clean(teacher)
    with pytest.raises(ValueError, match="No poll is open"):
        poll_rooms().snapshot(code)


def test_a_second_answer_is_refused_and_the_teacher_sees_why() -> None:
    teacher = open_page("learn_randomized_response")
    teacher.button(key="open_room").click().run()
    code = parse_room_code(next(m.value for m in teacher.metric if m.label == "Room code"))
    token = poll_rooms().issue_token(code)
    poll_rooms().submit(code, True, token)
    with pytest.raises(ValueError, match="answered this poll already"):
        poll_rooms().submit(code, True, token)
    teacher.run()
    assert any("Refused 1 answer — a second answer from the same browser: 1." in c.value for c in teacher.caption)


def test_twenty_scripted_yes_give_a_plain_words_warning_and_no_point_interval() -> None:
    teacher = open_page("learn_randomized_response")
    teacher.button(key="open_room").click().run()
    code = parse_room_code(next(m.value for m in teacher.metric if m.label == "Room code"))
    for _ in range(20):
        poll_rooms().submit(code, True, poll_rooms().issue_token(code))
    teacher.run()
    assert not teacher.exception
    [warning] = [w.value for w in teacher.warning]
    assert warning.startswith("More “yes” than the coins allow: some answers may not follow the coins.")
    assert "at most 0.3%" in warning
    caption = next(c.value for c in teacher.caption if c.value.startswith("From 20 randomized answers"))
    assert "estimated true share 100%, clipped to 0–100%" in caption and "no interval" in caption
    assert "1.00–1.00" not in caption and "1.50" not in caption


@pytest.mark.parametrize("room", HOSTILE_ROOMS)
def test_a_malformed_room_in_a_link_is_noticed_without_echo_and_the_class_page_shows(room: str) -> None:
    at = open_page("learn_randomized_response", room=room)
    assert not at.exception and not at.error
    assert link_notice(at) == [f"room: {error_message(parse_room_code, room)}"]
    assert all(room not in item for item in link_notice(at))
    assert at.title[0].value == PAGES["learn_randomized_response"] and "room" not in at.query_params


def test_an_unknown_room_says_so() -> None:
    at = open_page("learn_randomized_response", room="ABCDEF")
    assert not at.exception
    assert any("No poll is open with this code" in e.value for e in at.error) and not at.button


def test_laplace_page_shows_the_slides_example() -> None:
    at = open_page("learn_laplace", eps="1", k="10000", d="0.05")
    assert_clean(at)
    assert metrics(at)["Every error below, with probability ≥ 1 − d"] == f"{max_error_threshold(10_000, 0.05, 1.0):.3g}"
    assert metrics(at)["Every error below, with probability ≥ 1 − d"] == "12.2"


def test_composition_page_numbers() -> None:
    at = open_page("learn_composition", eps="0.1", k="100", slack="1e-06")
    assert_clean(at)
    shown = metrics(at)
    assert shown["Basic: (kε, kδ)"] == "ε = 10"
    assert shown["Advanced"] == f"ε = {math.sqrt(200 * math.log(1e6)) * 0.1 + 10 * math.expm1(0.1):.3g}"
    assert shown["Replace one person (this project)"] == "ε = 0.2"


def test_gibbs_page_numbers_are_the_packages() -> None:
    at = open_page("learn_gibbs", alpha="0.05", gamma="0.1")
    assert_clean(at)
    data = load_builtin("synthetic-buzz")
    problem = RidgeProblem(data.X_train, data.y_train, 0.005)
    plan = ridge_plan(problem, 0.05, 0.1, 1e-6)
    shown = metrics(at)
    assert shown["Accuracy-first β"] == f"{plan.sampler.beta:.4g}"
    assert shown["A run's ε (δ = 10⁻⁶)"] == format_epsilon(plan.epsilon)
    gap = ridge_gradient_gap(problem.p, plan.sampler.radius)
    expected = gibbs_epsilon(plan.sampler.beta, problem.n, 0.005, gap, 1e-6)
    assert shown["ε, derived form (δ = 10⁻⁶)"] == format_epsilon(expected)
    assert any("fine lattice" in c.value for c in at.caption)
    assert not any("fell in C" in c.value or "accepted" in c.value for c in at.caption)


def test_gibbs_page_on_logistic_data_shows_the_certified_sampler() -> None:
    at = open_page("learn_gibbs", ds="breast-cancer")
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 3
    assert any("exact draws" in c.value and "1% of its δ" in c.value for c in at.caption)
    assert not any("10⁻⁸" in c.value or "R̂" in c.value for c in at.caption)
    refused = open_page("learn_gibbs", ds="breast-cancer", delta="0")
    assert any("no pure-ε guarantee" in e.value for e in refused.error)


def test_explorer_shows_gibbs_with_its_delta() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    # On the large data the derived (ε, δ) has the smaller ε (on diabetes the pure one wins, δ = 0).
    at.query_params.update({"target": "alpha", "methods": "nr,gibbs", "trials": "2", "T": "200"})
    at.run()
    assert_clean(at)
    labels = [m.label for m in at.metric]
    assert "ε (set in advance), δ = 10⁻⁶" in labels and "Median ex-post ε" in labels
    assert any("(ε, δ) guarantee with δ = 10⁻⁶" in c.value for c in at.caption)


def test_a_browser_that_comes_back_in_a_new_session_cannot_answer_again(monkeypatch) -> None:
    """The link pasted again, or a reload: a new session, but the browser sends back the identifier the app set in
    its cookie, so the room refuses its second answer (a fresh token per tab let it answer twice)."""
    teacher = open_page("learn_randomized_response")
    teacher.button(key="open_room").click().run()
    code = parse_room_code(next(m.value for m in teacher.metric if m.label == "Room code"))
    student = open_page("learn_randomized_response", room=code)
    student.button(key="answer_True").click().run()
    assert student.success
    browser = student.session_state[BROWSER_STATE]
    monkeypatch.setattr(type(st.context), "cookies", property(lambda _: {BROWSER_COOKIE: browser}))
    again = open_page("learn_randomized_response", room=code)
    assert_clean(again)
    assert again.success and not again.button
    assert poll_rooms().snapshot(code).answers == 1
    monkeypatch.setattr(type(st.context), "cookies", property(lambda _: {BROWSER_COOKIE: "another-browser-0123456789"}))
    other = open_page("learn_randomized_response", room=code)
    assert other.button and not other.success  # another browser may answer


def test_one_answer_reads_the_same_share_in_the_title_and_the_caption() -> None:
    """A single “yes” under two coins: the unbiased estimate is 1.50; the chart's title said 100%, the caption 1.50,
    and the caption said "1 randomized answers"."""
    teacher = open_page("learn_randomized_response")
    teacher.button(key="open_room").click().run()
    code = parse_room_code(next(m.value for m in teacher.metric if m.label == "Room code"))
    poll_rooms().submit(code, True, poll_rooms().issue_token(code))
    teacher.run()
    [caption] = [c.value for c in teacher.caption if c.value.startswith("From 1 randomized answer ")]
    assert "estimated true share 100%: the unbiased estimate, 150%, leaves 0–100%" in caption
    [title] = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in teacher.get("plotly_chart")][-1:]
    assert title == "1 answer so far: estimated share 100% (clipped)"
