"""What a visitor reads in Markdown the app escaped with ``ui.text.plain``: escapes and word joiners removed."""

from __future__ import annotations

import re

from ui.text import WORD_JOINER

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(markdown: str) -> str:
    """The text ``markdown`` displays, for Markdown built by ``ui.text.plain`` (and plain literals)."""
    return _ESCAPE.sub(r"\1", markdown).replace(WORD_JOINER, "")
