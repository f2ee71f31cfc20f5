"""The explorer's default target in a real browser: reached from another page by clicking the menu, at 1400 px and on a
390 px phone, its one card (the whole ε, λ chosen privately, the certified R², the held-out R², both labelled
evaluation only) and its controls fit the width. Screenshots go to /tmp/accfirst_screenshots for a person to look at.
"""

from __future__ import annotations

import pytest

from tests.app.browsing import METRIC, TIMEOUT_MS, assert_no_exception, click_menu, new_page, wait_script_done
from tests.app.test_browser import SCREENSHOTS
from ui.text import EVALUATION_LABEL

pytestmark = pytest.mark.browser

WIDTHS = [(1400, 1000), (390, 844)]
TARGET_CONTROL = '[data-testid="stMain"] [data-testid="stButtonGroup"]:has-text("R² / accuracy")'


def test_the_explorer_reached_by_clicking_certifies_r2_on_one_card_that_fits(server, browser):
    """Reached by the menu behind the sidebar toggle on a phone, then checked at 390 px and (the window resized) at
    1400 px."""
    # A tall window, so that the screenshot shows the card and the charts below it.
    width, height = WIDTHS[1]
    page = new_page(browser, width=width, height=height * 3)
    page.goto(f"{server}/glossary")
    wait_script_done(page)
    click_menu(page, "Explorer")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Held-out R²").first.wait_for(timeout=TIMEOUT_MS)
    wait_script_done(page)
    text = main.inner_text()
    assert "What it paid to certify R² ≥ 0.8" in text
    assert "Noise reduction certifies a target in R² or accuracy" in text
    assert "λ chosen privately" in text and "met in-sample" in text
    assert text.count(EVALUATION_LABEL) >= 2, text
    metric = main.locator(METRIC).first
    metric.wait_for(state="visible", timeout=TIMEOUT_MS)  # the headline is redrawn as the last runs arrive
    assert metric.inner_text().strip()
    SCREENSHOTS.mkdir(exist_ok=True)
    for width, height in WIDTHS[::-1]:
        page.set_viewport_size({"width": width, "height": height * 3})
        # Each kind of target whole on screen (a segmented control hides the options that overflow it).
        buttons = page.locator(TARGET_CONTROL).locator("button")
        options = [buttons.filter(has_text=label) for label in ("R² / accuracy", "Share of the gain", "Excess risk α")]
        boxes = [option.bounding_box() for option in options] + [metric.bounding_box()]
        assert all(box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1 for box in boxes), boxes
        assert page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollWidth") <= width
        page.mouse.move(0, height - 1)
        page.screenshot(path=str(SCREENSHOTS / f"target_{width}.png"))
    assert_no_exception(page)
    page.close()
