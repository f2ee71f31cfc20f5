"""The frame every page shares: the page configuration and the dataset sidebar.

``app.py`` draws it around the page that ``st.navigation`` picks (``shared_frame``).
A page can also run on its own: because the page scripts live in ``pages/``, the first
request after a server start that names a page (a shared link to ``/sweep``, say) is
routed by Streamlit's legacy multipage mode straight to that file, without ``app.py``;
the legacy mode ends for good the first time ``app.py`` calls ``st.navigation``. Pages
call ``ensure_frame()`` before anything else, which draws the
frame when ``app.py`` has not, so such a link works from the very first visit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import streamlit as st

from ui.dataset import dataset_sidebar

PAGE_CONFIG = {"page_title": "accfirst: accuracy first, then privacy", "page_icon": "🎯", "layout": "wide"}

# True while app.py runs a page inside the frame it drew (the page runs in the same thread).
_INSIDE_FRAME: ContextVar[bool] = ContextVar("accfirst_inside_frame", default=False)


def draw_frame() -> None:
    """Page configuration and the shared sidebar."""
    st.set_page_config(**PAGE_CONFIG)
    dataset_sidebar()


@contextmanager
def shared_frame() -> Iterator[None]:
    """Draw the frame, then run the body (the page) inside it."""
    draw_frame()
    token = _INSIDE_FRAME.set(True)
    try:
        yield
    finally:
        _INSIDE_FRAME.reset(token)


def ensure_frame() -> None:
    """Draw the frame unless ``app.py`` already did in this run."""
    if not _INSIDE_FRAME.get():
        draw_frame()
