"""The relative target in a real browser: the share-of-the-gain control, α released, the R(0) notice, phone width.

Headless Chromium against ``streamlit run app.py`` (the shared browser and server fixtures). Screenshots of
each view at 1400 px and 390 px go to /tmp/accfirst_screenshots for a person to look at.
"""

from __future__ import annotations

import pytest

from tests.app.browsing import IDLE, TIMEOUT_MS, assert_no_exception, new_page, wait_script_done
from tests.app.test_browser import SCREENSHOTS

pytestmark = pytest.mark.browser

SHARE_SLIDER = '[data-testid="stSlider"]:has-text("Keep at least this share")'
SHARE_INPUT = 'input[type="range"][aria-label^="Keep at least this share"]'
TARGET_CONTROL = '[data-testid="stMain"] [data-testid="stButtonGroup"]:has-text("Share of the gain")'
WIDTHS = [(1400, 1000), (390, 844)]


def open_view(browser, url: str, width: int, height: int, text: str):
    # A tall window, so that the screenshots show the whole explorer (its main area scrolls inside the page).
    page = new_page(browser, width=width, height=height * 4)
    page.goto(url)
    page.get_by_text(text).first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)
    return page


def assert_fits(page, width: int) -> None:
    scroll = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollWidth")
    assert scroll <= width, f"the main area scrolls sideways at {width} px: {scroll}px"


def test_a_real_table_asks_for_the_share_and_says_there_is_no_signal(server, browser):
    page = open_view(browser, f"{server}/?ds=diabetes&target=kappa&trials=2&T=100", *WIDTHS[0], "No α was released")
    assert "target=kappa" in page.url and "kappa=0.2" in page.url
    page.locator(TARGET_CONTROL).wait_for(timeout=TIMEOUT_MS)
    assert "80%" in page.locator(SHARE_SLIDER).inner_text()
    assert "keep at least 80% of the gain" in page.locator('[data-testid="stMain"] h3').first.inner_text()
    at_both_widths(page, "relative_no_signal")
    assert_no_exception(page)
    page.close()


def test_alpha_is_released_and_the_share_reaches_the_url(server, browser):
    """The share moved by keyboard on a phone."""
    url = f"{server}/?ds=synthetic-intrusion&target=kappa&trials=2&T=50&methods=nr"
    page = open_view(browser, url, *WIDTHS[1], "Released α = κ·Ŝ")
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=TIMEOUT_MS)
    handle = page.locator(SHARE_INPUT)
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_url("**kappa=0.15**", timeout=TIMEOUT_MS)
    page.get_by_text("keep at least 85% of the gain").first.wait_for(timeout=TIMEOUT_MS)
    page.get_by_text("Released α = κ·Ŝ").first.wait_for(timeout=TIMEOUT_MS)
    wait_script_done(page)
    at_both_widths(page, "relative_released")
    assert_no_exception(page)
    page.close()


def at_both_widths(page, name: str) -> None:
    """The view fits at each width (the window resized, tall as in ``open_view``); a screenshot of each."""
    SCREENSHOTS.mkdir(exist_ok=True)
    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height * 4})
        assert_fits(page, width)
        page.screenshot(path=str(SCREENSHOTS / f"{name}_{width}.png"), full_page=True)


def test_the_zero_model_notice_offers_the_share(server, browser):
    url = f"{server}/?ds=diabetes&target=alpha&alpha=0.1&trials=2&T=100&methods=nr"  # R(0) ≈ 0.064 ≤ α
    page = open_view(browser, url, 390, 844, "Predicting nothing already meets this target")
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "relative_zero_model_390.png"), full_page=True)
    page.get_by_role("button", name="Ask for a share of the gain instead").click()
    page.wait_for_url("**target=kappa**", timeout=TIMEOUT_MS)
    page.get_by_text("No α was released").first.wait_for(timeout=TIMEOUT_MS)
    assert_no_exception(page)
    page.close()
