"""Benchmark a classroom: N visitors on one ``streamlit run app.py``, each moving the α slider at once.

For each N (default 1, 8, 16, 30) a fresh server is started. Every visitor opens the
default view (synthetic-buzz; noise reduction, doubling and theory; 20 trials) at its own
α, waits until the page is complete, then all of them move the α slider one step at the
same moment, to α values nobody has computed. Printed per N, over the visitors:

- first numbers: seconds from the slider move to the first headline for the new α
  (trial 0 of each method), median and 90th percentile;
- complete numbers: to the final headline (medians over all 20 trials);
- complete page: to the end of the script run (every chart and the replay drawn);
- peak RSS: the largest total resident memory of the server and its worker processes,
  sampled every 0.1 s from the first visit to the last complete page.

N = 1 is measured in a real browser (headless Chromium, keyboard on the slider). Larger
N use a websocket client that speaks Streamlit's protocol (protobuf ``BackMsg`` /
``ForwardMsg`` from ``streamlit.proto``) as the browser does: one session per visitor,
the slider's new value sent as its widget state. Goals at N = 30: median first numbers
≤ 5 s, 90th percentile ≤ 8 s, peak RSS ≤ 1.5 GB.

``--arrivals`` adds two rows from one more fresh server: the first visitor after the start
opening the default view alone (the server's imports, its data and problem, the workers'
start), then a new visitor opening the same view on the now warm server (what a student
who follows the class's link waits for).

Not a test: it prints figures, which depend on the machine's other load (printed too).
Usage: ``python benchmarks/bench_sessions.py [--sessions 1,8,16,30] [--arrivals] [--chromium PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import websockets
from bench_app import CHROMIUM_ARGS, IDLE, METRIC, step_alpha
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit_server import PeakMemory, free_port, start_server

ALPHA_LABEL = "Accuracy you need"
HEADLINE_CAPTIONS = ("First results:", "Medians over")
TRIALS = 20
TIMEOUT = 600.0


@dataclass
class Timing:
    first: float
    complete: float
    page: float


# ---------------------------------------------------------------- websocket visitors
class Visitor:
    """One session over Streamlit's websocket protocol, as the browser speaks it."""

    def __init__(self, url: str, alpha: float) -> None:
        self.url, self.alpha = url, alpha
        self.slider_id: str | None = None

    async def _send_rerun(self, ws, widget_value: float | None = None) -> None:
        back = BackMsg()
        back.rerun_script.query_string = f"alpha={self.alpha:g}"
        if widget_value is not None:
            state = back.rerun_script.widget_states.widgets.add()
            state.id = self.slider_id
            state.double_array_value.data.append(widget_value)
        await ws.send(back.SerializeToString())

    async def _run(self, ws) -> tuple[list[float], float]:
        """Read one script run: times of its headline captions and of its end (since the call)."""
        started, captions = time.perf_counter(), []
        while True:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(ws.recv(), TIMEOUT))
            kind = message.WhichOneof("type")
            if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                kind_of = element.WhichOneof("type")
                if kind_of == "slider" and element.slider.label.startswith(ALPHA_LABEL):
                    self.slider_id = element.slider.id
                elif kind_of == "markdown" and element.markdown.body.startswith(HEADLINE_CAPTIONS):
                    captions.append(time.perf_counter() - started)
            elif kind == "script_finished":
                return captions, time.perf_counter() - started

    async def open(self) -> Timing:
        """Open the page alone: the headline's first and last numbers and the page's end, since the request."""
        async with websockets.connect(self.url, subprotocols=["streamlit"], max_size=None) as ws:
            await self._send_rerun(ws)
            captions, page = await self._run(ws)
        return Timing(first=captions[0], complete=captions[-1], page=page)

    async def visit_and_move(self, opened: asyncio.Barrier, moved: float) -> Timing:
        async with websockets.connect(self.url, subprotocols=["streamlit"], max_size=None) as ws:
            await self._send_rerun(ws)
            await self._run(ws)
            await opened.wait()  # every visitor's page is complete: move the sliders together
            await self._send_rerun(ws, widget_value=moved)
            captions, page = await self._run(ws)
        # The run first redraws the previous headline (kept on screen), then the new α's headlines.
        return Timing(first=captions[1], complete=captions[-1], page=page)


async def websocket_visitors(port: int, count: int) -> list[Timing]:
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    opened = asyncio.Barrier(count)
    # Distinct α per visitor (even thousandths), moved one step to odd thousandths: nothing is shared or cached.
    visitors = [Visitor(url, round(0.030 + 0.002 * i, 3)) for i in range(count)]
    return await asyncio.gather(*(v.visit_and_move(opened, round(v.alpha + 0.001, 3)) for v in visitors))


async def arrivals(port: int, alpha: float = 0.05) -> tuple[Timing, Timing]:
    """The first visitor after the server starts, then a new visitor on the warm server, alone, at the same α."""
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    first = await Visitor(url, alpha).open()
    return first, await Visitor(url, alpha).open()


# ---------------------------------------------------------------- one visitor in a browser
def browser_visitor(port: int, chromium: str) -> list[Timing]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/?alpha=0.05")
        page.wait_for_selector(METRIC, timeout=TIMEOUT * 1000)
        page.wait_for_function(f"document.querySelector('{IDLE}') !== null", timeout=TIMEOUT * 1000)
        started = step_alpha(page, TIMEOUT * 1000)
        first = time.perf_counter() - started
        page.wait_for_function(
            f"Array.from(document.querySelectorAll('[data-testid=\"stCaptionContainer\"]'))"
            f".some(e => e.innerText.startsWith('Medians over {TRIALS} trials'))",
            timeout=TIMEOUT * 1000,
        )
        complete = time.perf_counter() - started
        page.wait_for_timeout(100)
        page.wait_for_function(f"document.querySelector('{IDLE}') !== null", timeout=TIMEOUT * 1000)
        whole = time.perf_counter() - started
        browser.close()
    return [Timing(first, complete, whole)]


def run_visitors(port: int, count: int) -> list[Timing]:
    return asyncio.run(websocket_visitors(port, count))


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def on_a_fresh_server(visit: Callable[[int], list[Timing]]) -> tuple[list[Timing], float]:
    """``visit(port)`` against a server started for it; its timings and the peak RSS (MB) meanwhile."""
    port = free_port()
    server = start_server(port)
    memory = PeakMemory(server.pid)
    try:
        return visit(port), memory.peak
    finally:
        memory.stop()
        server.terminate()
        server.wait(timeout=30)


def row(label: str, client: str, timings: list[Timing], peak: float) -> str:
    first, complete, page = ([getattr(t, f) for t in timings] for f in ("first", "complete", "page"))
    return (
        f"{label:>6s} | {client:9s} | {statistics.median(first):8.1f} s / {p90(first):6.1f} s   "
        f"| {statistics.median(complete):9.1f} s / {p90(complete):6.1f} s   "
        f"| {statistics.median(page):7.1f} s / {p90(page):6.1f} s | {peak:5.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="1,8,16,30", help="comma-separated visitor counts (default 1,8,16,30)")
    parser.add_argument(
        "--arrivals",
        action="store_true",
        help="also time the first visitor after a start and then a new visitor on the warm server (websocket)",
    )
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    counts = [int(n) for n in args.sessions.split(",") if n]
    print(f"{os.cpu_count()} CPU(s); load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    header = (
        "     N | client    | first numbers med / p90 | complete numbers med / p90 | complete page med / p90 | peak RSS"
    )
    rows = []
    for count in counts:
        if count == 1:
            timings, peak = on_a_fresh_server(functools.partial(browser_visitor, chromium=args.chromium))
        else:
            timings, peak = on_a_fresh_server(functools.partial(run_visitors, count=count))
        rows.append(row(str(count), "browser" if count == 1 else "websocket", timings, peak))
        print(rows[-1], f"(load {os.getloadavg()[0]:.1f})", flush=True)
    if args.arrivals:
        (start, warm), peak = on_a_fresh_server(lambda port: list(asyncio.run(arrivals(port))))
        rows += [row("start", "websocket", [start], peak), row("warm", "websocket", [warm], peak)]
        print(*rows[-2:], f"(load {os.getloadavg()[0]:.1f})", sep="\n", flush=True)
    print("\n" + header + "\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
