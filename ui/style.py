"""The app's own CSS, in one place: what Streamlit's theme leaves for a phone and a few hidden parts.

Drawn once per run by the frame (``ui.frame``) as a ``<style>`` element, which takes no room on
the page. Every rule is local: nothing is fetched from another server.

- On a phone Plotly's toolbar sits over the chart's title: below 640 px it is hidden (the charts
  keep their hover labels; zoom is a desktop affair).
- A Markdown table, or a paragraph with a formula too wide to wrap (the docs pages), scrolls inside its own box
  instead of widening the page.
- Streamlit refuses a file over ``server.maxUploadSize`` in the browser and says why only in a
  hover tooltip (a visually hidden ``role="alert"`` text in the file's chip): the text is shown
  under the chip.
- A container keyed ``HIDDEN`` is drawn but not shown: the Data sidebar on pages that do not run on
  the data (its upload and data editor have no ``persist_state``, so Streamlit would forget them if
  they were not drawn).
"""

from __future__ import annotations

import streamlit as st

HIDDEN = "accfirst-hidden"
PHONE_PX = 640

APP_CSS = f"""<style>
@media (max-width: {PHONE_PX}px) {{
  .js-plotly-plot .modebar-container {{ display: none !important; }}
}}
[data-testid="stMarkdownContainer"] table {{ display: block; max-width: 100%; overflow-x: auto; }}
[data-testid="stMarkdownContainer"] :is(p, li):has(.katex) {{ overflow-x: auto; }}
[data-testid="stFileChip"][aria-invalid="true"] {{ flex-wrap: wrap; }}
[data-testid="stFileChip"][aria-invalid="true"] [role="alert"] {{
  position: static !important; width: 100% !important; height: auto !important; margin: 0.25rem 0 0 0 !important;
  clip: auto !important; clip-path: none !important; overflow: visible !important; white-space: normal !important;
  color: #b42318; font-size: 0.85rem;
}}
.st-key-{HIDDEN} {{ display: none !important; }}
</style>"""


def apply_style() -> None:
    """Add the app's CSS to this run's page."""
    st.html(APP_CSS)
