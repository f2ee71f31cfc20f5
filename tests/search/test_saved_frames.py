"""Saved frames of ``run_trials``: a refactor that changes no number keeps them equal.

Each case runs every method that applies (fixed seed) on a small ridge or logistic problem and
compares the whole frame with a frame saved from an
earlier commit. A deliberate change of numbers regenerates them (``python -m
tests.search.test_saved_frames``) in a commit that says why. No randomness can make this fail:
every run's noise comes from the fixed seed, so a difference is a changed number.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from accfirst import LogisticProblem, RidgeProblem, run_trials
from tests.data import make_logistic_data, make_ridge_data

FRAMES = Path(__file__).parent / "frames"


def _ridge() -> RidgeProblem:
    X, y = make_ridge_data(0, 2000, 6)
    return RidgeProblem(X, y, 0.005)


def _logistic() -> LogisticProblem:
    X, y = make_logistic_data(1, 2000, 5)
    return LogisticProblem(X, y, 0.005)


# name → (problem builder, run_trials keywords)
CASES = {
    "ridge-laplace": (_ridge, {"methods": ["nr", "doubling", "theory", "gibbs"]}),
    "ridge-laplace-output-paper": (
        _ridge,
        {"methods": ["nr", "doubling", "theory"], "generator": "output", "calibration": "paper-code", "T": 300},
    ),
    "ridge-gaussian": (_ridge, {"methods": ["nr", "doubling"], "noise": "gaussian"}),
    "logistic-laplace": (_logistic, {"methods": ["nr", "doubling", "theory", "gibbs"], "trials": 2}),
    "logistic-gaussian": (_logistic, {"methods": ["nr", "doubling"], "noise": "gaussian"}),
}


def frame(name: str) -> pd.DataFrame:
    """The frame of one case (a results frame holds no timing: docs/mathematics.md#what-an-observer-sees)."""
    build, keywords = CASES[name]
    keywords = {"alphas": [0.02, 0.1], "gamma": 0.1, "trials": 3, "seed": 7, **keywords}
    return run_trials(build(), **keywords)


@pytest.mark.parametrize("name", sorted(CASES))
def test_frame_unchanged(name: str) -> None:
    saved = pd.read_csv(FRAMES / f"{name}.csv")
    # Read back as the saved frame was: an empty text column (no target in R² or accuracy) reads as NaN in both.
    now = pd.read_csv(io.StringIO(frame(name).to_csv(index=False, float_format="%.17g")))
    assert list(now.columns) == list(saved.columns)
    for column in now.columns:
        left, right = now[column].to_numpy(), saved[column].to_numpy()
        if pd.api.types.is_numeric_dtype(saved[column]) and not pd.api.types.is_bool_dtype(saved[column]):
            # CSV keeps 17 significant digits: equal up to the last bit's rounding.
            np.testing.assert_allclose(left.astype(float), right.astype(float), rtol=1e-13, atol=0, err_msg=column)
        else:
            assert [str(v) for v in left] == [str(v) for v in right], column


if __name__ == "__main__":
    FRAMES.mkdir(exist_ok=True)
    for case in sys.argv[1:] or sorted(CASES):
        frame(case).to_csv(FRAMES / f"{case}.csv", index=False, float_format="%.17g")
        print("saved", case)
