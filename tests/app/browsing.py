"""The app in a real browser, for the browser tests: the server, Chromium and what a visitor does.

``streamlit_server`` runs ``streamlit run app.py`` on a free port; ``SharedChromium``
starts Debian's Chromium through Playwright once per test process, or skips the test (fails in
CI, ``CI=true``) when it is missing. The page helpers wait on conditions, never on fixed sleeps:
``wait_settled`` waits until a script run that started after an action has ended *and* the page
shows only that run's elements (the browser keeps an earlier run's elements, marked stale, until then),
without waiting for the charts to finish drawing.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
METRIC = '[data-testid="stMetricValue"]'
ALPHA_SLIDER = 'input[type="range"][aria-label^="Accuracy you need"]'
EXCEPTION = '[data-testid="stException"]'
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
NAV_LINK = '[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]'
EXPAND_SIDEBAR = '[data-testid="stExpandSidebarButton"]'
COLLAPSE_SIDEBAR = '[data-testid="stSidebarCollapseButton"] button'
TIMEOUT_MS = 120_000  # a cold server on a busy shared machine can take a minute to draw its first page
# Installed in every page before the app loads: the number of script runs the page has seen end, and the time of
# its last change.
WATCH_RUNS = """
window.__runsDone = 0;
window.__lastChange = performance.now();
new MutationObserver(records => {
  window.__lastChange = performance.now();
  for (const record of records) {
    if (record.attributeName === 'data-test-script-state' && record.oldValue !== 'notRunning'
        && record.target.getAttribute('data-test-script-state') === 'notRunning') {
      window.__runsDone += 1;
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true, attributeOldValue: true});
"""
QUIET_MS = 300
# The script idle, no element left over from an earlier run (Streamlit marks them stale until the run that replaces
# them ends), every lazily loaded widget drawn (a skeleton stands in until its code arrives), and either a run that
# ended after the first ``since`` or, for a run too quick to show (React draws its start and end at once), nothing
# changed for QUIET_MS.
SETTLED = f"""since => document.querySelector('{IDLE}') !== null
  && document.querySelector('[data-stale="true"]') === null
  && document.querySelector('[data-testid="stSkeleton"]') === null
  && (window.__runsDone > since || performance.now() - window.__lastChange > {QUIET_MS})"""
# Two animation frames: the page's last update is painted.
PAINTED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
TITLE = '[data-testid="stMain"] h1'


def unavailable(reason: str) -> None:
    """Skip a browser test (fail it in CI: there the browser must be installed)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests must run in CI: {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def streamlit_command(port: int, *options: str) -> list[str]:
    """``streamlit run app.py`` headless on localhost ``port``, with extra command-line ``options`` (the benchmarks too)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        *options,
    ]


@contextmanager
def streamlit_server() -> Iterator[tuple[str, int]]:
    """``streamlit run app.py`` on a free localhost port; yields its URL and process id."""
    port = _free_port()
    process = subprocess.Popen(streamlit_command(port), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = process.stdout.read().decode(errors="replace") if process.stdout else ""
                    pytest.fail(f"streamlit did not start:\n{output[-3000:]}")
                time.sleep(0.2)
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def require_browser() -> None:
    """Skip (or, in CI, fail) unless Chromium and Playwright are installed."""
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} not found")
    try:
        import playwright.sync_api  # noqa: F401 -- only whether it imports
    except ImportError:
        unavailable("playwright is not installed")


class SharedChromium:
    """One headless Chromium (Debian's, through Playwright) for every browser test of a test process.

    Started by the first test that asks for it, kept for the next ones, and stopped before any
    other test: while Playwright's synchronous API is started it marks an asyncio event loop as
    running in the main thread, which breaks any other test that uses asyncio there. The browser
    tests therefore run last in each process (``tests/conftest.py`` orders them), so it starts once.
    """

    def __init__(self) -> None:
        self._playwright = None
        self._browser = None

    def get(self):
        """The running browser, started now if it is not (skips when Chromium or Playwright is missing)."""
        if self._browser is None:
            require_browser()
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        return self._browser

    def close_contexts(self) -> None:
        """Close every tab and context a test opened, whether or not it closed them itself."""
        if self._browser is not None:
            for context in self._browser.contexts:
                context.close()

    def stop(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._playwright.stop()
            self._browser = self._playwright = None


def new_page(browser, *, width: int = 1400, height: int = 1000):
    """A fresh tab that counts the script runs it sees end and records its last change (for ``wait_settled``)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.add_init_script(WATCH_RUNS)
    return page


def open_page(browser, url: str, *, width: int = 1400, height: int = 1000):
    page = new_page(browser, width=width, height=height)
    page.goto(url)
    page.wait_for_selector(METRIC, timeout=TIMEOUT_MS)
    return page


def runs_done(page) -> int:
    """How many script runs the page (a ``new_page``) has seen end since it was loaded."""
    return page.evaluate("window.__runsDone")


def wait_settled(page, ready: str | None = None, *, since: int = 0) -> None:
    """Until a script run ends after the first ``since`` the page has seen (or, for a run too quick to see, the page
    is quiet), and the page shows that run's elements only, drawn (after ``ready`` is drawn). ``since`` is 0 after a
    load: the load's own run."""
    if ready:
        page.wait_for_selector(ready, timeout=TIMEOUT_MS)
    page.wait_for_function(SETTLED, arg=since, timeout=TIMEOUT_MS, polling="raf")
    page.evaluate(PAINTED)


def wait_idle(page, charts: int = 6) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}"
        f" && document.querySelector('{IDLE}') !== null",
        timeout=TIMEOUT_MS,
    )


def wait_script_done(page) -> None:
    page.wait_for_timeout(100)  # let a rerun that was just triggered register first
    page.wait_for_selector(IDLE, timeout=TIMEOUT_MS)


def headline(page) -> list[str]:
    return page.locator(METRIC).all_inner_texts()


def query(page) -> dict[str, list[str]]:
    """The page's query parameters (blank values kept)."""
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query, keep_blank_values=True)


def assert_no_exception(page) -> None:
    assert page.locator(EXCEPTION).count() == 0
    assert "Traceback" not in page.locator("body").inner_text()


def on_screen(locator) -> bool:
    """Visible inside the viewport (a collapsed sidebar is drawn off screen, to the left)."""
    box = locator.bounding_box()
    return box is not None and box["x"] >= 0 and box["width"] > 0


def click_menu(page, title: str) -> None:
    """Open the page ``title`` from the menu, as a visitor would (the sidebar toggle first on a phone)."""
    link = page.locator(NAV_LINK).filter(has_text=title)
    behind_toggle = not on_screen(link)
    if behind_toggle:
        page.locator(EXPAND_SIDEBAR).click()
        page.wait_for_function(
            "link => link.getBoundingClientRect().x >= 0", arg=link.element_handle(), timeout=TIMEOUT_MS
        )
    target = link.get_attribute("href").split("?")[0].rstrip("/")
    link.click()
    # Under load the click's rerun can start after a short wait: wait for the page's address first.
    page.wait_for_url(lambda url: url.split("?")[0].rstrip("/") == target, timeout=TIMEOUT_MS)
    wait_script_done(page)
    if behind_toggle and on_screen(link):  # close the menu again to see the page
        page.locator(COLLAPSE_SIDEBAR).click()
        page.wait_for_function(
            "link => link.getBoundingClientRect().x < 0", arg=link.element_handle(), timeout=TIMEOUT_MS
        )


def link_notices(page):
    """The page's notices of ignored link settings (``ui.link_notice``): there should be at most one."""
    title = page.locator("summary", has_text=re.compile(r"^\s*\S*\s*\d+ settings? of the link could not be used"))
    return page.locator('[data-testid="stExpander"]').filter(has=title)


def read_link_notice(page) -> str:
    """Open the page's one notice of ignored link settings; its text as shown (word joiners removed)."""
    notices = link_notices(page)
    assert notices.count() == 1, f"{notices.count()} notices of ignored link settings"
    notice = notices.first
    if notice.locator("details[open]").count() == 0:
        notice.locator("summary").click()
    notice.locator('[data-testid="stMarkdownContainer"] li').first.wait_for(timeout=TIMEOUT_MS)
    return notice.inner_text().replace("\u2060", "")
