"""“Take it with you”: a page's results, its settings and a Python snippet that reruns them, as downloads.

The explorer and the sweep offer the same three (``download_buttons``); the sweep adds its offline report and the
command line. A download never reruns the page (``on_click="ignore"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from accfirst.snippet import RunSettings, reproduction_snippet, settings_json
from ui.runs import released


def download_buttons(columns: Sequence[Any], results: pd.DataFrame, settings: RunSettings, stem: str) -> None:
    """Results (CSV: the released columns, ``ui.runs.released``), settings (JSON) and the Python snippet, in the first
    three of ``columns``; file names start with ``stem`` ("accfirst_sweep")."""
    files = (
        ("Results (CSV)", released(results).to_csv(index=False), f"{stem}.csv", "text/csv", None),
        ("Settings (JSON)", settings_json(settings), f"{stem}_settings.json", "application/json", None),
        (
            "Python snippet",
            reproduction_snippet(settings),
            f"{stem}.py",
            "text/x-python",
            "Reruns these trials with the accfirst package: same seed, same numbers.",
        ),
    )
    for column, (label, data, name, mime, help) in zip(columns, files, strict=False):
        column.download_button(label, data, file_name=name, mime=mime, on_click="ignore", help=help)
