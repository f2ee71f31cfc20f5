"""Attack: a budget session's default noise is public.

``run_session`` (the Budget page's Python API) runs a queue of analyses on a table and yields its
ledger. If its noise came from a default seed, an attacker who has read the code would replay the
session on each candidate table and keep the one whose ledger matches: neighbouring counts whose
ledgers differ under that seed are told apart with certainty. Measured on main (856a42a), where the
default was seed 0 and ``seed=None`` was refused: 16 of 16 default sessions on diabetes gave one and
the same ledger, the ledger of the replay with seed 0.

With noise from the operating system the ledgers vary from call to call. Over 200 seeds this queue's
transcript (each round's status and charge) took 11 values, the two commonest with probability 0.46
and 0.41, so 16 calls all agree with probability below 10⁻⁵: the false-failure rate.
"""

from __future__ import annotations

import pytest

from accfirst import AccFirstError
from accfirst.accounting.session import Analysis, run_session
from accfirst.datasets import load_builtin
from accfirst.erm.problems import prepared_problem
from accfirst.validation import REPEATABLE

COUNTS = [40.0, 52.0, 64.0, 75.0, 90.0, 120.0, 150.0, 180.0]
QUEUE = [Analysis("counts", "nr", 0.1)]
CALLS = 16


@pytest.fixture(scope="module")
def problem():
    return prepared_problem(load_builtin("diabetes"), 0.005)


def session(problem, **seed: int):
    *_, last = run_session(problem, QUEUE, COUNTS, 30.0, 1e-6, **seed)
    return last


def transcript(problem, **seed: int) -> str:
    """What a session releases: every round's status and charge."""
    return str(session(problem, **seed).rounds[["status", "realised"]].to_numpy().tolist())


def test_a_session_on_a_real_table_draws_its_noise_from_the_operating_system(problem):
    calls = [transcript(problem) for _ in range(CALLS)]
    assert len(set(calls)) > 1
    replay = transcript(problem, seed=0)
    assert sum(ledger == replay for ledger in calls) < CALLS


def test_each_step_says_where_its_noise_came_from_and_a_seed_is_not_private(problem):
    assert session(problem).noise.startswith("operating-system entropy (a private release")
    seeded = session(problem, seed=7)
    assert transcript(problem, seed=7) == transcript(problem, seed=7)
    assert seeded.noise == f"seed 7 ({REPEATABLE})"
    with pytest.raises(AccFirstError, match="seed"):
        session(problem, seed=-1)
