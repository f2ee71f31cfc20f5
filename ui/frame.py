"""The frame every page shares: the page configuration, the menu and the dataset sidebar.

``app.py`` draws it around the page that its navigation picks (``shared_frame``). A
page can also run on its own: because the page scripts live in ``pages/``, the first
request after a server start that names a page (a shared link to ``/sweep``, say) is
routed by Streamlit's legacy multipage mode straight to that file, without ``app.py``.
Every page therefore calls ``ensure_frame()`` first. When ``app.py`` has not drawn the
frame, it registers the app's navigation itself — ``st.navigation`` ends the legacy
mode for good — and reruns the script at once, so that the page runs inside
``app.py``'s frame and menu like on every later request. (Drawing the frame in that
first run instead would leave its widgets registered under the legacy page, and the
next run would lose their values.) Such a link works from the very first visit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import streamlit as st

from ui import server
from ui.dataset import dataset_sidebar
from ui.link_notice import notice_slot
from ui.navigation import navigation
from ui.runs import worker_pool

PAGE_CONFIG = {"page_title": "accfirst: accuracy first, then privacy", "page_icon": "🎯", "layout": "wide"}

# True while app.py runs a page inside the frame it drew (the page runs in the same thread).
_INSIDE_FRAME: ContextVar[bool] = ContextVar("accfirst_inside_frame", default=False)

server.configure()


def draw_frame() -> None:
    """Page configuration and the shared sidebar."""
    st.set_page_config(**PAGE_CONFIG)
    worker_pool()  # on a fresh server, the workers start while this run loads its data
    dataset_sidebar()


@contextmanager
def shared_frame(page: str) -> Iterator[None]:
    """Draw the frame, then run the body (the page ``page``, its URL path) inside it.

    The top of the page is kept for the notice of link settings the page could not use
    (``ui.link_notice``), the shared sidebar's and the page's alike.
    """
    try:
        with notice_slot(page):
            draw_frame()
            token = _INSIDE_FRAME.set(True)
            try:
                yield
            finally:
                _INSIDE_FRAME.reset(token)
    finally:
        server.freeze_startup_heap()  # however the server's first run ended: it holds no upload


def ensure_frame() -> None:
    """A page's first call: when Streamlit ran the page without ``app.py``, switch to its navigation and rerun."""
    if not _INSIDE_FRAME.get():
        navigation()
        st.rerun()
