"""Errors on the page: the package's message for a user error, a generic one for a bug.

Every ``AccFirstError``/``DataError`` (both ``ValueError``) carries a message written for
the user, so the page shows it as it is — as plain text, since it may quote a file
name, a column name or a value from a link (``ui.text.plain``). Anything else is a bug: the page says so
without details and the traceback goes to the server log only. Streamlit's own
control flow (``st.stop``, reruns) derives from ``BaseException`` and passes through.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import streamlit as st

from ui.text import plain

LOG = logging.getLogger("accfirst.app")
GENERIC_MESSAGE = (
    "Something went wrong while computing this view. Try other settings; if it keeps happening, "
    "please report the settings (the URL) to the maintainers."
)
T = TypeVar("T")


def show_unexpected_error(where: Any = None) -> None:
    """Log the current exception with its traceback; show only a generic message."""
    LOG.exception("unexpected error in the accfirst app")
    (where or st).error(GENERIC_MESSAGE, icon="⚠️")


@contextmanager
def package_errors(where: Any = None, *, stop: bool = True, remember: str | None = None) -> Iterator[None]:
    """Run package calls; show a ``ValueError``'s message (or a generic one) and stop the page.

    Parameters
    ----------
    where : the container to show the error in (default: the current one).
    stop : ``st.stop()`` after showing the error (default). With ``False`` the block is
        skipped and the page goes on (for an optional section).
    remember : also keep the shown message in ``st.session_state[remember]`` (so that a
        page can repeat an error drawn in the sidebar, which phones hide).
    """
    target = where or st
    try:
        yield
    except ValueError as exc:  # AccFirstError, DataError: written for the user
        target.error(plain(exc), icon="🚫")
        if remember:
            st.session_state[remember] = str(exc)
        if stop:
            st.stop()
    except Exception:
        show_unexpected_error(target)
        if remember:
            st.session_state[remember] = GENERIC_MESSAGE
        if stop:
            st.stop()


def call(function: Callable[..., T], *args: Any, where: Any = None, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` inside ``package_errors``: the value, or an error and a stop."""
    with package_errors(where):
        return function(*args, **kwargs)
    raise AssertionError("unreachable: package_errors stops the script")  # pragma: no cover
