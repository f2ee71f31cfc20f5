"""Text from visitors (URL values, file names, column names, cells) on the page: shown literally; and the words every
page uses for a number that reads the data without noise (``EVALUATION_ONLY``, ``EVALUATION_LABEL``).

Streamlit renders Markdown in alerts, captions, expander labels and ``st.markdown``, so
``[sign in](https://evil.example)`` from a link would become a working link and
``![t](http://host/t.png)`` would load an outside image. ``plain`` escapes such text so
that it shows exactly as typed; ``short`` cuts it to about 80 characters first, so a
100 kB value is not echoed back in full. Every user string that reaches Markdown goes
through ``plain``.
"""

from __future__ import annotations

import re

from accfirst.validation import ECHO_CHARS, shorten

# What every number that reads the data without noise says of itself, on every page (one source): a sentence after
# the number, or a label in parentheses.
EVALUATION_ONLY = "Evaluation only: this reads the data without noise, so it is not private."
EVALUATION_LABEL = "evaluation only: reads the data, not private"

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping all of them stops
# links, images, emphasis, code, HTML, Streamlit's :colour[…] and :icon: shortcodes and $…$ math.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# GitHub-style autolinks (https://…, www.…, a@b.c) are found in the text after escapes are resolved;
# an invisible word joiner after "http", "https", "www" and "@" keeps them from matching.
_AUTOLINK = re.compile(r"(?i)(https?|www|@)")
WORD_JOINER = "\u2060"


def plain(text: object) -> str:
    """Markdown that shows ``text`` literally (no link, image or formatting); line breaks become spaces."""
    flat = " ".join(str(text).splitlines())
    return _PUNCTUATION.sub(r"\\\1", _AUTOLINK.sub(r"\1" + WORD_JOINER, flat))


def short(text: object, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut), shown literally (``plain``)."""
    return plain(shorten(str(text), limit))
