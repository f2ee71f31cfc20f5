"""The ledger figure of a queue (docs/mathematics.md#many-analyses-one-budget): charges and bounds as a share of their
part, refusals marked."""

from __future__ import annotations

import pandas as pd
import pytest

from accfirst.plots.budget import figure_ledger


def ledger(statuses: list[str], realised: list[float], declared: list[float]) -> pd.DataFrame:
    n = len(statuses)
    return pd.DataFrame(
        {
            "analysis": range(1, n + 1),
            "label": [f"a{i}" for i in range(n)],
            "kind": ["regression"] * n,
            "unit": ["ε"] * n,
            "budget": [4.0] * n,
            "declared": declared,
            "realised": realised,
            "status": statuses,
            "note": [""] * n,
        }
    )


@pytest.fixture
def figure():
    return figure_ledger(
        {
            "nr": ledger(["released", "released"], [1.0, 2.0], [2.0, 2.0]),
            "doubling": ledger(["released", "refused"], [3.0, 0.0], [4.0, 8.0]),
        }
    )


def test_bars_are_charges_as_a_share_of_the_part(figure):
    bars = [t for t in figure.data if t.type == "bar"]
    assert [list(b.y) for b in bars] == [[25.0, 50.0], [75.0, 0.0]]
    assert list(bars[0].x) == ["1. regression", "2. regression"]


def test_declared_ticks_leave_out_refused_analyses_and_refusals_are_marked(figure):
    ticks = {t.name: list(t.y) for t in figure.data if "declared" in t.name}
    nr, doubling = ticks.values()
    assert nr == [50.0, 50.0] and doubling[0] == 100.0 and pd.isna(doubling[1])
    (refused,) = [t for t in figure.data if t.name.endswith("refused")]
    assert list(refused.x) == ["2. regression"] and refused.marker.symbol == "x"
    assert "doubling" in refused.name


def test_titles_say_what_is_drawn(figure):
    assert figure.layout.title.text == "Privacy charged per analysis"
    assert figure.layout.yaxis.title.text == "% of its part of the budget"
