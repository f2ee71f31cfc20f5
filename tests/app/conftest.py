"""Shared set-up for the app tests.

The app navigates with ``st.navigation`` but keeps its page scripts in ``pages/``, the
folder name of Streamlit's legacy multipage mechanism. A running server switches the
legacy mechanism off for good the first time ``app.py`` calls ``st.navigation``;
``AppTest`` instead re-detects the folder before every run, so from the second run on it
would execute the page script alone, without ``app.py`` (the page then draws the shared
frame itself, ``ui.frame``, but as new widgets). This fixture gives every ``AppTest`` run
the running server's behaviour; the browser tests cover the legacy routing for real.

The browser tests share one ``streamlit run`` per test process (``served``: a pytest-xdist
worker runs one) and one Chromium per test process, with a fresh context per test (``browser``,
in ``tests/conftest.py``, which also runs them after every other test).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.runtime.pages_manager import PagesManager

from tests.app.browsing import require_browser, streamlit_server


@pytest.fixture(autouse=True, scope="session")
def navigation_not_pages_folder() -> Iterator[None]:
    # Session scope: in force before module-scoped fixtures build their AppTests too.
    original = PagesManager.__init__

    def init(self: PagesManager, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PagesManager, "__init__", init)
        yield


@pytest.fixture(scope="session")
def served() -> Iterator[tuple[str, int]]:
    """The app's URL and the server's process id."""
    require_browser()
    with streamlit_server() as url_and_pid:
        yield url_and_pid


@pytest.fixture(scope="session")
def server(served: tuple[str, int]) -> str:
    return served[0]
