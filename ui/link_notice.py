"""One notice, at the top of the page, for every setting of a link that the page could not use.

A shared link may carry values a setting refuses (out of range, unknown, malformed or
hostile). Each refusal is reported here instead of where the setting is read, so that a
link with eight bad values shows one box, not eight: ``shared_frame`` reserves the top of
the page (``notice_slot``) and every ``report_ignored`` redraws the box there with all the
refusals so far — the shared sidebar's first, then the page's — as a list of plain-text
lines in one collapsed expander. The refusals are kept while the visitor stays on the
page, so the box stays put across reruns (nothing jumps under the cursor); another page
starts afresh.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import streamlit as st

from ui.text import plain

STATE_KEY = "ui.link_notice"
# The slot at the top of the page that app.py's frame reserved in this run (None outside the frame).
_SLOT: ContextVar[Any] = ContextVar("accfirst_link_notice_slot", default=None)


def notice_title(count: int) -> str:
    """The notice's one line (the expander's label)."""
    if count == 1:
        return "1 setting of the link could not be used: the page shows its default instead"
    return f"{count} settings of the link could not be used: the page shows their defaults instead"


@contextmanager
def notice_slot(page: str) -> Iterator[None]:
    """Reserve the top of the page ``page`` for the notice while the body runs; show what it already holds."""
    kept = st.session_state.get(STATE_KEY)
    if kept is None or kept[0] != page:
        st.session_state[STATE_KEY] = (page, [])
    slot = st.empty()
    token = _SLOT.set(slot)
    try:
        _draw(slot)
        yield
    finally:
        _SLOT.reset(token)


def report_ignored(messages: Sequence[str]) -> None:
    """Add refusals (plain text, unescaped: they may quote the link) to the page's notice."""
    if not messages:
        return
    slot = _SLOT.get()
    if slot is None:  # a page run on its own (a test of one page): the notice goes where the page is
        st.session_state[STATE_KEY] = (None, [])
        slot = st.empty()
    shown = st.session_state[STATE_KEY][1]
    shown.extend(message for message in messages if message not in shown)
    _draw(slot)


def _draw(slot: Any) -> None:
    shown = st.session_state[STATE_KEY][1]
    if shown:
        with slot.container(), st.expander(notice_title(len(shown)), icon="🔗"):
            st.markdown("\n".join(f"- {plain(message)}" for message in shown))
