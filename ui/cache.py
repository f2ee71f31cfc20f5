"""A per-session memo for data derived from an upload.

Uploaded data must never reach another session, so it is not put in ``st.cache_data``
or ``st.cache_resource`` (both shared by every visitor). Instead each session keeps a
small least-recently-used store in ``st.session_state``, keyed by the content hash of
the file plus whatever else the value depends on. It disappears with the session. A
full store forgets its oldest entry before computing a new one, so that an upload's
large values (its table, its prepared arrays) are never held twice.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from accfirst.datasets.prepare.noise import SecretSeed

STATE_KEY = "ui.session_memo"
SECRETS = "secrets"
T = TypeVar("T")


def session_memo(namespace: str, key: Hashable, compute: Callable[[], T], *, max_entries: int = 8) -> T:
    """``compute()`` once per ``(namespace, key)`` in this session; keep the last ``max_entries``."""
    stores = st.session_state.setdefault(STATE_KEY, {})
    store: OrderedDict[Hashable, object] = stores.setdefault(namespace, OrderedDict())
    if key in store:
        store.move_to_end(key)
        return store[key]  # type: ignore[return-value]
    while len(store) >= max_entries:
        store.popitem(last=False)
    value = compute()
    store[key] = value
    return value


def memoised(namespace: str, key: Hashable) -> bool:
    """Whether ``(namespace, key)`` is held in this session's memo."""
    return key in st.session_state.get(STATE_KEY, {}).get(namespace, {})


def clear_namespace(namespace: str) -> None:
    """Forget everything memoised under ``namespace`` in this session."""
    st.session_state.setdefault(STATE_KEY, {}).pop(namespace, None)


def session_secret(key: Hashable) -> SecretSeed:
    """Operating-system entropy drawn once per ``key`` in this session and never shown.

    A release computed again from the same choices (a rerun, or a return to them) draws the same
    noise and so repeats the same release instead of making a new one.
    """
    return session_memo(SECRETS, key, SecretSeed.draw, max_entries=4096)
