"""The app's pages, grouped in sections: the one definition of the navigation menu.

A new page is a file in ``pages/`` (its first call is ``ui.frame.ensure_frame()``) and
one ``PageEntry`` in ``SECTIONS``; the menu, the URL path (the file's name), whether the
page shows the Data sidebar and the browser test that clicks through every page all
follow from here.

The page configuration (title and icon of the browser tab) is set before the menu is
registered: otherwise Streamlit makes the current page's menu icon the tab's icon and
fetches it from an outside font server on every load.
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
    data : the page runs on the sidebar's dataset (``ui.dataset.require_selection``): the Data
        sidebar is shown on it, and hidden elsewhere.
    follows_target : the Data sidebar follows the page's target (the explorer's): an upload is checked against it
        before it is prepared (``ui.explorer_settings.upload_check``), so that a target no table of its size could
        meet spends nothing, and the settings the target does not read are drawn disabled
        (``ui.explorer_settings.ignored_by_target``).
    """

    path: str
    title: str
    icon: str
    default: bool = False
    data: bool = False
    follows_target: bool = False

    @property
    def url_path(self) -> str:
        """The page's address below the app's root (Streamlit derives it from the file name)."""
        return "" if self.default else Path(self.path).stem


SECTIONS: dict[str, tuple[PageEntry, ...]] = {
    "Accuracy first": (
        PageEntry("pages/explorer.py", "Explorer", ":material/tune:", default=True, data=True, follows_target=True),
        PageEntry("pages/sweep.py", "α sweep", ":material/show_chart:", data=True),
    ),
    "Privacy budget": (
        PageEntry("pages/budget.py", "Budget", ":material/account_balance_wallet:", data=True),
        PageEntry("pages/counts.py", "Counts", ":material/tag:", data=True),
    ),
    "Learn": (
        PageEntry("pages/learn_randomized_response.py", "Randomized response", ":material/casino:"),
        PageEntry("pages/learn_laplace.py", "Laplace mechanism", ":material/area_chart:"),
        PageEntry("pages/learn_composition.py", "Composition", ":material/stacks:"),
        PageEntry("pages/learn_gibbs.py", "Gibbs posterior", ":material/scatter_plot:", data=True),
    ),
    "Docs": (
        PageEntry("pages/glossary.py", "Glossary", ":material/dictionary:"),
        PageEntry("pages/docs_charts.py", "Reading the charts", ":material/insights:"),
        PageEntry("pages/docs_mathematics.py", "The mathematics", ":material/function:"),
        PageEntry("pages/docs_data.py", "Preparing data", ":material/table_view:"),
    ),
}


PAGE_CONFIG = {"page_title": "accfirst: accuracy first, then privacy", "page_icon": "🎯", "layout": "wide"}


def entry(url_path: str) -> PageEntry:
    """The menu entry of the page at ``url_path`` (the default page for an unknown one)."""
    entries = [page for pages in SECTIONS.values() for page in pages]
    return next((page for page in entries if page.url_path == url_path), next(page for page in entries if page.default))


def navigation() -> StreamlitPage:
    """Register the pages with Streamlit and draw the menu (sidebar; behind ☰ on a phone); the page to run."""
    st.set_page_config(**PAGE_CONFIG)
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
