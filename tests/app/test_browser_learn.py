"""The Learn pages in a real browser: each reached by clicking the app's menu, drawn without an
exception, and the live poll working across browsers (the student opens the teacher's link, as a
student would, and cannot answer twice by reloading, going Back, pasting the link again or opening a
new tab) with the teacher's view refreshing by itself.
"""

from __future__ import annotations

import re

import pytest

from tests.app.browsing import EXCEPTION, IDLE, TIMEOUT_MS, assert_no_exception, click_menu, wait_script_done
from ui.navigation import SECTIONS

pytestmark = pytest.mark.browser
TITLES = {
    "learn_randomized_response": "Randomized response",
    "learn_laplace": "The Laplace mechanism",
    "learn_composition": "How privacy adds up",
    "learn_gibbs": "The Gibbs posterior",
}
MENU_TITLES = {entry.url_path: entry.title for entry in SECTIONS["Learn"]}


def wait_drawn(page, charts: int) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}"
        f" && document.querySelector('{IDLE}') !== null",
        timeout=TIMEOUT_MS,
    )


def open_learn_page(browser, server: str, path: str, **viewport: int):
    """A Learn page reached as a visitor does: the app's home page, then its menu entry."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000, **viewport})
    page.goto(f"{server}/?ds=diabetes&trials=2&T=100")
    wait_script_done(page)
    click_menu(page, MENU_TITLES[path])
    page.wait_for_function(
        f"() => (document.querySelector('h1') || {{innerText: ''}}).innerText.startsWith({TITLES[path]!r})",
        timeout=TIMEOUT_MS,
    )
    return page


@pytest.mark.parametrize("path", list(TITLES))
def test_every_learn_page_draws_in_the_browser(server, browser, path, tmp_path):
    page = open_learn_page(browser, server, path)
    wait_drawn(page, 2)
    assert page.locator(".js-plotly-plot .main-svg g.trace").count() >= 2
    page.screenshot(path=str(tmp_path / f"{path}.png"), full_page=True)
    assert_no_exception(page)
    page.close()


@pytest.mark.browser(long=True)
def test_live_poll_across_two_browsers(server, browser, tmp_path):
    """One answer per browser: after answering, a reload, the Back button, the link pasted again and a new tab all
    show the answer in and no buttons; another browser may answer; the teacher's count says so, in the singular."""
    teacher = open_learn_page(browser, server, "learn_randomized_response")
    teacher.get_by_role("button", name="Open a poll").click(timeout=TIMEOUT_MS)
    link_box = teacher.locator('[data-testid="stCode"]').first
    link_box.wait_for(timeout=TIMEOUT_MS)
    link = link_box.inner_text().strip()
    assert re.search(r"\?room=[A-Z2-9]{6}$", link), link
    assert "One answer per browser" in teacher.locator('[data-testid="stMain"]').inner_text()
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    student = phone.new_page()
    student.goto(link)
    student.get_by_role("button", name="Answer “yes”").click(timeout=TIMEOUT_MS)
    answered(student)
    assert "token=" not in student.url  # nothing of the answer in the address
    student.get_by_text("1 answer so far: estimated share 100% (clipped)").wait_for(timeout=TIMEOUT_MS)
    caption = student.get_by_text("From 1 randomized answer (1 “yes”)").inner_text()
    assert "estimated true share 100%" in caption  # the chart's title and the caption say the same
    student.screenshot(path=str(tmp_path / "poll_student_390.png"), full_page=True)
    student.reload()
    answered(student)
    student.goto(server)  # elsewhere in the same tab, then the Back button until the poll is back
    wait_script_done(student)
    # The explorer writes its settings into the address, in history entries of its own: how many depends on how many
    # runs it made (a fixed four Back presses once fell short). Back until the poll's address, at most the history.
    for _ in range(student.evaluate("history.length")):
        student.go_back()
        if "room=" in student.url:
            break
    assert "room=" in student.url, student.url
    answered(student)
    student.goto(link)  # the link pasted again into the same tab
    answered(student)
    answered(phone.new_page(), link)  # another tab of the same browser
    other = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    other.goto(link)
    other.get_by_role("button", name="Answer “no”").click(timeout=TIMEOUT_MS)
    answered(other)
    # No interaction on the teacher's page: the fragment refreshes every 2 s.
    teacher.get_by_text("From 2 randomized answers (1 “yes”)").wait_for(timeout=TIMEOUT_MS)
    for page in (teacher, student, other):
        assert page.locator(EXCEPTION).count() == 0
        page.close()


def answered(page, link: str | None = None) -> None:
    """The student view shows the answer in, and no button to answer again (after opening ``link`` when given)."""
    if link is not None:
        page.goto(link)
    page.get_by_text("your randomized answer is in").wait_for(timeout=TIMEOUT_MS)
    wait_script_done(page)
    assert page.get_by_role("button", name="Answer “yes”").count() == 0
    assert page.get_by_role("button", name="Answer “no”").count() == 0
