"""The Learn pages in a real browser: each reached through the app's navigation (by its URL
path, as a shared link or the menu does), drawn without an exception, and the live poll working
across two browsers with the teacher's view refreshing by itself. Needs the pages in
``app.py``'s navigation (skipped, saying so, until they are).
"""

from __future__ import annotations

import re

import pytest

from tests.app.test_browser import (  # noqa: F401 -- fixtures
    EXCEPTION,
    IDLE,
    ROOT,
    TIMEOUT_MS,
    assert_no_exception,
    browser,
    server,
)

pytestmark = pytest.mark.browser
TITLES = {
    "learn_randomized_response": "Randomized response",
    "learn_laplace": "The Laplace mechanism",
    "learn_composition": "How privacy adds up",
    "learn_gibbs": "The Gibbs posterior",
}
if "learn_" not in (ROOT / "app.py").read_text(encoding="utf-8"):
    pytest.skip("the Learn pages are not in app.py's navigation yet", allow_module_level=True)


def wait_drawn(page, charts: int) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}"
        f" && document.querySelector('{IDLE}') !== null",
        timeout=TIMEOUT_MS,
    )


def open_learn_page(browser, server: str, path: str, **viewport: int):  # noqa: F811 -- not the fixtures
    """A page of the navigation by its URL path, once the app has answered one request (so
    st.navigation, not the legacy pages/ routing, serves it)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000, **viewport})
    page.goto(server)
    page.wait_for_selector('[data-testid="stSidebar"]', timeout=TIMEOUT_MS)
    page.goto(f"{server}/{path}?ds=diabetes")
    page.wait_for_function(
        f"() => (document.querySelector('h1') || {{innerText: ''}}).innerText.startsWith({TITLES[path]!r})",
        timeout=TIMEOUT_MS,
    )
    return page


@pytest.mark.parametrize("path", list(TITLES))
def test_every_learn_page_draws_in_the_browser(server, browser, path, tmp_path):  # noqa: F811 -- imported fixtures
    page = open_learn_page(browser, server, path)
    wait_drawn(page, 2)
    assert page.locator(".js-plotly-plot .main-svg g.trace").count() >= 2
    page.screenshot(path=str(tmp_path / f"{path}.png"), full_page=True)
    assert_no_exception(page)
    page.close()


def test_live_poll_across_two_browsers(server, browser):  # noqa: F811 -- imported fixtures
    teacher = open_learn_page(browser, server, "learn_randomized_response")
    teacher.get_by_role("button", name="Open a poll").click(timeout=TIMEOUT_MS)
    link_box = teacher.locator('[data-testid="stCode"]').first
    link_box.wait_for(timeout=TIMEOUT_MS)
    link = link_box.inner_text().strip()
    assert re.search(r"\?room=[A-Z2-9]{6}$", link), link
    student = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    student.goto(link)
    student.get_by_role("button", name="Answer “yes”").click(timeout=TIMEOUT_MS)
    student.get_by_text("your randomized answer is in").wait_for(timeout=TIMEOUT_MS)
    # No interaction on the teacher's page: the fragment refreshes every 2 s.
    teacher.get_by_text("From 1 randomized answers (1 “yes”)").wait_for(timeout=TIMEOUT_MS)
    for page in (teacher, student):
        assert page.locator(EXCEPTION).count() == 0
        page.close()
