"""Pure figure builders: a results DataFrame in, a plotly ``go.Figure`` out.

They compute nothing private and import no Streamlit (CONVENTIONS), so the app, the
CLI and a notebook draw the same figures. ``explorer`` holds the explorer page's
figures; ``paper`` the paper's. The shared look (one colour per method, the order
methods appear in) lives here so every figure agrees.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from accfirst.search.experiments import METHOD_LABELS, METHODS

METHOD_ORDER = METHODS
# Colour-blind-safe (Okabe–Ito) and distinct in greyscale.
METHOD_COLORS = {"nr": "#0072B2", "doubling": "#E69F00", "theory": "#009E73"}
NONPRIVATE_COLOR = "#555555"


def method_label(method: str) -> str:
    """The display name of a method key ("nr" → "Noise reduction")."""
    return METHOD_LABELS.get(method, method)


def method_color(method: str) -> str:
    """The colour every figure uses for ``method``."""
    return METHOD_COLORS.get(method, NONPRIVATE_COLOR)


def methods_in(results: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The methods present in ``results``, in ``METHOD_ORDER`` (unknown keys last), minus ``exclude``."""
    present = [m for m in dict.fromkeys(results["method"]) if m not in exclude]
    return [m for m in METHOD_ORDER if m in present] + [m for m in present if m not in METHOD_ORDER]


__all__ = ["METHOD_COLORS", "METHOD_ORDER", "NONPRIVATE_COLOR", "method_color", "method_label", "methods_in"]
