"""The server's process-wide settings (``ui.server``), each checked in a fresh interpreter.

A fresh process because both settings are process-wide and once only: the BLAS thread count
and the collector's frozen generation would otherwise depend on which tests ran before.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str) -> str:
    """``code`` in a fresh interpreter at the repository's root; its standard output."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_app_uses_one_blas_thread():
    threads = run_python(
        """
        from threadpoolctl import threadpool_info
        import ui.frame
        print(sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}))
        """
    )
    assert threads == "[1]"


def test_the_startup_heap_is_frozen_once():
    counts = run_python(
        """
        import gc
        from ui import server
        before = gc.get_freeze_count()
        server.freeze_startup_heap()
        first = gc.get_freeze_count()
        made_later = [[n] for n in range(10_000)]
        server.freeze_startup_heap()
        print(before, first > 0, gc.get_freeze_count() == first)
        """
    )
    assert counts == "0 True True"


def test_the_first_run_freezes_the_heap_however_the_page_ends():
    """A page that stops (as the explorer does while an upload is missing) still ends the first run: frozen then."""
    frozen = run_python(
        """
        import gc
        from streamlit.testing.v1 import AppTest

        page = chr(10).join([
            "import streamlit as st",
            "import ui.frame",
            "ui.frame.draw_frame = lambda page: None",  # the frame's sidebar is not what this test is about
            "with ui.frame.shared_frame('explorer'):",
            "    st.stop()",
        ])
        at = AppTest.from_string(page, default_timeout=120).run()
        print(not at.exception, gc.get_freeze_count() > 0)
        """
    )
    assert frozen == "True True"
