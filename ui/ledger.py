"""The budget page's ledger: the queue and its twin under doubling run in one (ε, δ) budget each, drawn live.

Each arm is its own release under its own budget: the queue as queued, and the same queue with every method replaced by
doubling (``Analysis.under``), which shows how far the same budget goes without noise reduction. Both are kept per
session (the queue may run on an upload), and both go into the session's spend on a real table (``ui.spend``), each at
the budget it runs in beyond the table's preparation (the filters' guarantee).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from accfirst.accounting.session import Analysis, SessionStep, fitted, run_session
from accfirst.interpret import format_delta
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from ui.cache import session_memo
from ui.dataset import Selection
from ui.noise import noise_seed
from ui.queue import short_label
from ui.spend import record_release
from ui.text import plain

# The arms of the comparison: a title, the method every analysis runs under (None: as queued) and the method whose
# colour the ledger's figure gives the arm.
ARMS = (("Your queue", None, NoiseReduction.key), ("The same queue under doubling", Doubling.key, Doubling.key))


@dataclass(frozen=True)
class BudgetRun:
    """The settings of one run of the queue (hashable): the budget, its split and the searches' settings."""

    epsilon: float
    delta: float
    share: float
    gamma: float
    eps_max: float
    cap: float
    radius_mode: str
    seed: int | None


def ledger_table(ledger: pd.DataFrame, analyses: list[Analysis]) -> pd.DataFrame:
    """The ledger as a visitor reads it: amounts with their unit, δ beside each declared bound."""

    def amounts(column: str) -> list[str]:
        # A round refused before it could declare a bound (a public check) has none: "—".
        return [f"{value:.3g} {unit}" if value == value else "—" for value, unit in zip(ledger[column], ledger["unit"])]

    return pd.DataFrame(
        {
            "#": ledger["analysis"],
            "analysis": [
                short_label(analyses[i - 1].under(m)) if i else "preparing the table"
                for i, m in zip(ledger["analysis"], ledger["method"])
            ],
            "outcome": ledger["status"],
            "declared": amounts("declared"),
            "δ": [format_delta(d) for d in ledger["delta"]],
            "charged": amounts("realised"),
            "refund": amounts("refund"),
            "remaining": amounts("remaining"),
        }
    )


def draw_ledger(where: Any, ledger: pd.DataFrame, analyses: list[Analysis]) -> None:
    """One arm's ledger so far in ``where``: how many fit, the table, and each refusal or failure in words."""
    with where.container():
        running = f" ({len(ledger)} of {len(analyses)} run so far)" if len(ledger) < len(analyses) else ""
        st.markdown(f"**{fitted(ledger)} of {len(analyses)} analyses fit**{running}")
        st.dataframe(ledger_table(ledger, analyses), hide_index=True, width="stretch")
        for status, icon in (("refused", "✋"), ("failed", "⚠️")):
            rows = ledger[ledger["status"] == status]
            if len(rows):
                lines = [
                    plain(f"Analysis {row['analysis']} ({row['label']}): {row['note']}") for _, row in rows.iterrows()
                ]
                st.error("  \n".join(lines), icon=icon)


def run_queues(
    chosen: Selection, queue: tuple[str, ...], counts: tuple[float, ...], run: BudgetRun
) -> list[list[SessionStep]]:
    """Both arms, each drawn live under its title as it runs (their steps, in ``ARMS``' order); kept per session."""
    slots = []
    for title, _, _ in ARMS:
        st.markdown(f"##### {title}")
        slots.append(st.empty())
    key = (chosen.problem_key, queue, counts, run)
    seed = noise_seed(run.seed, ("budget", *key))  # a release's noise: drawn once for these choices
    steps: list[list[SessionStep]] = session_memo(
        "budget", key, lambda: _run_live(chosen, queue, counts, run, seed, slots), max_entries=4
    )
    analyses = [Analysis.from_text(item) for item in queue]
    prepared = chosen.problem()  # what its preparation charged first in each budget (0 when evaluation only)
    for (title, _, _), slot, arm in zip(ARMS, slots, steps, strict=True):
        draw_ledger(slot, arm[-1].ledger, analyses)
        epsilon, delta = run.epsilon - prepared.prep_epsilon, run.delta - prepared.prep_delta
        record_release(chosen, ("budget", title, key), epsilon, delta)
    return steps


def _run_live(
    chosen: Selection, queue: tuple[str, ...], counts: tuple[float, ...], run: BudgetRun, seed: int, slots: list[Any]
) -> list[list[SessionStep]]:
    problem = chosen.problem()  # the page built it (cached)
    options = SearchOptions(eps_max=run.eps_max, radius_mode=run.radius_mode)
    analyses = [Analysis.from_text(item) for item in queue]
    steps: list[list[SessionStep]] = []
    for (_, method, _), slot in zip(ARMS, slots, strict=True):
        arm = [a if method is None else a.under(method) for a in analyses]
        steps.append([])
        for step in run_session(
            problem, arm, list(counts), run.epsilon, run.delta, run.share, run.gamma, options, cap=run.cap, seed=seed
        ):
            steps[-1].append(step)
            draw_ledger(slot, step.ledger, analyses)
    return steps
