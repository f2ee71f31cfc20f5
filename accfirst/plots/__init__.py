"""Pure figure builders: a results DataFrame in, a plotly ``go.Figure`` out.

They compute nothing private and import no Streamlit (CONVENTIONS), so the app, the
CLI and a notebook draw the same figures. ``explorer`` holds the explorer page's
figures; ``paper`` the paper's. The shared look (one colour per method, the order
methods appear in) lives here so every figure agrees.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from accfirst.interpret import format_delta
from accfirst.search.experiments import METHOD_LABELS, METHODS

METHOD_ORDER = METHODS
# Colour-blind-safe (Okabe–Ito) and distinct in greyscale.
METHOD_COLORS = {"nr": "#0072B2", "doubling": "#E69F00", "theory": "#009E73", "gibbs": "#CC79A7"}
NONPRIVATE_COLOR = "#555555"
# Methods that test hypotheses: they have a testing part of ε and a search to show.
TESTING_METHODS = ("nr", "doubling")


def method_label(method: str, rows: pd.DataFrame | None = None) -> str:
    """The display name of a method key ("nr" → "Noise reduction").

    Given the method's ``rows`` of a results frame, a δ > 0 is named with it ("Gibbs
    posterior (δ = 10⁻⁶)", the largest δ of the rows), so that an (ε, δ) guarantee is never
    read as pure ε beside the other methods.
    """
    label = METHOD_LABELS.get(method, method)
    if rows is not None and "delta" in rows.columns and len(rows):
        delta = float(rows["delta"].max())
        if delta > 0:
            label += f" (δ = {format_delta(delta)})"
    return label


def method_color(method: str) -> str:
    """The colour every figure uses for ``method``."""
    return METHOD_COLORS.get(method, NONPRIVATE_COLOR)


def methods_in(results: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The methods present in ``results``, in ``METHOD_ORDER`` (unknown keys last), minus ``exclude``."""
    present = [m for m in dict.fromkeys(results["method"]) if m not in exclude]
    return [m for m in METHOD_ORDER if m in present] + [m for m in present if m not in METHOD_ORDER]


__all__ = [
    "METHOD_COLORS", "METHOD_ORDER", "NONPRIVATE_COLOR", "TESTING_METHODS", "method_color", "method_label",
    "methods_in",
]  # fmt: skip
