"""Links to the project's own documentation (``docs/`` in the repository), for the app and the report.

The app, the report and messages point readers at these pages instead of the project's
internal specification. ``DOCS_URL`` is the web address of the repository's ``docs``
folder; every section named here has a stable heading in its page (a test checks them).
"""

from __future__ import annotations

from accfirst.errors import AccFirstError

DOCS_URL = "https://github.com/accfirst/accfirst/blob/main/docs"
DOCS_PAGES = {
    "mathematics": "mathematics.md",
    "charts": "reading-the-charts.md",
    "data": "data-preparation.md",
}


def docs_link(page: str, section: str = "") -> str:
    """The web address of a docs page, or of one section of it (``section`` is the heading's anchor).

    Parameters
    ----------
    page : ``"mathematics"``, ``"charts"`` or ``"data"``.
    section : the anchor of a heading in that page, e.g. ``"calibrations"``; empty for the page.
    """
    if page not in DOCS_PAGES:
        raise AccFirstError(f"unknown docs page {page!r}; choose one of {sorted(DOCS_PAGES)}")
    return f"{DOCS_URL}/{DOCS_PAGES[page]}" + (f"#{section}" if section else "")
