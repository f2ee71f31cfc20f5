"""The explorer's search, step by step: one trial of each searching method replayed with its trace.

A replay is the same run as the trial's row (same seed, same output), kept with its hypotheses: the noisy risks the
private test saw, its noisy thresholds and, for teaching, the true excess risks (evaluation only). The theory approach
and the Gibbs posterior release one hypothesis at an ε fixed in advance: they have no search, and a run at a relative
target whose data showed no signal tested nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from accfirst import RunResult
from accfirst.methods.registry import METHODS
from accfirst.plots.explorer import figure_search
from ui.charts import show_chart
from ui.dataset import Selection
from ui.errors import package_errors
from ui.explorer_settings import EXACT, SHOW
from ui.runs import RunRequest, traced_run

SEARCH_CAPTION = (
    "Each point is one private hypothesis, noisiest (most private) first. The test sees only the noisy risk and the "
    "noisy threshold and stops at the first level where the noisy risk is at or below it. The true excess risks "
    "(grey) are computed for teaching only: they read the data and are not private. ▲ marks levels where a certified "
    "lower bound was enough to reject the hypothesis."
)


@dataclass(frozen=True)
class Replay:
    """The trial replayed (``show``), whether every true excess risk was computed, and each method's run of it."""

    show: int
    exact: bool
    traced: dict[str, RunResult] = field(default_factory=dict)


def replay_section(chosen: Selection, request: RunRequest) -> Replay:
    """Replay the trial chosen below the heading for every method; draw each search (none when the trial does not
    exist)."""
    st.subheader("The search, step by step")
    replay, exactness = st.columns([1, 2], vertical_alignment="bottom")
    show = int(SHOW.widget(replay))
    exact = bool(EXACT.widget(exactness))
    if show >= request.trials:
        st.error(f"Trial {show} does not exist: trials are numbered 0 to {request.trials - 1}.")
        return Replay(show, exact)
    traced: dict[str, RunResult] = {}
    with st.spinner("Replaying the trial…"), package_errors(stop=False):
        traced = {m: traced_run(chosen, request, m, show, exact=exact) for m in request.methods}
    searching = [m for m in traced if METHODS[m].tests_accuracy and traced[m].trace is not None]
    if searching:
        for column, method in zip(st.columns(len(searching)), searching, strict=True):
            run = traced[method]
            with column:
                show_chart(
                    figure_search(
                        run.trace.to_frame(),
                        method=method,
                        alpha=run.alpha,
                        stop_index=run.stop_index,
                        trial=show,
                        nothing_released=run.nothing_released,
                    ),
                    f"search_{method}",
                )
        st.caption(SEARCH_CAPTION)
    elif traced:
        st.info(
            "Nothing to replay: the theory approach and the Gibbs posterior do not search (each releases one "
            "hypothesis at an ε fixed in advance), and a run whose data showed no signal tested nothing."
        )
    return Replay(show, exact, traced)
