"""Bounded work: what one click may cost on a server that every visitor shares.

Before a batch of runs starts, its wall time is estimated from the number of runs and
the measured cost of one run of each method on the current problem (the first trial,
which the pages compute anyway). Above ``CONFIRM_SECONDS`` a page asks before going on;
it refuses more than ``MAX_RUNS`` runs or an estimate above ``MAX_SECONDS`` per click.
``MAX_LEVELS`` bounds T, so that one run stays short (about a second at T = 10,000 on
the largest built-in problem): a stopped sweep then ends within a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from accfirst.search.experiments import TIMING

CONFIRM_SECONDS = 20.0
MAX_RUNS = 50_000
MAX_SECONDS = 30 * 60
MAX_LEVELS = 10_000


def duration(seconds: float) -> str:
    """A rough wall time: "under a second", "about 40 s", "about 3 min", "about 1.5 h"."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Estimate:
    """How long a batch of runs would take.

    Parameters
    ----------
    runs : the number of runs.
    seconds : the estimated wall time when the batch has the workers to itself.
    workers : the processes it runs on.
    """

    runs: int
    seconds: float
    workers: int

    @property
    def needs_confirmation(self) -> bool:
        return self.seconds > CONFIRM_SECONDS

    def describe(self) -> str:
        """E.g. "about 3 min for 1,200 runs on 2 cores"."""
        cores = "1 core" if self.workers == 1 else f"{self.workers} cores"
        return f"{duration(self.seconds)} for {self.runs:,} runs on {cores}"

    def refusal(self) -> str | None:
        """Why one click may not start this batch (``None``: it may)."""
        if self.runs > MAX_RUNS:
            return runs_refusal(self.runs)
        if self.seconds > MAX_SECONDS:
            return (
                f"This would take {self.describe()}; one click may start at most {duration(MAX_SECONDS)} of work "
                "on this shared server: choose fewer α values, methods or trials, a smaller T, or run it from "
                "the command line."
            )
        return None


def runs_refusal(runs: int) -> str | None:
    """Why one click may not start ``runs`` runs (``None``: it may)."""
    if runs <= MAX_RUNS:
        return None
    return (
        f"{runs:,} runs is more than one click may start on this shared server ({MAX_RUNS:,}): "
        "choose fewer α values, methods or trials, or run it from the command line."
    )


def estimate(costs: Mapping[str, float], runs_per_method: int, workers: int) -> Estimate:
    """``runs_per_method`` runs of each method at its measured cost (seconds per run), spread over ``workers``."""
    return Estimate(
        runs=runs_per_method * len(costs), seconds=sum(costs.values()) * runs_per_method / workers, workers=workers
    )


def measured_costs(frame: pd.DataFrame) -> dict[str, float]:
    """Seconds per run of each method in a page's frame of runs (its ``TIMING`` column), in the frame's order."""
    return frame.groupby("method", sort=False)[TIMING].mean().to_dict()
