"""Where the counts of the privacy-budget pages come from: a column of the session's data, or a synthetic set.

A column of the prepared training rows (what the private algorithms see) is counted per
bin — over the public range [−1, 1] that every prepared value lies in, or over the
column's own minimum and maximum, which reads the data — or per distinct value (the list
of values reads the data too). The synthetic set is the reference of docs/mathematics.md#counts-to-a-relative-error:
whole counts, log-uniform between 100 and 100,000. Column names come from an upload: shown as plain text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from accfirst.accounting.counts import category_counts, histogram_counts, log_uniform_counts
from accfirst.datasets import PreparedData
from accfirst.interpret import format_delta
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from ui.settings import Choice, IntSetting, Setting
from ui.text import EVALUATION_LABEL, plain, short

# A column with more distinct values than this is binned, not counted per value.
MAX_CATEGORIES = 50
MAX_BINS = 50
MAX_SYNTHETIC = 1000
# Prepared rows have ‖x‖₁ ≤ 1 and |y| ≤ 1 (docs/mathematics.md#setting-and-notation): every value lies in this public
# range.
PUBLIC_RANGE = (-1.0, 1.0)
MODE_LABELS = {
    "bins": "bins over the public range [−1, 1]",
    "bins-data": f"bins over the column's own range ({EVALUATION_LABEL})",
    "categories": f"one count per distinct value (the list of values: {EVALUATION_LABEL})",
}
SYNTHETIC_RANGE = (1e2, 1e5)
BUDGET_DELTAS = (1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


def budget_delta_setting(scope: str, help: str) -> Choice:
    """δ of a page's whole (ε, δ) budget (docs/mathematics.md#many-analyses-one-budget), 10⁻⁶ by default, as the
    privacy-budget pages offer it."""
    return Choice(
        scope,
        "delta",
        "Budget δ",
        DEFAULT_DELTA,
        options=BUDGET_DELTAS,
        widget_type="select_slider",
        help=help,
        labels={d: format_delta(d) for d in BUDGET_DELTAS},
    )


@dataclass(frozen=True)
class CountSource:
    """The settings of a count source on one page (``scope``); ``with_synthetic`` offers the synthetic set.

    ``default_source`` and ``default_mode`` are the page's defaults ("data" or "synthetic"; a key of ``MODE_LABELS``).
    """

    scope: str
    with_synthetic: bool = True
    default_source: str = "synthetic"
    default_mode: str = "bins"

    @property
    def source(self) -> Choice:
        return Choice(
            self.scope,
            "src",
            "Counts",
            self.default_source,
            options=("data", "synthetic"),
            widget_type="segmented_control",
            labels={"data": "from the data", "synthetic": "synthetic, log-uniform"},
        )

    @property
    def mode(self) -> Choice:
        return Choice(self.scope, "mode", "Count", self.default_mode, options=tuple(MODE_LABELS), labels=MODE_LABELS)

    @property
    def bins(self) -> IntSetting:
        return IntSetting(self.scope, "bins", "Bins", 10, low=2, high=MAX_BINS)

    @property
    def size(self) -> IntSetting:
        return IntSetting(
            self.scope,
            "n",
            "How many counts",
            200,
            low=10,
            high=MAX_SYNTHETIC,
            step=10,
            help=f"Whole counts, log-uniform between {SYNTHETIC_RANGE[0]:,.0f} and {SYNTHETIC_RANGE[1]:,.0f}: "
            "a mix of small counts (expensive to certify) and large ones (cheap).",
        )

    def column(self, data: PreparedData) -> Choice:
        """The column to count: the target, then the features (names as plain text)."""
        names = (data.target_name, *data.feature_names)
        return Choice(
            self.scope,
            "col",
            "Column",
            data.target_name,
            options=names,
            widget_type="selectbox",
            labels={name: short(name) for name in names},
        )

    def reads(self, data: PreparedData) -> bool:
        """Whether the counts come from a real table (a release), not from public or synthetic data."""
        chosen = self.source.value if self.with_synthetic else "data"
        return chosen == "data" and data.preparation.private_rows

    def settings(self, data: PreparedData) -> tuple[Setting, ...]:
        """Every URL setting of the source, for ``restore_from_url``/``write_to_url``."""
        if not self.with_synthetic:
            return self.column(data), self.mode, self.bins
        return self.source, self.column(data), self.mode, self.bins, self.size

    def draw(self, where: Any, data: PreparedData, seed: int) -> tuple[pd.Series, str] | None:
        """Draw the source's widgets in ``where``; the counts and a line (Markdown) on where they came from.

        ``None`` (with the reason shown) when the chosen column cannot be counted that way.
        """
        source = self.source.widget(where) if self.with_synthetic else "data"
        if source == "synthetic":
            size = int(self.size.widget(where))
            counts = log_uniform_counts(size, *SYNTHETIC_RANGE, rng=seed)
            low, high = SYNTHETIC_RANGE
            return pd.Series(counts), f"{size} synthetic counts, log-uniform between {low:,.0f} and {high:,.0f}"
        column = self.column(data)
        if st.session_state.get(column.state_key) not in column.options:  # another dataset's column
            st.session_state[column.state_key] = column.default
        name = column.widget(where)
        values = data.y_train if name == data.target_name else data.X_train[:, data.feature_names.index(name)]
        mode = self.mode.widget(where)
        what = f"training rows of the prepared column {plain(name)}"
        if mode == "categories":
            distinct = np.unique(values)
            if distinct.size > MAX_CATEGORIES:
                where.error(
                    f"This column has {distinct.size:,} distinct values: more than {MAX_CATEGORIES} counts. "
                    "Count it in bins instead."
                )
                return None
            return category_counts(pd.Series(values, name=name)), f"{what}, one count per distinct value"
        bins = int(self.bins.widget(where))
        value_range = PUBLIC_RANGE if mode == "bins" else None
        counts = histogram_counts(pd.Series(values, name=name), bins, value_range)
        return counts, f"{what} in {bins} bins over {'[−1, 1]' if mode == 'bins' else 'its own range'}"
