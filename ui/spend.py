"""What this session has spent on a real table: its preparation once, and every release the pages showed from it.

A table from a real source (an upload, a built-in real table) is prepared once per session and kept while its file
and its preparation choices stay the same (``ui.upload``); every run the pages show from it is a release of its own,
and together they reveal what all of them would: their ε and δ add up (basic composition,
docs/mathematics.md#many-analyses-one-budget). The same choices give back the same release (its noise is drawn once
per set of choices in the session, ``ui.noise``), so a rerun or a return costs nothing more; a new session starts
afresh, and prepares an upload again. Each release is recorded here under what makes it the same release (the table,
λ and the radius, the request and the trial), with the ε and δ it added beyond the preparation (a run whose test never
passed released nothing and is charged its declared top). Evaluation-only figures (which read the data without noise)
are not releases and are not counted: they are labelled where they appear.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from accfirst.datasets.prepared import EVALUATION_MODE
from accfirst.interpret import format_delta, format_epsilon
from ui.dataset import Selection

STATE_KEY = "ui.spend"


@dataclass(frozen=True)
class Spend:
    """This session's spend on one table: the preparation's (ε, δ) once, and its releases' sum."""

    prep_epsilon: float
    prep_delta: float
    releases: int
    epsilon: float
    delta: float
    evaluation: bool
    upload: bool = False

    @property
    def total_epsilon(self) -> float:
        return self.epsilon + (0.0 if self.evaluation else self.prep_epsilon)

    @property
    def total_delta(self) -> float:
        return min(self.delta + self.prep_delta, 1.0)


def _ledger(chosen: Selection) -> dict[Hashable, tuple[float, float]]:
    return st.session_state.setdefault(STATE_KEY, {}).setdefault(chosen.key, {})


def record_release(chosen: Selection, key: Hashable, epsilon: float, delta: float) -> None:
    """Record one release from ``chosen``'s table (nothing for data generated from public parameters)."""
    if chosen.data.preparation.private_rows:
        _ledger(chosen)[(chosen.lam, chosen.radius, key)] = (float(epsilon), float(delta))


def record_runs(chosen: Selection, key: Hashable, runs: pd.DataFrame) -> None:
    """Record every run of a results frame as a release: ``key`` and the run's method, target and trial identify it;
    its ε and δ beyond the preparation's."""
    for row in runs.to_dict("records"):
        own_eps = float(row["eps_total"]) - float(row["eps_prep"])
        own_delta = float(row["delta"]) - float(row.get("delta_prep", 0.0))
        run = (key, row["method"], _aim(row), row["trial"])
        record_release(chosen, run, own_eps, own_delta)


def _aim(row: dict[str, Any]) -> float:
    """What a run aimed at: its κ, else its α, else its goal in R² or accuracy (a number, never NaN, so that the same
    run is the same release)."""
    return next(float(row[name]) for name in ("kappa", "alpha", "goal") if not math.isnan(float(row[name])))


def session_spend(chosen: Selection) -> Spend:
    """What this session has spent on ``chosen``'s table so far."""
    releases = _ledger(chosen).values()
    data = chosen.data
    return Spend(
        prep_epsilon=data.prep_epsilon,
        prep_delta=data.prep_delta,
        releases=len(releases),
        epsilon=float(sum(eps for eps, _ in releases)),
        delta=float(sum(delta for _, delta in releases)),
        evaluation=data.preparation.mode == EVALUATION_MODE,
        upload=not chosen.shared,
    )


def spend_sentence(spend: Spend) -> str:
    """The session's spend in one sentence (Markdown), for beside the headline."""
    runs = "1 release" if spend.releases == 1 else f"{spend.releases:,} releases"
    delta = f", δ = {format_delta(spend.total_delta)}" if spend.total_delta > 0 else ""
    if spend.evaluation:
        paid = f"{runs} (the preparation read the data without noise: evaluation only, not counted)"
    else:
        paid = f"preparing it once (ε = {format_epsilon(spend.prep_epsilon)}) and {runs}"
    again = " A new session (a reload) prepares your file again: a new release." if spend.upload else ""
    return (
        f"**This session's spend on this table: ε = {format_epsilon(spend.total_epsilon)}{delta}** — {paid}. "
        f"Releases add up; showing the same choices again shows the same release and costs nothing more.{again}"
    )


def show_spend(where: Any, chosen: Selection) -> None:
    """The session's spend on a real table (nothing for data generated from public parameters)."""
    if chosen.data.preparation.private_rows:
        where.info(spend_sentence(session_spend(chosen)), icon="🧾")
