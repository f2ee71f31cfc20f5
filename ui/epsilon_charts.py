"""The explorer's charts of ε: across trials, where it went, and Laplace against Gaussian noise.

Where it went is drawn over the trials that halted: when no trial halted (in every one no level passed the test, and
it released nothing or, the paper's fallback, the exact model) there is nothing to split, and the page says so instead
of drawing empty bars.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from accfirst.interpret import guarantee_text
from accfirst.methods.registry import METHODS
from accfirst.plots.explorer import (
    breakdown_frame,
    figure_breakdown,
    figure_epsilon_distribution,
    figure_noise_comparison,
)
from ui.charts import show_chart
from ui.dataset import Selection
from ui.errors import package_errors
from ui.noise import noise_seed
from ui.runs import RunRequest, iter_trials

BREAKDOWN_CAPTION = (
    "Radius: the privacy of a bound on the model's size bought privately (when one was). Testing: the privacy of the "
    "private accuracy test (ε_A for noise reduction, one Laplace test per step for doubling). Generating: the ε of the "
    "released hypothesis. The theory approach and the Gibbs posterior do not test."
)


def halted_sentence(results: pd.DataFrame) -> str:
    """Why there is no split of ε to draw: no trial of any method halted (``""`` when some did)."""
    parts = breakdown_frame(results)
    if parts.empty or int(parts["halted"].sum()) > 0:
        return ""
    trials = int(parts["trials"].max())
    failed = results["fallback"].astype(bool)
    nothing = int((failed & results["nothing_released"].astype(bool)).sum())
    exact = int(failed.sum()) - nothing
    silent = int(results["alpha"].isna().sum())
    why = []
    if nothing:
        why.append(f"{nothing} passed no level of the test and released nothing (charged their declared top ε)")
    if exact:
        why.append(f"{exact} fell back and released the exact, non-private model (ε = ∞)")
    if silent:
        why.append(f"{silent} found no signal a private model could keep and released no model")
    return (
        f"No trial halted, so there is no split of ε to show: of the {len(results):,} runs ({trials} trials per "
        f"method), {' and '.join(why)}."
    )


def epsilon_charts(results: pd.DataFrame) -> None:
    """ε across trials and, beside it, where it went (or why nothing can be split)."""
    st.subheader("Ex-post ε across trials")
    left, right = st.columns(2)
    with left:
        show_chart(figure_epsilon_distribution(results), "eps_distribution")
    with right:
        if none := halted_sentence(results):
            st.info(none)
        else:
            show_chart(figure_breakdown(results), "eps_breakdown")
            st.caption(BREAKDOWN_CAPTION)


def noise_comparison(chosen: Selection, request: RunRequest, results: pd.DataFrame) -> pd.DataFrame | None:
    """With Gaussian noise: the same trials with Laplace noise, for the methods that take both; their runs (more
    releases on a real table), or ``None`` when there is nothing to compare."""
    compared = [m for m in request.methods if METHODS[m].noises >= {"laplace", "gaussian"}]
    if request.options.noise != "gaussian" or not compared:
        return None
    st.subheader("Laplace vs Gaussian noise")
    laplace_options = replace(request.options, noise="laplace")
    # Another question: its own noise (the visitor's seed, or a secret of its own), never the Gaussian runs' noise.
    laplace_seed = noise_seed(request.chosen_seed, ("explorer", chosen.problem_key, request.gamma, laplace_options))
    laplace_request = replace(request, methods=tuple(compared), seed=laplace_seed, options=laplace_options)
    laplace = None
    with st.spinner("Running the same trials with Laplace noise…"), package_errors(stop=False):
        *_, laplace = iter_trials(chosen, laplace_request)
        show_chart(
            figure_noise_comparison(laplace.frame, results[results["method"].isin(compared)]), "noise_comparison"
        )
        gaussian = guarantee_text(request.options.delta, chosen.data.prep_delta)
        laplace_text = guarantee_text(0.0, chosen.data.prep_delta)
        st.caption(
            "Generation part of ε only (the test is the same Laplace test either way). Gaussian noise reduction pays "
            f"{gaussian} (derived; consistent with Rogers et al. 2023); Laplace pays {laplace_text}."
        )
    return None if laplace is None else laplace.frame
