"""The explorer's headline: one card per method with its median ε, e^ε, posterior bounds and where ε went."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from accfirst.datasets import PreparedData
from accfirst.interpret import (
    format_delta,
    format_epsilon,
    format_exp_epsilon,
    format_posterior,
    plain_sentence,
    preparation_label,
    ranking_sentence,
    summary_parts,
)
from accfirst.methods.registry import METHODS
from ui.dataset import show_preparation_note
from ui.target import met_line


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
                label += f", δ = {format_delta(row['delta'])}"
                meaning += " An (ε, δ) guarantee: not the same promise as a pure ε. " + method.delta_note
            st.metric(label, format_epsilon(row["median_eps"]), help=meaning)
            if tag := preparation_label(row["prep_mode"], row["eps_prep"]):
                st.caption(tag)
            st.metric("Risk factor e^ε", format_exp_epsilon(row["median_eps"]))
            low, even = (format_posterior(row["median_eps"], q).replace("> ", "over ") for q in (0.01, 0.5))
            st.markdown(
                f"Posterior bound{' (except with probability δ)' if row['delta'] > 0 else ''}: "
                f"prior 1% → **{low}**, prior 50% → **{even}**  \n"
                f"{met_line(row)} · "
                f"no level passed: **{row['fallbacks']}/{row['trials']}** ({row['fallback_share']:.0%}"
                + (", nothing released)" if row["nothing_released"] == row["fallbacks"] else ")")
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
