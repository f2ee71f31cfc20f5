"""Running the app for the benchmarks: a ``streamlit run app.py`` on a free port, and its memory."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository: the tests' browser helpers start the app the same way

from tests.app.browsing import streamlit_command  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, *options: str) -> subprocess.Popen:
    """``streamlit run app.py`` on ``port`` with extra command-line ``options``, once it answers."""
    command = streamlit_command(port, *options)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("streamlit did not become healthy within 60 s")


def _read(path: str) -> str:
    """A /proc file's text, or "" when its process or thread has just ended."""
    try:
        return Path(path).read_text()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its direct children (the worker processes), in MB."""
    pids = [str(pid)]
    for task in Path(f"/proc/{pid}/task").iterdir():
        pids += _read(f"{task}/children").split()
    lines = (line for each in pids for line in _read(f"/proc/{each}/status").splitlines())
    return sum(int(line.split()[1]) for line in lines if line.startswith("VmRSS:")) / 1024


class PeakMemory:
    """Samples ``tree_rss_mb(pid)`` every 0.1 s in a thread; ``peak`` is the largest sample."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._done = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.1) and Path(f"/proc/{self.pid}").exists():
            self.peak = max(self.peak, tree_rss_mb(self.pid))

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return self.peak
