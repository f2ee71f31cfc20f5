"""Benchmark the explorer as a visitor sees it: a real Chromium against ``streamlit run``.

Starts ``streamlit run app.py`` on a free localhost port, opens the default view
(synthetic-buzz; noise reduction, doubling and theory; 20 trials) and prints:

- seconds from navigation to the first headline numbers, for the first visitor of a
  fresh server (cold: imports, data generation, every trial computed) and for a
  second visitor (warm: shared caches filled);
- seconds until the whole page (all charts) is drawn;
- seconds from moving the α slider (one keyboard step, a new α: nothing cached) to
  the first changed headline numbers, and to the complete page (median of several moves);
- the server's peak resident memory (VmHWM from /proc) after all of it.

Not a test: it prints figures. Usage: ``python benchmarks/bench_app.py [--moves 5]``.
Needs Chromium at /usr/bin/chromium (or --chromium PATH).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from streamlit_server import free_port, start_server

from tests.app.browsing import ALPHA_SLIDER, CHROMIUM_ARGS, IDLE, METRIC

CHARTS_EXPECTED = 6  # ε distribution, breakdown, two searches, excess risk, test quality


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set size (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def headline(page: Page) -> list[str]:
    return page.locator(METRIC).all_inner_texts()


def wait_complete(page: Page, timeout_ms: int = 120_000) -> None:
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot').length >= {CHARTS_EXPECTED}"
        f" && document.querySelector('{IDLE}') !== null",
        timeout=timeout_ms,
    )


def load(page: Page, url: str) -> tuple[float, float]:
    """Seconds from navigation to the first headline numbers, and to the complete page."""
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(METRIC, timeout=120_000)
    first = time.perf_counter() - started
    wait_complete(page)
    return first, time.perf_counter() - started


def step_alpha(page: Page, timeout_ms: float = 120_000) -> float:
    """One step of the α slider with the keyboard; returns when the headline numbers change (its start time)."""
    before = headline(page)
    thumb = page.locator(ALPHA_SLIDER)
    thumb.focus()
    started = time.perf_counter()
    thumb.press("ArrowRight")
    page.wait_for_function(
        f"before => {{ const t = Array.from(document.querySelectorAll('{METRIC}')).map(e => e.innerText);"
        " return t.length > 0 && JSON.stringify(t) !== JSON.stringify(before); }",
        arg=before,
        timeout=timeout_ms,
    )
    return started


def move_alpha(page: Page) -> tuple[float, float]:
    """One step of the α slider with the keyboard; seconds to changed numbers and to the complete page."""
    started = step_alpha(page)
    first = time.perf_counter() - started
    page.wait_for_timeout(50)  # let the rerun register before waiting for idle
    wait_complete(page)
    return first, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=5, help="α slider moves to time (default 5)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--screenshot", type=Path, help="also save a 1400×1900 screenshot of the default view here")
    args = parser.parse_args()
    port = free_port()
    server = start_server(port)
    url = f"http://127.0.0.1:{port}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            cold_first, cold_done = load(browser.new_page(viewport={"width": 1400, "height": 1000}), url)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            warm_first, warm_done = load(page, url)
            moves = [move_alpha(page) for _ in range(args.moves)]
            alpha = page.url.split("alpha=")[1].split("&")[0]
            if args.screenshot:
                shot = browser.new_page(viewport={"width": 1400, "height": 1900})
                load(shot, url)
                shot.wait_for_timeout(500)  # let plotly finish its transitions
                shot.screenshot(path=str(args.screenshot))
            browser.close()
        print(f"server                      : streamlit run app.py on port {port}")
        print(f"first results, cold server  : {cold_first:6.2f} s   (complete page {cold_done:.2f} s)")
        print(f"first results, warm server  : {warm_first:6.2f} s   (complete page {warm_done:.2f} s)")
        firsts = [m[0] for m in moves]
        dones = [m[1] for m in moves]
        print(
            f"after an α change (median of {len(moves)}): {statistics.median(firsts):6.2f} s to new numbers "
            f"(max {max(firsts):.2f}), {statistics.median(dones):.2f} s to the complete page (max {max(dones):.2f})"
        )
        print(f"URL after the moves         : alpha={alpha}")
        print(f"server peak RSS (VmHWM)     : {peak_rss_mb(server.pid):6.0f} MB")
        print(
            f"machine load (1/5/15 min)   : {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPU(s)"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
