"""Where the project's own documentation is (``docs/`` in the repository), for the app, the CLI and reports.

The app shows these pages itself (a "Docs" section of its menu), so it never points
readers at anything outside the repository; offline reports and messages name the page
and the section in words (``docs_reference``). Every section named anywhere is a heading
that exists in its page (a test checks them).
"""

from __future__ import annotations

from dataclasses import dataclass

from accfirst.validation import lookup


@dataclass(frozen=True)
class DocsPage:
    """One page of ``docs/``: its file name and its title."""

    file: str
    title: str


DOCS_PAGES = {
    "mathematics": DocsPage("mathematics.md", "The mathematics"),
    "charts": DocsPage("reading-the-charts.md", "Reading the charts"),
    "data": DocsPage("data-preparation.md", "Preparing data"),
}


def docs_page(page: str) -> DocsPage:
    """The ``DocsPage`` of a key ("mathematics", "charts" or "data"); ``AccFirstError`` otherwise."""
    return lookup("docs page", page, DOCS_PAGES)


def section_title(section: str) -> str:
    """A heading's words from its anchor ("a-public-norm-bound" → "A public norm bound")."""
    words = section.replace("-", " ")
    return words[:1].upper() + words[1:]


def docs_reference(page: str, section: str = "") -> str:
    """Where to read more, in words: "“Calibrations” in docs/mathematics.md (the app's Docs menu: The mathematics)".

    Parameters
    ----------
    page : ``"mathematics"``, ``"charts"`` or ``"data"``.
    section : the anchor of a heading in that page, e.g. ``"calibrations"``; empty for the page.
    """
    entry = docs_page(page)
    where = f"docs/{entry.file} (the app's Docs menu: {entry.title})"
    return f"“{section_title(section)}” in {where}" if section else where
