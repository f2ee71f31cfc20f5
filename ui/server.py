"""The one server process every visitor shares: settings made once for all of its sessions.

Every session's script runs in a thread of this process, under one interpreter lock, beside
the worker pool's processes (``ui.runs``), which already fill the cores. Two costs that a
single visitor never notices then add up over a classroom:

- BLAS threads. OpenBLAS gives each matrix operation of the server a thread per core,
  which only contend with the workers and with each other: on a loaded 2-core server an
  eigendecomposition of the 77 × 77 Hessian that the α caption reads took 0.07 s of wall
  time with two threads and 0.005 s with one. ``configure()`` keeps the server's BLAS to
  one thread.
- Garbage collection. Streamlit collects every generation after each script run
  (``runner.postScriptGC``), so that a session's freed memory goes back at once. A full
  collection walks every object the collector tracks, most of them made by the imports
  (Streamlit, pandas, SciPy, Plotly and this package: about 170,000), and holds the
  interpreter lock meanwhile: about 0.1 s of CPU after every run of every session.
  ``freeze_startup_heap()`` moves the objects alive at the end of the server's first script
  run, however it ended, imports included, to the collector's permanent generation; later
  collections walk only what sessions made since. No upload can be among the frozen
  objects: a file reaches the server only through an uploader that an earlier run drew.
"""

from __future__ import annotations

import gc

import streamlit as st
from threadpoolctl import threadpool_limits


def configure() -> None:
    """One BLAS thread for the server's own computations (the pool's workers set theirs)."""
    threadpool_limits(1)


@st.cache_resource(show_spinner=False)
def _frozen_heap() -> int:
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def freeze_startup_heap() -> None:
    """After a script run: once per server, leave the objects alive now out of every later collection."""
    _frozen_heap()
