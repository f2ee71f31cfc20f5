"""Benchmark an upload's memory on the server: its peak, and what is left when the session ends.

Starts ``streamlit run app.py`` (sessions of closed tabs dropped after 5 s instead of
120), opens the default view once (so the worker processes run), then in a real browser
uploads (1) the largest table the app accepts — a zstd Parquet file of 62,000 rows × 300
columns, 142 MB as numbers against the app's 150 MB limit — and lets the explorer run on
it (theory method, one trial: the work is the reading, preparing and problem building),
and (2) a Parquet bomb (500,000 × 300 zeros, under 1 MB, 1.1 GB as numbers), which is
refused. After each, the tab is closed and its session expires; Streamlit drops expired
sessions when its session store is next used, and Python frees the session's objects
at its next full garbage collection, so other visitors then come and go. Prints the
total resident memory of the server and its workers: before, at the peak, and after one
and after two later visitors.

Not a test: it prints figures. Usage: ``python benchmarks/bench_upload_memory.py``.
"""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_app import CHROMIUM_ARGS, METRIC
from streamlit_server import PeakMemory, free_port, start_server, tree_rss_mb

from tests.data import parquet_bomb

SESSION_TTL = 5


def largest_table(rows: int = 62_000, columns: int = 300) -> bytes:
    """Small whole numbers (compress well) in float64: ``rows × columns × 8`` bytes in memory."""
    rng = np.random.default_rng(0)
    part = pa.table({f"x{i}": rng.integers(0, 10, rows // 10).astype(float) for i in range(columns)})
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, part.schema, compression="zstd") as writer:
        for _ in range(10):
            writer.write_table(part)
    return buffer.getvalue()


def upload(browser, port: int, name: str, content: bytes, wait_for: str) -> None:
    """One visitor uploads ``content`` and waits for ``wait_for`` (a selector), then closes the tab."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{port}/?ds=upload&methods=theory&trials=1")
    file_input = page.locator('[data-testid="stSidebar"] input[type="file"]')
    file_input.wait_for(state="attached", timeout=120_000)
    file_input.set_input_files({"name": name, "mimeType": "application/octet-stream", "buffer": content})
    page.wait_for_selector(wait_for, timeout=600_000)
    context.close()


def visit(browser, port: int) -> None:
    """A visitor opens the default view and leaves."""
    page = browser.new_page()
    page.goto(f"http://127.0.0.1:{port}/")
    page.wait_for_selector(METRIC, timeout=300_000)
    page.close()


def main() -> None:
    cases = [
        ("largest accepted table", "table.parquet", largest_table(), METRIC),
        ("Parquet bomb", "bomb.parquet", parquet_bomb(), '[data-testid="stMain"] [data-testid="stAlert"]'),
    ]
    port = free_port()
    server = start_server(port, "--server.disconnectedSessionTTL", str(SESSION_TTL))
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            visit(browser, port)
            time.sleep(SESSION_TTL + 1)
            visit(browser, port)
            print(f"server and workers after two default visits: {tree_rss_mb(server.pid):5.0f} MB")
            for label, name, content, wait_for in cases:
                before = tree_rss_mb(server.pid)
                memory = PeakMemory(server.pid)
                upload(browser, port, name, content, wait_for)
                peak = memory.stop()
                time.sleep(SESSION_TTL + 1)  # the closed tab's session expires
                after = []
                for _ in range(2):
                    visit(browser, port)
                    after.append(tree_rss_mb(server.pid))
                print(
                    f"{label} ({len(content) / 1024**2:.1f} MB file): before {before:5.0f} MB, peak {peak:5.0f} MB, "
                    f"after its session ended and one / two visitors came: {after[0]:5.0f} / {after[1]:5.0f} MB"
                )
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPU(s)")


if __name__ == "__main__":
    main()
