"""Docs: the mathematics — the repository's docs/ page, rendered in the app (``ui.docs``)."""

from ui.docs import render_docs
from ui.frame import ensure_frame

ensure_frame()
render_docs("mathematics")
