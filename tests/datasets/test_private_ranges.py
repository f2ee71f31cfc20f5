"""The private range of a numeric column: the quantiles' cells, the median ± k median distances, the median centre
(docs/mathematics.md#preparing-the-data-privately).

The utility checks are exact (no randomness: false-failure rate 0). The release checks run the mechanisms at a
budget where a miss is far below 10⁻⁶ (ε·n ≥ 1,000 per quantile, fixed seeds), and allow the released median distance
to be off by more than a rank share the mechanism reaches with probability below 10⁻⁹ at that ε.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accfirst.datasets import from_frame
from accfirst.datasets.prepare.base import ColumnPlan
from accfirst.datasets.prepare.quantile import DEVIATIONS, VALUES, quantile_utility
from accfirst.datasets.prepare.ranges import FEATURE_SPREADS, TARGET_SPREADS, robust_range


def _cell(grid, value: float) -> int:
    """The candidate whose cell [b_i, b_{i+1}) holds ``value``."""
    return int(np.searchsorted(grid.bounds, value, side="right")) - 1


@pytest.mark.parametrize("q", [0.25, 0.5, 0.75])
def test_only_the_cell_holding_the_quantile_scores_zero(q):
    """A candidate that stood for the open gap between its neighbours scored 0 on both sides of the quantile."""
    values = np.sort(np.random.default_rng(1).normal(1000, 300, 4_001))
    utility = quantile_utility(values, q)
    quantile = values[int(np.ceil(q * len(values))) - 1]
    assert np.flatnonzero(utility == 0).tolist() == [_cell(VALUES, quantile)]
    assert utility.max() == 0 and np.all(np.diff(utility[: _cell(VALUES, quantile) + 1]) >= 0)


def test_a_value_many_rows_share_lies_in_one_cell():
    flag = np.sort(np.r_[np.zeros(700), np.ones(300)])
    assert VALUES.candidates[quantile_utility(flag, 0.75) == 0].tolist() == [1.0]
    assert DEVIATIONS.candidates[quantile_utility(flag, 0.5, DEVIATIONS) == 0].tolist() == [0.0]


def test_the_range_is_the_median_plus_or_minus_k_median_distances():
    assert robust_range(10.0, 2.0, 3.0) == (4.0, 16.0)
    assert robust_range(0.0, 0.0, 3.0) == (-1.0, 1.0)  # half the values equal the median: max(1, |M|)
    assert robust_range(-500.0, 0.0, 3.0) == (-1000.0, 0.0)
    # A median drawn far out at a small budget with a tiny distance: M ± 3·10⁻⁶ rounds to M, a range of width 0.
    low, high = robust_range(805842187761.48, 1e-6, 3.0)
    assert (low, high) == (0.0, 2 * 805842187761.48)


def _normal_table(n: int = 20_000) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    x = rng.normal(50, 10, n)
    return pd.DataFrame({"x": x, "flag": (rng.random(n) < 0.3).astype(float), "y": 3 * x + rng.normal(0, 30, n)})


def test_a_normal_column_is_clipped_at_the_share_its_multiple_gives():
    """k = 3 clips 4.3% of a normal column (±2.02σ), k = 1.5 31.2% of a normal target (±1.01σ); the median distance is
    released within a few percent of its rank at this ε, which keeps each share within ±1.5 points."""
    table = _normal_table()
    data = from_frame(table, target="y", task="ridge", prep_epsilon=20.0, noise_seed=3)
    x = data.X_train[:, data.feature_names.index("x")] * data.report.feature_scale
    assert np.mean(np.abs(x) >= 1 - 1e-12) == pytest.approx(2 * 0.0216, abs=0.015)  # a column at ±1 was clipped
    assert FEATURE_SPREADS == 3.0 and TARGET_SPREADS == 1.5
    low, high = np.quantile(table["y"], [0.5 - 0.5 * 0.688, 0.5 + 0.5 * 0.688])
    raw = data.report.to_target_units(np.array([-1.0, 1.0]))
    assert raw[0] == pytest.approx(low, rel=0.05) and raw[1] == pytest.approx(high, rel=0.05)


def test_a_column_with_a_private_range_is_centred_at_its_released_median_and_every_gap_rule_agrees():
    table = _normal_table(4_000)
    table.loc[::7, "x"] = np.nan
    notes = {}
    for missing in ("impute", "median", "centre"):
        data = from_frame(table, target="y", task="ridge", missing=missing, prep_epsilon=20.0, noise_seed=4)
        frame = data.preparation.to_frame()
        x = frame[frame["column"] == "x"]
        assert "private centre" not in set(x["step"])  # the median is released for the range: the centre is free
        notes[missing] = x.loc[x["step"] == "gaps", "note"].iloc[0]
        median = x.loc[x["step"] == "private median", "note"].iloc[0].split("private median ")[1].split(" ")[0]
        assert median in x.loc[x["step"] == "centre", "note"].iloc[0]
        assert median in notes[missing]
    flag = data.X_train[:, data.feature_names.index("flag")]
    assert np.unique(flag.round(12)).size == 2 and flag.min() == 0  # a flag keeps two values: 0 at its median, 1 above


def test_a_private_target_interval_holds_every_prepared_target_of_every_neighbour():
    """The public interval of a ridge target (docs/mathematics.md#a-target-in-the-units-people-read) is a function of
    the plan alone and holds every row the plan can build: a skewed target with gaps gets an interval narrower than
    [−1, 1] on one side, holding 0; tables whose rows are replaced by extreme values or gaps keep every prepared target,
    training and test, inside their own interval; plans centred off their range, or without one, give an interval
    holding every value they can build and 0."""
    rng = np.random.default_rng(8)
    n = 4_000
    x = rng.normal(size=n)
    table = pd.DataFrame({"x": x, "y": np.exp(1 + 0.6 * x + rng.normal(0, 0.5, n))})
    table.loc[::9, "y"] = np.nan
    data = from_frame(table, target="y", task="ridge", noise_seed=11)
    low, high = data.target_range
    assert -1.0 <= low <= 0.0 <= high <= 1.0 and high - low < 1.99
    for value in (None, 1e9, -1e9, np.nan, 0.0):
        neighbour = table.copy()
        if value is not None:
            neighbour.loc[neighbour.index[:50], "y"] = value  # training and test rows alike
        other = from_frame(neighbour, target="y", task="ridge", noise_seed=11)
        low, high = other.target_range
        for y in (other.y_train, other.y_test):
            assert y.min() >= low - 1e-12 and y.max() <= high + 1e-12
        assert np.any(np.isclose(other.y_train, high)) or np.any(np.isclose(other.y_train, low))  # a clipped target
    for centre, spread, values in ((10.0, 4.0, [2.0, 30.0]), (-3.0, 1.0, [-50.0, 7.0])):
        plan = ColumnPlan("y", "numeric", low=2.0, high=10.0, centre=centre, spread=spread)
        scaled = np.clip((plan.clipped(np.array(values)) - plan.centre) / plan.spread, -1, 1)
        interval = plan.target_interval
        assert interval[0] <= 0.0 <= interval[1]
        assert np.all((scaled >= interval[0]) & (scaled <= interval[1]))
    assert ColumnPlan("y", "numeric").target_interval == (-1.0, 1.0)
