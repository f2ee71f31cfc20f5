"""The offline ``report.html`` in a real browser (headless Chromium, no server): phone width, dark preference.

What only a browser shows: at 390 px the page does not scroll sideways and no chart title
is cut off; under a dark colour-scheme preference the page and its charts render dark, and
under a light one light. Skipped only when Chromium is missing outside CI (as the app's
browser tests). About 30 s on a busy two-core machine, mostly launching Chromium and
loading plotly.js three times.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from accfirst import run_trials
from accfirst.plots.paper import html_report

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
CHARTS = 6
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def report(tmp_path_factory, ridge_problem):
    results = run_trials(ridge_problem, [0.02, 0.05, 0.1], 0.1, ["nr", "doubling", "theory"], 3, 0, T=100)
    settings = {"command": "accfirst sweep --dataset synthetic-buzz --alphas 0.005:0.2:0.005 --trials 20", "T": 100}
    steps = ["divided every feature by 145.726, the largest ℓ1 norm of a training row (not private)"]
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(html_report(results, settings, steps), encoding="utf-8")
    return path


def _open(browser, report, scheme: str):
    page = browser.new_page(viewport=PHONE, color_scheme=scheme)
    page.goto(report.as_uri())
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {CHARTS}"
        " && document.readyState === 'complete'",
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(300)  # the theme script re-renders the charts on load
    return page


def _brightness(png: bytes) -> float:
    """Mean grey level (0 black … 255 white) of a screenshot."""
    return float(np.asarray(Image.open(io.BytesIO(png)).convert("L")).mean())


def _grey(color: str) -> float:
    """Mean channel (0 … 255) of a CSS colour written ``#rrggbb`` or ``rgb(r, g, b)``."""
    if color.startswith("#"):
        return sum(int(color[i : i + 2], 16) for i in (1, 3, 5)) / 3
    return sum(float(part) for part in color[color.index("(") + 1 : color.index(")")].split(",")[:3]) / 3


def test_report_fits_a_phone(browser, report):
    page = _open(browser, report, "light")
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1] == PHONE["width"], widths
    titles = page.locator(".js-plotly-plot .gtitle")
    assert titles.count() >= CHARTS
    for i in range(titles.count()):
        box = titles.nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (titles.nth(i).inner_text(), box)
    page.close()


@pytest.mark.parametrize(("scheme", "dark"), [("dark", True), ("light", False)])
def test_report_follows_the_colour_scheme(browser, report, scheme, dark):
    page = _open(browser, report, scheme)
    page_brightness = _brightness(page.screenshot())
    chart = page.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    chart_brightness = _brightness(chart.screenshot())
    # The chart's text: light on a dark page, dark on a light one (a transparent chart alone would pass).
    ink = _grey(page.evaluate("document.querySelector('.js-plotly-plot')._fullLayout.font.color"))
    page.close()
    if dark:
        assert page_brightness < 60 and chart_brightness < 60 and ink > 200, (page_brightness, chart_brightness, ink)
    else:
        assert page_brightness > 200 and chart_brightness > 200 and ink < 100, (page_brightness, chart_brightness, ink)
