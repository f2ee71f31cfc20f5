"""Attack: a released record carries how long a run took.

How long a run takes depends on the data — where its search stopped, how many levels needed an exact
solve, how hard each solve was — and no ε covers it. docs/mathematics.md#what-an-observer-sees: no output
that leaves a computation records it. Measured on main (856a42a): every results frame, ``results.csv``
and the explorer's download had a ``seconds`` column (one wall-clock duration per run), ``report.html``
stated the sweep's "wall time", and ``accfirst run`` printed ``seconds=…`` in the run's record.
Deterministic: it reads the files and records.
"""

from __future__ import annotations

import pandas as pd

from accfirst import RidgeProblem, run_trials
from accfirst.cli import main
from accfirst.methods.options import SearchOptions
from accfirst.search.experiments import COLUMNS, MODEL, run_cells, search
from tests.data import make_ridge_data


def test_no_results_frame_or_record_holds_a_timing(ridge_problem: RidgeProblem) -> None:
    frame = run_trials(ridge_problem, [0.05], 0.1, ["nr", "doubling"], 2, seed=0, T=50)
    assert "seconds" not in frame.columns and list(frame.columns) == list(COLUMNS)
    run = search(ridge_problem, "nr", 0.05, 0.1, 0, SearchOptions(T=50))
    assert "seconds" not in run.to_dict() and "seconds" not in repr(run)
    assert run.seconds > 0  # kept for the caller's own diagnostics


def test_the_command_line_writes_no_timing_into_its_results(tmp_path, capsys) -> None:
    X, y = make_ridge_data(0, 600, 3)
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    table.to_csv(tmp_path / "rows.csv", index=False)
    argv = ["sweep", "--csv", str(tmp_path / "rows.csv"), "--target", "y", "--alphas", "0.2", "--trials", "2"]
    assert main([*argv, "--methods", "nr", "--T", "30", "--workers", "1", "--out", str(tmp_path / "out")]) == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert "seconds" not in results.columns
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "wall time" not in report
    rows = run_cells(RidgeProblem(X, y, 0.005), 0.1, 0, SearchOptions(T=30), [("nr", 0.2, 0)])
    # The rows a page measures its work with and scores the released model from; no frame keeps either.
    assert set(rows[0]) - set(COLUMNS) == {"seconds", MODEL}
