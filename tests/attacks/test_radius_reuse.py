"""Attack: two released radii that share their noise give ‖θ*‖ away.

The private radius is R = N + b·L + m (docs/mathematics.md#a-private-radius): N = ‖θ*‖, L a unit
Laplace draw, b = Δ_N/ε_R and the margin m public, both set by the run's α. If two runs at two α drew
the same L, their radii R₁, R₂ are two equations in N and L, and an attacker who has read the code
solves them: N = R₁ − m₁ − b₁·L with L = ((R₁ − m₁) − (R₂ − m₂))/(b₁ − b₂). The released radius is the
``norm_bound`` column of every results frame.

Measured on main (856a42a), whose radius noise was derived from the generator's seed rather than drawn
from its state: every pair below gave N to within 3·10⁻⁷·Δ_N (5 of 5 pairs from one generator, 5 of 5
pairs of ``filtered_search`` rounds on one filter). With fresh noise the solution is off by
b₁b₂(L₂ − L₁)/(b₂ − b₁), about Δ_N in size: a pair lands within 10⁻⁴·Δ_N of N with probability about
6·10⁻⁶, so these tests fail falsely with probability below 10⁻⁴ (fixed seeds: deterministic).
"""

from __future__ import annotations

import numpy as np
import pytest

from accfirst import RidgeProblem
from accfirst.accounting.filters import ExPostFilter, filtered_search
from accfirst.methods.options import SearchOptions
from accfirst.methods.pipeline import run_step
from accfirst.methods.radius import RadiusPlan
from accfirst.search.experiments import search
from tests.attacks import norm_from_two_radii
from tests.data import make_ridge_data

ALPHAS = (0.05, 0.1)
PAIRS = 5
# Within this share of Δ_N the attacker has ‖θ*‖ (the lattice's rounding is far below it).
RECOVERED = 1e-4


@pytest.fixture(scope="module")
def problem() -> RidgeProblem:
    X, y = make_ridge_data(0, 20_000, 6)
    return RidgeProblem(X, y, 0.005)


def plans(problem: RidgeProblem) -> list[RadiusPlan]:
    """The public plan of the radius each α buys (the attacker computes it from public quantities)."""
    bought = [run_step(problem, "nr", alpha, 0.1, SearchOptions()).bought for alpha in ALPHAS]
    assert all(plan is not None for plan in bought), "the rule must buy a radius at both α for this attack"
    return [plan for plan in bought if plan is not None]


def recoveries(problem: RidgeProblem, pairs: list[list[float]]) -> int:
    """How many pairs of released radii give ‖θ*‖ (over the ceiling's ball) to within ``RECOVERED``·Δ_N."""
    chosen = plans(problem)
    truth = float(np.linalg.norm(run_step(problem, "nr", ALPHAS[0], 0.1, SearchOptions()).ceiling.theta_star))
    return sum(abs(norm_from_two_radii(chosen, radii) - truth) < RECOVERED * chosen[0].sensitivity for radii in pairs)


def test_runs_from_one_generator_release_independent_radii(problem):
    rng = np.random.default_rng(29)
    pairs = [
        [search(problem, "nr", alpha, 0.1, rng, SearchOptions()).norm_bound for alpha in ALPHAS] for _ in range(PAIRS)
    ]
    assert recoveries(problem, pairs) == 0


def test_two_rounds_of_one_filter_release_independent_radii_and_are_billed_for_both(problem):
    rng = np.random.default_rng(30)
    budget = ExPostFilter(1e6)
    pairs = []
    for _ in range(PAIRS):
        runs = [filtered_search(budget, problem, "nr", alpha, 0.1, rng) for alpha in ALPHAS]
        assert all(run.status == "released" and run.result is not None for run in runs)
        pairs.append([run.result.norm_bound for run in runs if run.result is not None])
    assert recoveries(problem, pairs) == 0
    charged = budget.ledger[budget.ledger["status"] == "charged"]
    assert len(charged) == 2 * PAIRS  # every radius released is a round billed on its own
