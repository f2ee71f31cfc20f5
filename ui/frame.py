"""The frame every page shares: the menu, the app's CSS and the dataset sidebar.

The Data sidebar shows on the pages that run on the data (``PageEntry.data``); on the others
it is drawn into a hidden container, so that an upload and its choices survive a visit to the
Learn or Docs pages (Streamlit forgets a file uploader that a run does not draw).

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
from ui.explorer_settings import ignored_by_target, upload_check
from ui.link_notice import notice_slot
from ui.navigation import entry, navigation
from ui.runs import worker_pool
from ui.style import HIDDEN, apply_style

# True while app.py runs a page inside the frame it drew (the page runs in the same thread).
_INSIDE_FRAME: ContextVar[bool] = ContextVar("accfirst_inside_frame", default=False)

server.configure()


def draw_frame(page: str) -> None:
    """The app's CSS and the shared sidebar of the page ``page`` (its URL path): shown, or drawn hidden."""
    apply_style()
    worker_pool()  # on a fresh server, the workers start while this run loads its data
    shown = entry(page).data
    explorer = entry(page).follows_target
    dataset_sidebar(
        st.sidebar if shown else st.sidebar.container(key=HIDDEN),
        linked=shown,
        before_preparing=upload_check if explorer else None,
        ignored=ignored_by_target if explorer else None,
    )


@contextmanager
def shared_frame(page: str) -> Iterator[None]:
    """Draw the frame, then run the body (the page ``page``, its URL path) inside it.

    The top of the page is kept for the notice of link settings the page could not use
    (``ui.link_notice``), the shared sidebar's and the page's alike.
    """
    try:
        with notice_slot(page):
            draw_frame(page)
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
