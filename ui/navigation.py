"""The app's pages, grouped in sections: the one definition of the navigation menu.

A new page is a file in ``pages/`` (its first call is ``ui.frame.ensure_frame()``) and
one ``PageEntry`` in ``SECTIONS``; the menu, the URL path (the file's name) and the
browser test that clicks through every page all follow from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.navigation.page import StreamlitPage


@dataclass(frozen=True)
class PageEntry:
    """One page of the menu.

    Parameters
    ----------
    path : the page's script, relative to ``app.py`` (``pages/<name>.py``; the URL is ``/<name>``).
    title : the menu entry and the browser tab's title.
    icon : a Material icon (``:material/name:``) or an emoji.
    default : the page at ``/`` (exactly one).
    """

    path: str
    title: str
    icon: str
    default: bool = False

    @property
    def url_path(self) -> str:
        """The page's address below the app's root (Streamlit derives it from the file name)."""
        return "" if self.default else Path(self.path).stem


SECTIONS: dict[str, tuple[PageEntry, ...]] = {
    "Accuracy first": (
        PageEntry("pages/explorer.py", "Explorer", ":material/tune:", default=True),
        PageEntry("pages/sweep.py", "α sweep", ":material/show_chart:"),
    ),
    "Privacy budget": (
        PageEntry("pages/budget.py", "Budget", ":material/account_balance_wallet:"),
        PageEntry("pages/counts.py", "Counts", ":material/tag:"),
    ),
    "Learn": (
        PageEntry("pages/learn_randomized_response.py", "Randomized response", ":material/casino:"),
        PageEntry("pages/learn_laplace.py", "Laplace mechanism", ":material/area_chart:"),
        PageEntry("pages/learn_composition.py", "Composition", ":material/stacks:"),
        PageEntry("pages/learn_gibbs.py", "Gibbs posterior", ":material/scatter_plot:"),
    ),
    "Docs": (
        PageEntry("pages/glossary.py", "Glossary", ":material/dictionary:"),
        PageEntry("pages/docs_charts.py", "Reading the charts", ":material/insights:"),
        PageEntry("pages/docs_mathematics.py", "The mathematics", ":material/function:"),
        PageEntry("pages/docs_data.py", "Preparing data", ":material/table_view:"),
    ),
}


def navigation() -> StreamlitPage:
    """Register the pages with Streamlit and draw the menu (sidebar; behind ☰ on a phone); the page to run."""
    return st.navigation(
        {
            section: [
                st.Page(entry.path, title=entry.title, icon=entry.icon, default=entry.default) for entry in entries
            ]
            for section, entries in SECTIONS.items()
        },
        position="sidebar",
        expanded=True,
    )
