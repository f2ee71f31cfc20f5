"""The explorer's headline: one card per method with its median ε, e^ε, posterior bounds and where ε went, drawn live
as the trials come in (``live_headline``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from accfirst.datasets import PreparedData
from accfirst.interpret import (
    delta_sentence,
    format_delta,
    format_epsilon,
    format_exp_epsilon,
    format_posterior,
    own_delta,
    plain_sentence,
    preparation_label,
    ranking_sentence,
    summarise_runs,
    summary_parts,
)
from accfirst.methods.registry import METHODS
from ui.dataset import Selection, show_preparation_note
from ui.errors import package_errors
from ui.runs import RunRequest, iter_trials, workers
from ui.target import met_line
from ui.work import estimate, measured_costs


def draw_headline(
    summary: pd.DataFrame,
    done: int,
    total: int,
    data: PreparedData,
    then: str = "refining…",
    saved: dict[str, str] | None = None,
) -> None:
    """One bordered card per method: the numbers, where the privacy went, and sentences to read aloud.

    ``summary`` is ``interpret.summarise_runs`` of the runs so far (``done`` of ``total``) on ``data``;
    ``saved`` maps a method to the sentence saying what the bound on the model's size saved it.
    """
    # Same structure on every draw, so each redraw replaces the previous one element for element.
    runs_per_method = int(summary["trials"].max()) if len(summary) else 0
    if done < total:
        trials_text = "1 trial" if runs_per_method == 1 else f"{runs_per_method} trials"
        st.caption(f"First results: {trials_text} per method so far ({done} of {total} runs); {then}")
    else:
        st.caption(f"Medians over {runs_per_method} trials per method.")
    if ranking := ranking_sentence(summary):
        st.markdown(f"**{ranking}**")
    cards = st.columns(len(summary))
    for card, (_, row) in zip(cards, summary.iterrows(), strict=True):
        with card.container(border=True):
            st.markdown(f"#### {row['label']}")
            # One metric per row: a large e^ε such as "4.1 × 10⁹" would not fit beside ε.
            method = METHODS[row["method"]]
            if method.fixed_epsilon:
                label, meaning = "ε (set in advance)", "The privacy loss fixed before the run; no test is needed."
            else:
                label = "Median ex-post ε"
                meaning = (
                    "The privacy loss actually paid (known after the run), median over trials. A run that released "
                    "nothing counts at its declared top; ∞: the paper's fallback released the exact model."
                )
            if row["delta"] > 0:
                own = own_delta(row)
                label += f", δ = {format_delta(row['delta'])}"
                meaning += f" {delta_sentence(own, float(row['delta_prep']))}" + (
                    f" {method.delta_note}" if own else ""
                )
            st.metric(label, format_epsilon(row["median_eps"]), help=meaning)
            if tag := preparation_label(row["prep_mode"], row["eps_prep"]):
                st.caption(tag)
            st.metric("Risk factor e^ε", format_exp_epsilon(row["median_eps"]))
            low, even = (format_posterior(row["median_eps"], q).replace("> ", "over ") for q in (0.01, 0.5))
            # Only a method that tests can find no level that passes; "nothing released" only where some runs did.
            failed = (
                f" · no level passed: **{row['fallbacks']}/{row['trials']}** ({row['fallback_share']:.0%}"
                + (", nothing released)" if 0 < row["fallbacks"] == row["nothing_released"] else ")")
                if method.tests_accuracy
                else ""
            )
            st.markdown(
                f"Posterior bound{' (except with probability δ)' if row['delta'] > 0 else ''}: "
                f"prior 1% → **{low}**, prior 50% → **{even}**  \n"
                f"{met_line(row)}{failed}"
            )
            parts = summary_parts(row, method.tests_accuracy)
            if len(parts) > 1 and row["fallbacks"] < row["trials"]:
                st.markdown(
                    "Where it went (medians): " + " · ".join(f"{name} **{format_epsilon(eps)}**" for name, eps in parts)
                )
            st.caption(plain_sentence(row))
            if words := (saved or {}).get(row["method"]):
                st.caption(words)
    show_preparation_note(st, data, int(summary["trials"].sum()))


LAST_HEADLINE = "explorer.last_headline"
CONFIRMED = "explorer.confirmed"


@dataclass(frozen=True)
class Headline:
    """What the live headline ended with: the runs' frame, its summary, and whether the rest waits for a go-ahead."""

    results: pd.DataFrame
    summary: pd.DataFrame
    finished: bool
    paused: bool


def live_headline(
    chosen: Selection,
    request: RunRequest,
    saved: Callable[[pd.DataFrame], dict[str, str]],
    summarise: Callable[[pd.DataFrame], pd.DataFrame] = summarise_runs,
    draw: Callable[..., None] = draw_headline,
) -> Headline:
    """Run (or fetch) the request's trials and redraw the cards as they come (at most every 0.25 s).

    The previous numbers stay on screen until new ones arrive. Trial 0 of each method measures what a run costs here;
    when the other trials would take long (``ui.work``) the page asks before going on, with a button. ``saved`` maps
    a summary to each method's sentence on what the bound on the model's size saved it; ``summarise`` turns the runs
    into the summary the cards are drawn from by ``draw`` (``draw_headline``'s parameters).
    """
    headline = st.empty()
    progress_slot = st.empty()
    last = st.session_state.get(LAST_HEADLINE)
    if last is not None and last["draw"] is draw:
        with headline.container():
            draw(**{k: v for k, v in last.items() if k != "draw"}, data=chosen.data)
    last_draw, drawn, paused = 0.0, 0, None
    confirmed = st.session_state.setdefault(CONFIRMED, set())
    with package_errors():
        for progress in iter_trials(chosen, request):
            now = time.perf_counter()
            if progress.done > drawn and (progress.finished or now - last_draw > 0.25):
                summary = summarise(progress.frame)
                with headline.container():
                    draw(summary, progress.done, progress.total, chosen.data, saved=saved(summary))
                last_draw, drawn = now, progress.done
            if progress.done == len(request.methods) and not progress.finished and request not in confirmed:
                rest = estimate(measured_costs(progress.frame), request.trials - 1, workers(chosen))
                if rest.needs_confirmation:
                    paused = rest
                    break
            if not progress.finished and progress.seconds > 0.3:
                progress_slot.progress(
                    progress.done / progress.total, text=f"Running trials: {progress.done} of {progress.total}"
                )
        progress_slot.empty()
    summary = summarise(progress.frame)
    if paused is not None:
        with headline.container():
            draw(
                summary,
                progress.done,
                progress.total,
                chosen.data,
                "the rest waits for your go-ahead below.",
                saved(summary),
            )
        with progress_slot.container():
            st.warning(f"The other trials would take {paused.describe()}.", icon="⏳")
            st.button(
                f"Run the other trials ({paused.describe()})",
                key="explorer.continue",
                type="primary",
                on_click=confirmed.add,
                args=(request,),
            )
    st.session_state[LAST_HEADLINE] = {
        "summary": summary,
        "done": progress.done,
        "total": progress.total,
        "saved": saved(summary),
        "draw": draw,
    }
    return Headline(progress.frame, summary, progress.finished, paused is not None)
