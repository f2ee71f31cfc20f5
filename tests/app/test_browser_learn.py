"""The Learn pages in a real browser: each reached by clicking the app's menu, drawn without an
exception, and the live poll working across two browsers (the student opens the teacher's link,
as a student would, and cannot answer twice by reloading) with the teacher's view refreshing by itself.
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


def test_live_poll_across_two_browsers(server, browser):
    teacher = open_learn_page(browser, server, "learn_randomized_response")
    teacher.get_by_role("button", name="Open a poll").click(timeout=TIMEOUT_MS)
    link_box = teacher.locator('[data-testid="stCode"]').first
    link_box.wait_for(timeout=TIMEOUT_MS)
    link = link_box.inner_text().strip()
    assert re.search(r"\?room=[A-Z2-9]{6}$", link), link
    assert "One answer per browser tab" in teacher.locator('[data-testid="stMain"]').inner_text()
    student = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    student.goto(link)
    student.get_by_role("button", name="Answer “yes”").click(timeout=TIMEOUT_MS)
    student.get_by_text("your randomized answer is in").wait_for(timeout=TIMEOUT_MS)
    assert "token=" in student.url  # the tab's answer token, in its address
    student.reload()  # a reload keeps the token: the tab has answered, and cannot again
    student.get_by_text("your randomized answer is in").wait_for(timeout=TIMEOUT_MS)
    assert student.get_by_role("button", name="Answer “yes”").count() == 0
    # No interaction on the teacher's page: the fragment refreshes every 2 s.
    teacher.get_by_text("From 1 randomized answers (1 “yes”)").wait_for(timeout=TIMEOUT_MS)
    for page in (teacher, student):
        assert page.locator(EXCEPTION).count() == 0
        page.close()
