"""What a visitor reads in Markdown the app escaped with ``ui.text.plain``: escapes and word joiners removed."""

from __future__ import annotations

import re
from collections.abc import Callable

from streamlit.testing.v1 import AppTest

from ui.link_notice import notice_title
from ui.text import WORD_JOINER

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(markdown: str) -> str:
    """The text ``markdown`` displays, for Markdown built by ``ui.text.plain`` (and plain literals)."""
    return _ESCAPE.sub(r"\1", markdown).replace(WORD_JOINER, "")


def link_notice(at: AppTest) -> list[str]:
    """The lines of the page's one notice of ignored link settings, as shown (``[]`` without a notice)."""
    notices = [e for e in at.expander if _is_notice(e.label)]
    assert len(notices) <= 1, "more than one notice of ignored link settings"
    if not notices:
        return []
    [markdown] = notices[0].markdown
    return [shown(line.removeprefix("- ")) for line in markdown.value.splitlines()]


def _is_notice(label: str) -> bool:
    count = label.split(" ", 1)[0]
    return count.isdigit() and label == notice_title(int(count))


def error_message(function: Callable[..., object], *args: object) -> str:
    """The message of the ``ValueError`` that ``function(*args)`` raises."""
    try:
        function(*args)
    except ValueError as error:
        return str(error)
    raise AssertionError(f"{function.__name__}{args} raised nothing")
