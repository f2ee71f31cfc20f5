"""Attack: a search inside a filter on a privately prepared table leaves the filter stuck.

A privately prepared table carries the preparation's ε_prep in every run's total. A filter admits a
search on its declared bound, which leaves the preparation out (it is paid once per table); if the
filter then charged the run's total, the charge would exceed the bound whenever ε_prep exceeds the
refund: the charge raised outside the round, the model was lost, the round stayed open (every later
admission raised "charge the admitted round before admitting another"), and the error quoted the
realised ε. Measured on main (856a42a) on diabetes (ε_prep = 12.7, a grid topped at ε_max = 10 as a budget
sets it) with ``radius_mode`` "free" and "none": the first search that passed its test raised in ``charge()``
("got 29.9"), and the filter admitted nothing after it.

Now the bound and the charge cover the same parts: a search on a table whose preparation was not
charged to the filter is refused before it reads anything (``charge_preparation`` charges it once, as a
round of its own), and no round is ever left open. Deterministic: fixed seeds.
"""

from __future__ import annotations

import pytest

from accfirst import ExPostFilter, SearchOptions, filtered_search
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem


@pytest.fixture(scope="module")
def problem():
    return prepared_problem(load_builtin("diabetes", noise_seed=3), 0.005)


@pytest.mark.parametrize("radius_mode", ["free", "none"])
def test_a_search_on_a_privately_prepared_table_leaves_the_filter_usable(problem, radius_mode):
    assert problem.prep_epsilon > 1
    budget = ExPostFilter(1e4)
    options = SearchOptions(T=50, eps_max=10.0, radius_mode=radius_mode)
    runs = [filtered_search(budget, problem, "nr", 0.3, 0.1, seed, options) for seed in range(3)]
    ledger = budget.ledger
    assert len(ledger) == len(runs)  # every round closed: none is left open
    assert budget.spent <= budget.budget
    for run in runs:
        assert run.status in ("refused", "released", "fallback")
        if run.result is not None:
            assert run.charged <= run.declared
    assert not any(f"{problem.prep_epsilon:.4g}" in str(value) for value in ledger["reason"])
