"""Attack: replay a public seed to strip a release's noise.

An attacker who has read the code knows every default. If a release on real data drew its noise
from a default seed, replaying that seed would give back the noise exactly and so the true values
(an ``accounting counts`` with a public ``--seed 0`` did: max |recovered − true| = 0 over 27 counts).
Here the default draws from the operating system: replaying any seed the code names recovers
nothing, two releases differ, and a seed the user gives is said to make a non-private run.
No randomness can make these tests fail falsely: OS-entropy releases collide with a replay with
probability 2⁻¹²⁸.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accfirst.accounting.counts import category_counts, compare_counts
from accfirst.cli import main
from accfirst.validation import REPEATABLE

# Every seed the code base uses as a default somewhere: the attacker tries them all.
CANDIDATE_SEEDS = (0, 1, 7, 42, 2017, 1999)


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"town": rng.choice([f"t{i}" for i in range(27)], size=40_000)})
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path, category_counts(frame["town"])


def _released(out) -> pd.DataFrame:
    return pd.read_csv(out / "results.csv", keep_default_na=False)


def test_replaying_any_default_seed_recovers_nothing_from_counts_of_a_table(table, tmp_path, capsys):
    path, counts = table
    argv = ["counts", "--csv", str(path), "--column", "town", "--rel-error", "0.1", "--methods", "nr"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    first, second = _released(tmp_path / "a"), _released(tmp_path / "b")
    assert not np.array_equal(first["released"].to_numpy(), second["released"].to_numpy())
    for seed in CANDIDATE_SEEDS:
        replay = compare_counts(counts, 0.1, 1.0, 1e-6, methods=["nr"], seed=seed)
        assert not np.array_equal(replay["released"].to_numpy(), first["released"].to_numpy())
    report = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert "operating-system entropy" in report and REPEATABLE not in report


def test_a_seed_given_on_real_data_is_named_a_repeatable_run(table, tmp_path):
    path, counts = table
    argv = ["counts", "--csv", str(path), "--column", "town", "--rel-error", "0.1", "--methods", "nr", "--seed", "7"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    replay = compare_counts(counts, 0.1, 1.0, 1e-6, methods=["nr"], seed=7)
    np.testing.assert_array_equal(_released(tmp_path / "a")["released"], replay["released"])  # the replay works …
    assert f"7 ({REPEATABLE})" in (tmp_path / "a" / "report.html").read_text(encoding="utf-8")  # … and says so


def test_a_run_on_real_data_is_not_repeatable_by_default(capsys):
    argv = ["run", "--dataset", "diabetes", "--alpha", "0.3", "--T", "100"]
    assert main(argv) == 0
    first = _model(capsys.readouterr().out)
    assert main(argv) == 0
    assert _model(capsys.readouterr().out) != first
    assert main([*argv, "--seed", "0"]) == 0 and REPEATABLE in capsys.readouterr().out
    # A simulation on data generated from public parameters stays repeatable, seed 0 by default.
    synthetic = ["run", "--dataset", "synthetic-intrusion", "--alpha", "0.1", "--T", "100"]
    assert main(synthetic) == 0
    once = capsys.readouterr().out
    assert main(synthetic) == 0
    assert _model(capsys.readouterr().out) == _model(once) and REPEATABLE not in once


def _model(printed: str) -> tuple[str, ...]:
    """What a printed run reveals of its released model: its norm and excess risk (continuous in the noise)."""
    return tuple(printed.split(f"{name}=")[1].split(",")[0] for name in ("theta_norm", "excess_risk"))
