"""The app in a real browser: headless Chromium against ``streamlit run app.py``.

What only a browser shows: the menu reaches every page by clicking (desktop, and behind
the sidebar toggle at phone width), the page loads and draws its plotly charts, moving
the α slider reaches the URL, an upload through the file input works, the layout holds
at phone width, a shared link to the sweep page works as a fresh server's first request
and runs a sweep, and no exception box ever appears. Skipped only when Chromium is missing
outside CI; in CI (``CI=true``) a missing browser is a failure.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.app.browsing import (
    ALPHA_SLIDER,
    COLLAPSE_SIDEBAR,
    EXPAND_SIDEBAR,
    IDLE,
    METRIC,
    NAV_LINK,
    TIMEOUT_MS,
    TITLE,
    assert_no_exception,
    click_menu,
    headline,
    new_page,
    on_screen,
    open_page,
    read_link_notice,
    streamlit_server,
    wait_idle,
    wait_script_done,
    wait_settled,
)
from tests.data import parquet_bomb
from ui.navigation import SECTIONS

pytestmark = pytest.mark.browser


def block_outside(page) -> list[str]:
    """Refuse every request to another host than the app's (localhost); the list of those refused, filled as it
    browses."""
    refused: list[str] = []

    def route(request_route) -> None:
        url = request_route.request.url
        if url.startswith(("data:", "blob:")) or urllib.parse.urlparse(url).hostname in ("127.0.0.1", "localhost"):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    page.route("**/*", route)
    return refused


WIDTHS = [(1400, 1000), (390, 844)]


def resize(page, width: int, height: int) -> None:
    """The window at ``width`` × ``height``, its menu as a visitor finds it there (behind the toggle on a phone)."""
    page.set_viewport_size({"width": width, "height": height})
    if width < 500 and on_screen(page.locator(NAV_LINK).first):
        page.locator(COLLAPSE_SIDEBAR).click()
        page.wait_for_function(
            "link => link.getBoundingClientRect().x < 0", arg=page.locator(NAV_LINK).first.element_handle()
        )


@pytest.mark.browser(long=True)
def test_the_menu_reaches_every_page(server, browser, tmp_path):
    """Every page of ``ui.navigation.SECTIONS`` in menu order, reached only by clicking the menu, in turn behind the
    sidebar toggle on a phone and on a desktop; each page is then checked at both widths (the window resized). The app
    fetches nothing from another server, and the Data sidebar shows only on the pages that run on the data."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    outside = block_outside(page)
    page.goto(f"{server}/?ds=diabetes&trials=2&T=100")
    wait_script_done(page)
    assert not on_screen(page.locator(NAV_LINK).first), "on a phone the menu sits behind the sidebar toggle"
    entries = [entry for entries in SECTIONS.values() for entry in entries]
    for number, entry in enumerate([*entries[1:], entries[0]]):  # the default page last: where the visit started
        order = WIDTHS[::-1] if number % 2 == 0 else WIDTHS
        resize(page, *order[0])
        click_menu(page, entry.title)
        assert page.url.split("?")[0].rstrip("/") == f"{server}/{entry.url_path}".rstrip("/"), entry
        assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip(), f"{entry.title} drew no title"
        assert page.title().startswith("accfirst") or entry.title in page.title()
        for width, height in order:
            resize(page, width, height)
            assert_no_exception(page)
            dataset = page.locator('[data-testid="stSidebar"]').get_by_text("Dataset", exact=True)
            assert dataset.count() == 1 and dataset.is_visible() == entry.data, f"{entry.title}: Data sidebar shown?"
            page.screenshot(path=str(tmp_path / f"{entry.url_path or 'home'}_{width}.png"))
    menu = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert all(section in menu for section in SECTIONS if section), menu
    assert outside == [], f"requests to other servers: {outside}"
    page.close()


def test_the_default_view_loads_and_draws_its_charts(server, browser):
    page = open_page(browser, server)
    wait_idle(page)
    assert page.locator("h1").first.inner_text().startswith("Set the accuracy you need")
    values = headline(page)
    assert len(values) == 2 and all(values), values  # ε and e^ε of the certified R² target's one card
    # Plotly drew real SVG with data, not empty placeholders.
    assert page.locator(".js-plotly-plot .main-svg g.trace").count() >= 3  # ε across runs; in-sample and held out
    assert_no_exception(page)
    page.close()


def test_moving_alpha_reaches_the_url_and_the_numbers(server, browser):
    page = open_page(browser, f"{server}/?ds=diabetes&target=alpha&trials=4&T=200")
    wait_idle(page)
    before = headline(page)
    slider = page.locator(ALPHA_SLIDER)
    slider.focus()
    slider.press("ArrowRight")
    slider.press("ArrowRight")
    page.wait_for_url("**alpha=0.052**", timeout=TIMEOUT_MS)
    page.wait_for_function(
        f"before => {{ const t = Array.from(document.querySelectorAll('{METRIC}')).map(e => e.innerText);"
        " return t.length > 0 && JSON.stringify(t) !== JSON.stringify(before); }",
        arg=before,
        timeout=TIMEOUT_MS,
    )
    wait_idle(page)
    assert "excess risk ≤ 0.052" in page.locator('[data-testid="stMain"] h3').first.inner_text()
    assert_no_exception(page)
    page.close()


def _csv() -> bytes:
    rng = np.random.default_rng(11)
    frame = pd.DataFrame(rng.exponential(size=(250, 3)), columns=["a", "b", "c"])
    frame["target"] = frame["a"] - 0.5 * frame["b"] + rng.normal(scale=0.2, size=250)
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def test_an_upload_runs_in_the_browser(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/?ds=upload&target=alpha&trials=3&T=200&alpha=0.1")
    file_input = page.locator('[data-testid="stSidebar"] input[type="file"]')
    file_input.wait_for(state="attached", timeout=TIMEOUT_MS)
    file_input.set_input_files({"name": "browser_upload.csv", "mimeType": "text/csv", "buffer": _csv()})
    page.wait_for_selector(METRIC, timeout=TIMEOUT_MS)
    wait_idle(page)
    assert "browser_upload.csv" in page.locator('[data-testid="stSidebar"]').inner_text()
    assert len(headline(page)) == 6
    assert_no_exception(page)
    page.close()


def test_phone_width_has_no_overflow_or_overlapping_controls(server, browser, tmp_path):
    page = open_page(browser, f"{server}/?ds=diabetes&target=alpha&trials=4&T=200", width=390, height=844)
    wait_idle(page)
    width = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollWidth")
    assert width <= 390, f"the main area scrolls sideways at 390 px: {width}px"
    groups = page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"]')
    boxes = [
        groups.filter(has_text="Excess risk α").bounding_box(),  # the kind of target
        page.locator('[data-testid="stSlider"]').filter(has=page.locator(ALPHA_SLIDER)).bounding_box(),
        groups.filter(has_text="Noise reduction").bounding_box(),  # the methods
        page.locator('[data-testid="stMetric"]').first.bounding_box(),
    ]
    for upper, lower in itertools.pairwise(boxes):
        assert upper["y"] + upper["height"] <= lower["y"] + 1, f"controls overlap at phone width: {upper} / {lower}"
        assert upper["x"] >= 0 and upper["x"] + upper["width"] <= 390 + 1
    page.screenshot(path=str(tmp_path / "explorer_390.png"))
    assert_no_exception(page)
    page.close()


SCREENSHOTS = Path("/tmp/accfirst_screenshots")


def test_a_preset_sets_the_view_and_states_the_saving(server, browser):
    """The Classroom demo preset, clicked as a teacher would on a phone: the settings, the ranking sentence, no
    overflow at 390 px and, the window resized, at 1400 px."""
    page = open_page(browser, f"{server}/?ds=diabetes&target=alpha&trials=2&T=100", width=390, height=844)
    wait_idle(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_role("button", name="Classroom demo", exact=True).click()
    page.wait_for_url("**alpha=0.1**", timeout=TIMEOUT_MS)
    assert all(f"{part}&" in page.url for part in ("ds=synthetic-buzz", "trials=20", "T=100"))  # defaults again
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('Noise reduction paid')",
        timeout=TIMEOUT_MS,
    )
    wait_idle(page)
    text = main.inner_text()
    assert "Least privacy first: Noise reduction" in text and "less privacy than doubling" in text
    assert "excess risk ≤ 0.1" in text and "On this data, an excess risk of α = 0.1" in text
    SCREENSHOTS.mkdir(exist_ok=True)
    for width, height in WIDTHS[::-1]:
        page.set_viewport_size({"width": width, "height": height})
        assert page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollWidth") <= width
        for name in ("Classroom demo", "Paper's Figure 1 settings", "Your data"):
            assert on_screen(main.get_by_role("button", name=name, exact=True)), (name, width)
        page.mouse.move(0, height - 1)  # no tooltip over the page
        page.screenshot(path=str(SCREENSHOTS / f"classroom_demo_{width}.png"), full_page=False)
    assert_no_exception(page)
    page.close()


CRAFTED = "[Session expired - sign in](https://evil.example) ![t](http://host/t.png) www.evil.example"
OUTSIDE = """() => Array.from(document.querySelectorAll('a[href], img[src], image[href]'))
    .map(e => e.href?.baseVal ?? e.href ?? e.src).filter(u => u && new URL(u, location.href).host !== location.host)"""


def assert_nothing_outside(page) -> None:
    """No link and no image on the page points to another host (Markdown from a visitor stays text)."""
    assert page.evaluate(OUTSIDE) == []


def test_a_crafted_link_shows_its_values_as_text(server, browser):
    query = urllib.parse.urlencode({"alpha": CRAFTED, "ds": CRAFTED, "methods": CRAFTED, "trials": "2", "T": "100"})
    page = new_page(browser)
    page.goto(f"{server}/?{query}")
    wait_settled(page, TITLE)
    text = read_link_notice(page)
    assert "alpha must be a number; got '[Session expired - sign in](https://evil" in text
    assert "ds must be one of" in text and "methods may contain" in text
    assert_nothing_outside(page)
    page.goto(f"{server}/sweep?{urllib.parse.urlencode({'alphas': CRAFTED * 20, 'ds': 'diabetes'})}")
    wait_settled(page, TITLE)
    [line] = [line for line in read_link_notice(page).splitlines() if "alphas" in line]
    assert "Session expired" in line and len(line) < 300, line  # a 1.6 kB value is echoed cut short
    assert_nothing_outside(page)
    assert_no_exception(page)
    page.close()


def test_hostile_column_names_stay_text_in_the_data_report(server, browser):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        rng.normal(size=(60, 2)), columns=["`a` <img src=http://host/t.png>", "[b](https://evil.example)"]
    )
    frame["**note** ![t](http://host/t.png)"] = "text"  # not numeric: dropped, with its name in the report
    frame["![y](http://host/y.png)"] = frame.iloc[:, 0] + rng.normal(scale=0.1, size=60)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/?ds=upload&target=alpha&trials=2&T=100")
    file_input = page.locator('[data-testid="stSidebar"] input[type="file"]')
    file_input.wait_for(state="attached", timeout=TIMEOUT_MS)
    csv = frame.to_csv(index=False).encode()
    file_input.set_input_files({"name": "[x](https://evil.example).csv", "mimeType": "text/csv", "buffer": csv})
    page.wait_for_selector(METRIC, timeout=TIMEOUT_MS)
    wait_script_done(page)
    report = page.locator('[data-testid="stMain"] [data-testid="stExpander"]').first.inner_text().replace("\u2060", "")
    assert "target: ![y](http://host/y.png)" in report, report
    assert "[x](https://evil.example).csv" in report
    assert_nothing_outside(page)
    assert_no_exception(page)
    page.close()


def test_an_upload_over_the_memory_limit_is_refused_with_its_reason(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/?ds=upload")
    file_input = page.locator('[data-testid="stSidebar"] input[type="file"]')
    file_input.wait_for(state="attached", timeout=TIMEOUT_MS)
    # 100,000 × 300 zeros: a 0.2 MB file, 229 MB as numbers (the app's limit is 150 MB).
    bomb = parquet_bomb(rows=100_000)
    file_input.set_input_files({"name": "bomb.parquet", "mimeType": "application/octet-stream", "buffer": bomb})
    message = "'bomb.parquet' would take 229 MB in memory (100,000 rows × 300 columns × 8 bytes); the limit is 150 MB"
    page.locator('[data-testid="stMain"] [data-testid="stAlert"]').filter(has_text=message).wait_for(timeout=TIMEOUT_MS)
    assert message in page.locator('[data-testid="stSidebar"]').inner_text()
    # A file over the upload size never reaches the server; Streamlit's reason is shown, not only on hover.
    big = tmp_path / "big.csv"
    big.write_bytes(b"a,b\n" + b"1,2\n" * 14_000_000)  # 56 MB
    file_input.set_input_files(str(big))
    reason = page.locator('[data-testid="stFileChip"] [role="alert"]')
    reason.wait_for(timeout=TIMEOUT_MS)
    assert "must be 50.0MB or smaller" in reason.inner_text()
    box = reason.bounding_box()
    assert box is not None and box["height"] >= 10 and box["width"] >= 100, box
    page.screenshot(path=str(tmp_path / "upload_refused.png"))
    assert_no_exception(page)
    page.close()


def test_a_link_to_the_sweep_page_works_as_a_fresh_servers_first_request(browser):
    """Streamlit routes that request around app.py (legacy pages/ mode); the page draws the frame."""
    with streamlit_server() as (url, _):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/sweep?ds=diabetes&alphas=0.05,0.1&methods=nr,doubling&trials=2&T=100")
        page.get_by_role("button", name="Run sweep").click(timeout=TIMEOUT_MS)
        page.wait_for_function(
            "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1"
            f" && document.querySelector('{IDLE}') !== null",
            timeout=TIMEOUT_MS,
        )
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "Dataset" in sidebar and "diabetes" in sidebar.lower()
        menu = page.locator(NAV_LINK).all_inner_texts()  # the app's menu, not the files of pages/
        assert [text.split("\n")[-1] for text in menu] == [e.title for es in SECTIONS.values() for e in es]
        assert page.locator("h1").first.inner_text().startswith("α sweep")
        assert "Done: 8 runs" in page.locator("body").inner_text()
        assert_no_exception(page)
        page.close()


def cpu_seconds_of_children(pid: int) -> float:
    """CPU time (user + system) used so far by the direct children of ``pid``: the server's worker processes."""
    ticks = os.sysconf("SC_CLK_TCK")
    children = " ".join(Path(task, "children").read_text() for task in Path(f"/proc/{pid}/task").iterdir()).split()
    total = 0.0
    for child in children:
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # exited meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def workers_cpu_over(page, pid: int, seconds: float) -> float:
    """CPU seconds the server's workers use in the next ``seconds``."""
    before = cpu_seconds_of_children(pid)
    page.wait_for_timeout(seconds * 1000)
    return cpu_seconds_of_children(pid) - before


# A quiet window after Stop: long enough to hold several of the sweep's runs (about 0.5 s each on a quiet machine).
WINDOW_S = 2.0
# How long the runs in progress at Stop may take to notice it and end, on a loaded machine.
SETTLE_S = 30.0


@pytest.mark.browser(long=True)
def test_stop_ends_a_sweep_and_its_workers(served, browser):
    """A 400-run sweep (~2 min on 2 cores) is confirmed, started, then stopped: the workers go idle.

    Measured against the workers themselves, so that the load of the machine cancels: while the sweep
    runs, a window of WINDOW_S gives what two busy workers use; after Stop, the runs in progress may take
    a while to end (longer on a loaded machine), so the test waits up to SETTLE_S for one window in which
    the workers use less than a quarter of that. Workers that kept running would use about as much in
    every window for the minute and more the rest of the sweep takes, so the test fails then.
    """
    url, pid = served
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/sweep?ds=diabetes&methods=nr&trials=10&T=10000")
    page.get_by_role("button", name="Run sweep").click(timeout=TIMEOUT_MS)
    # The page asks for a go-ahead when its estimate (timed from one run each, so machine-dependent) is long.
    confirm = page.get_by_role("button", name="Run it")
    running = page.get_by_text(re.compile(r"Sweep: \d+ of 400 runs"))
    confirm.or_(running).first.wait_for(timeout=TIMEOUT_MS)
    if confirm.is_visible():
        confirm.click()
    page.wait_for_function("() => /Sweep: [1-9][0-9]* of 400 runs/.test(document.body.innerText)", timeout=TIMEOUT_MS)
    busy = workers_cpu_over(page, pid, WINDOW_S)
    assert busy > 0.1, f"the workers used {busy:.2f} CPU seconds in {WINDOW_S} s of a running sweep"
    page.locator('[data-testid="stMain"]').get_by_role("button", name="Stop", exact=True).click()
    page.get_by_text("The sweep was stopped after").wait_for(timeout=TIMEOUT_MS)
    deadline = time.monotonic() + SETTLE_S
    while (used := workers_cpu_over(page, pid, WINDOW_S)) >= busy / 4:
        assert time.monotonic() < deadline, (
            f"the workers still used {used:.2f} CPU seconds in {WINDOW_S} s, {SETTLE_S:.0f} s after Stop"
            f" ({busy:.2f} while the sweep ran)"
        )
    assert_no_exception(page)
    page.close()


def test_the_bound_on_the_models_size_shows_where_the_privacy_went(server, browser):
    """The private radius under the authors' calibration (which keeps unit rows: with the row bound ρ the default test
    is so cheap on the built-in sets that the whole bill outweighs the check alone on M, and the card says no saving):
    three parts on the card and the saving in words, at 1400 px and (the window resized) at 390 px; R₀ only is one
    click on the phone (URL rmode)."""
    page = open_page(browser, f"{server}/?ds=synthetic-buzz&target=alpha&cal=paper-code&trials=3&methods=nr")
    wait_idle(page, charts=4)
    main = page.locator('[data-testid="stMain"]')
    text = main.inner_text()
    assert "Where it went (medians): the bound on the model's size" in text and "the check" in text
    assert "Without a bound on the model's size the accuracy check alone would have cost" in text
    assert "with a bound bought privately" in text and "less privacy for the same accuracy" in text
    SCREENSHOTS.mkdir(exist_ok=True)
    for width, height in WIDTHS:
        resize(page, width, height)
        assert page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollWidth") <= width
        page.mouse.move(0, height - 1)
        page.screenshot(path=str(SCREENSHOTS / f"private_radius_{width}.png"), full_page=False)
    page.locator(EXPAND_SIDEBAR).click()
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("R₀ only", exact=False).first.click()
    page.wait_for_url("**rmode=free**", timeout=TIMEOUT_MS)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('at no cost')",
        timeout=TIMEOUT_MS,
    )
    assert_no_exception(page)
    page.close()
