"""Running a sweep: what it would cost, the go-ahead for a long one, the run with its Stop button, and the result kept.

Before a sweep the page shows its runs and the time estimated from one measured run of each method (``ui.work``),
refuses more than one click may start and asks before a long one; the question and its button are gone once the sweep
starts. On built-in data the sweep runs on the server's worker processes (``ui.runs.worker_pool``), shared by every
visitor; an upload's runs stay in the page's own thread. Pressing Stop — or changing any setting — makes Streamlit stop
the script at the next progress update (at least every 0.25 s); the page then says how far it got and keeps the
previous results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from accfirst.search.sweep import sweep
from accfirst.snippet import RunSettings
from ui.dataset import Selection
from ui.errors import call, package_errors
from ui.runs import RunRequest, first_trials, worker_pool, workers
from ui.spend import record_runs
from ui.sweep_settings import report_settings
from ui.work import Estimate, estimate, measured_costs, runs_refusal

RESULT_KEY = "sweep.result"
RUNNING_KEY = "sweep.running"
CONFIRMING_KEY = "sweep.confirming"


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep: its settings, its runs, the report's settings block, the grid as typed and the data's steps."""

    request: RunSettings
    results: pd.DataFrame
    report: dict[str, object]
    alphas_text: str
    steps: tuple[str, ...]


def sweep_cost(chosen: Selection, request: RunSettings, seed: int) -> Estimate | None:
    """Say how many runs the sweep is and how long it would take; ``None`` (with the reason shown) when one click
    may not start it."""
    total = len(request.alphas) * len(request.methods) * request.trials
    refusal, cost = runs_refusal(total), None
    if refusal is None:
        # One run of each method at the middle α (the explorer's trial 0 there, cached alike) measures the cost.
        middle = request.alphas[len(request.alphas) // 2]
        probe = RunRequest(middle, request.gamma, request.methods, 1, seed, request.options)
        with st.spinner("Timing one run of each method…"), package_errors():
            cost = estimate(
                measured_costs(first_trials(chosen, probe)), len(request.alphas) * request.trials, workers(chosen)
            )
        refusal = cost.refusal()
    st.markdown(
        f"**{total:,} runs**: {len(request.methods)} method(s) × {len(request.alphas)} α × {request.trials} trials on "
        f"{chosen.data.n:,} rows × {chosen.data.p} features" + (f", {cost.describe()}." if cost is not None else ".")
    )
    if refusal is not None:
        st.error(refusal, icon="✋")
        return None
    return cost


def run_sweep_controls(
    chosen: Selection, request: RunSettings | None, cost: Estimate | None, seed: int | None, alphas: str
) -> None:
    """The Run sweep button (and the go-ahead a long sweep needs); the sweep itself when asked, kept in the session."""
    run_column, stop_column, _ = st.columns([1, 1, 4])
    run = run_column.button("Run sweep", type="primary", disabled=request is None, key="sweep.run")
    if run and cost is not None and cost.needs_confirmation:
        st.session_state[CONFIRMING_KEY] = request
        run = False
    confirm = st.empty()
    if request is not None and cost is not None and st.session_state.get(CONFIRMING_KEY) == request:
        with confirm.container():
            st.warning(f"This sweep would take {cost.describe()}; it shares the server with every visitor.", icon="⏳")
            run = st.button(f"Run it ({cost.describe()})", key="sweep.confirm")
    stopped = st.session_state.pop(RUNNING_KEY, None)
    if stopped is not None and not run:
        kept = (
            "the results below are from the last sweep that finished"
            if RESULT_KEY in st.session_state
            else "no sweep has finished yet"
        )
        st.warning(f"The sweep was stopped after {stopped[0]:,} of {stopped[1]:,} runs; {kept}.", icon="⏹️")
    if run and request is not None and seed is not None:
        st.session_state.pop(CONFIRMING_KEY, None)
        confirm.empty()  # the question is answered: its box and button go
        st.session_state[RESULT_KEY] = _run(chosen, request, seed, alphas, stop_column)


def _run(chosen: Selection, request: RunSettings, seed: int, alphas: str, stop_column: Any) -> SweepResult:
    """The sweep, with a Stop button and a progress bar that ends with how long it took."""
    problem = call(chosen.problem)
    stop_slot = stop_column.empty()
    stop_slot.button("Stop", key="sweep.stop", help="Stop the sweep; the previous results stay.")
    bar = st.progress(0.0, text="Starting…")
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        st.session_state[RUNNING_KEY] = (done, total)
        bar.progress(done / total, text=f"Sweep: {done:,} of {total:,} runs")

    total = len(request.alphas) * len(request.methods) * request.trials
    st.session_state[RUNNING_KEY] = (0, total)
    shared = {"pool": worker_pool(), "source": chosen.source} if chosen.shared else {}
    with package_errors():
        frame = sweep(
            problem,
            request.alphas,
            request.gamma,
            request.methods,
            request.trials,
            seed,
            workers=1,
            progress=progress,
            **shared,
            **request.options.to_dict(),
        )
    st.session_state.pop(RUNNING_KEY, None)
    stop_slot.empty()
    bar.progress(1.0, text=f"Done: {total:,} runs in {time.perf_counter() - started:.0f} s")
    record_runs(chosen, ("sweep", seed, request.gamma, request.options), frame)
    return SweepResult(request, frame, report_settings(request, chosen.title, alphas), alphas, chosen.data.report.steps)
