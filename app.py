"""accfirst's Streamlit app: page navigation and the sidebar every page shares.

Run with ``streamlit run app.py``. The pages and their menu sections are defined in
``ui.navigation``; the explorer is the default page. The sidebar's dataset picker and λ
(``ui.dataset``) are drawn here, before the page, so they keep their values across
pages; a page reads them with ``ui.dataset.require_selection()``.
"""

from ui.errors import show_unexpected_error
from ui.frame import shared_frame
from ui.navigation import navigation

page = navigation()

try:
    with shared_frame(page.url_path):
        page.run()
except Exception:
    show_unexpected_error()
