"""The project's documentation inside the app: each ``docs/`` page rendered as a page of the menu.

A page opens at the section named by its ``section`` query parameter (the heading's
anchor), so other pages link straight to the paragraph that explains them
(``docs_link``). Links between the Markdown files become links between the app's pages.
The Markdown is the repository's own, trusted text; nothing a visitor typed reaches it
except the section anchor, which is only compared with the page's own anchors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

from accfirst.docs import DOCS_PAGES, docs_page, section_title

DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"
# The app's page of each docs key (``pages/docs_<key>.py``, URL path ``/docs_<key>``).
PAGE_FILES = {key: f"pages/docs_{key}.py" for key in DOCS_PAGES}
_FILE_KEYS = {page.file: key for key, page in DOCS_PAGES.items()}
_LINK = re.compile(r"\]\(([\w.-]+\.md)?(?:#([\w-]+))?\)")
_SUBSECTION = re.compile(r"(?m)^### (.+)$")


@dataclass(frozen=True)
class Section:
    """A ``##`` section of a docs page: its anchor, its title and its Markdown (heading included)."""

    anchor: str
    title: str
    markdown: str


def anchor_of(heading: str) -> str:
    """The anchor GitHub gives a heading (lower case, punctuation dropped, spaces to hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _app_links(markdown: str, own_key: str) -> str:
    """Links to ``other.md#anchor`` become links to the app's page of that file at that section."""

    def replace(match: re.Match[str]) -> str:
        key = _FILE_KEYS.get(match.group(1) or "", own_key)
        query = f"?section={match.group(2)}" if match.group(2) else ""
        return f"](/docs_{key}{query})"

    return _LINK.sub(replace, markdown)


@cache
def sections(key: str) -> tuple[str, tuple[Section, ...]]:
    """A docs page as (its introduction, its ``##`` sections), with links rewritten for the app."""
    text = _app_links((DOCS_DIR / docs_page(key).file).read_text(encoding="utf-8"), key)
    parts = re.split(r"(?m)^(?=## )", text)
    intro = re.sub(r"(?m)^# .*\n", "", parts[0], count=1)
    found = []
    for part in parts[1:]:
        title = part.splitlines()[0][3:].strip()
        found.append(Section(anchor_of(title), title, part))
    return intro, tuple(found)


def section_for(key: str, anchor: str) -> Section | None:
    """The ``##`` section of a docs page that holds the heading ``anchor`` (its own or a ``###`` one)."""
    for part in sections(key)[1]:
        if anchor == part.anchor or anchor in {anchor_of(title) for title in _SUBSECTION.findall(part.markdown)}:
            return part
    return None


def render_docs(key: str) -> None:
    """Draw a docs page; the section in the ``section`` query parameter comes first, open."""
    intro, parts = sections(key)
    st.title(docs_page(key).title)
    chosen = section_for(key, st.query_params.get("section", ""))
    if chosen is not None:
        with st.container(border=True):
            st.markdown(chosen.markdown)
        st.caption("The whole page follows.")
    st.markdown(intro)
    for part in parts:
        with st.expander(part.title, expanded=False):
            st.markdown(part.markdown)


def docs_link(where: Any, key: str, section: str = "", label: str | None = None) -> None:
    """A link to a docs page of the app, opened at ``section`` (a heading's anchor)."""
    entry = docs_page(key)
    text = label or (f"{section_title(section)} — {entry.title}" if section else entry.title)
    params = {"section": section} if section else None
    where.page_link(PAGE_FILES[key], label=text, icon=":material/menu_book:", query_params=params)
