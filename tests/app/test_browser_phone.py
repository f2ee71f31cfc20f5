"""What only a browser shows at phone width (390 px) and on a desktop (1400 px): the page never pans sideways, the
charts' toolbar leaves their titles alone, the held-out quality chart's titles and values fit, and the docs' tables
scroll inside their own box. Pages are reached by clicking the menu; screenshots go to ``SCREENSHOTS``.
"""

from __future__ import annotations

import itertools

import pytest

from tests.app.browsing import TIMEOUT_MS, assert_no_exception, click_menu, new_page, wait_idle, wait_script_done
from tests.app.test_browser import SCREENSHOTS

pytestmark = pytest.mark.browser
WIDTHS = [(1400, 1000), (390, 844)]
PAGE_WIDTH = (
    "Math.max(document.documentElement.scrollWidth, document.querySelector('[data-testid=\"stMain\"]').scrollWidth)"
)


@pytest.mark.browser(long=True)
def test_the_docs_tables_scroll_in_their_own_box(server, browser):
    """Every section of both docs pages opened: the widest table (545–663 px) no longer widens the page.

    The first page is reached by the menu on a desktop, the second behind the sidebar toggle on a phone; each is then
    checked at both widths by resizing the window (its layout follows the width, its content stays as drawn).
    """
    SCREENSHOTS.mkdir(exist_ok=True)
    page = new_page(browser)
    page.goto(f"{server}/?ds=diabetes&trials=2&T=100")
    wait_script_done(page)
    for title, widths in (("The mathematics", WIDTHS), ("Preparing data", WIDTHS[::-1])):
        page.set_viewport_size(dict(zip(("width", "height"), widths[0])))
        click_menu(page, title)
        summaries = page.locator('[data-testid="stMain"] [data-testid="stExpander"] summary')
        for index in range(summaries.count()):
            summaries.nth(index).click()
        wait_script_done(page)
        for width, height in widths:
            page.set_viewport_size({"width": width, "height": height})
            assert_tables_fit(page, title, width)
    page.close()


def assert_tables_fit(page, title: str, width: int) -> None:
    tables = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"] table')
    assert tables.count() > 0
    assert page.evaluate(PAGE_WIDTH) <= width, f"{title} pans sideways at {width} px"
    widest = max(tables.evaluate_all("ts => ts.map(t => t.scrollWidth)"))
    boxes = tables.evaluate_all("ts => ts.map(t => t.getBoundingClientRect()).map(b => [b.x, b.width])")
    assert all(x >= 0 and x + w <= width + 1 for x, w in boxes if w), (title, width, boxes)
    if width < 500:
        assert widest > width  # the content is wider than a phone: it scrolls inside its box
        tables.nth(0).scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"docs_table_{title.split()[-1]}_{width}.png"))
    assert_no_exception(page)


@pytest.mark.parametrize(("width", "height"), WIDTHS, ids=["desktop", "phone"])
def test_the_charts_toolbar_and_the_quality_chart_fit(server, browser, width, height):
    """On a phone Plotly's toolbar (which covered every title) is hidden; on a desktop it shows on hover. The held-out
    quality chart's panel titles do not overlap and its values are written out in full."""
    SCREENSHOTS.mkdir(exist_ok=True)
    page = new_page(browser, width=width, height=height)
    page.goto(f"{server}/?ds=synthetic-buzz&target=alpha&trials=2&T=100")
    wait_idle(page)
    chart = page.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    chart.hover()
    toolbar = chart.locator(".modebar-container")
    toolbar.wait_for(state="attached", timeout=TIMEOUT_MS)
    assert (toolbar.evaluate("e => getComputedStyle(e).display") == "none") == (width < 500)
    quality = page.locator(".js-plotly-plot").filter(has_text="Quality on the held-out test set")
    quality.scroll_into_view_if_needed()
    titles = [box for box in (quality.locator(".annotation-text").nth(i).bounding_box() for i in range(3)) if box]
    assert len(titles) == 3
    for upper, lower in itertools.pairwise(titles):
        assert upper["y"] + upper["height"] <= lower["y"], "the panels' titles overlap"
    chart_box = quality.bounding_box()
    values = quality.locator("text.bartext")
    assert values.count() >= 9
    for i in range(values.count()):
        box = values.nth(i).bounding_box()
        assert box["x"] + box["width"] <= chart_box["x"] + chart_box["width"] + 1, values.nth(i).text_content()
    assert any("," in values.nth(i).text_content() for i in range(values.count()))  # "3,358", not "3.36e+03"
    page.mouse.move(0, height - 1)
    quality.screenshot(path=str(SCREENSHOTS / f"quality_{width}.png"))
    assert page.evaluate(PAGE_WIDTH) <= width
    assert_no_exception(page)
    page.close()
