"""The explorer's target in the units people read: R² (ridge) or accuracy (logistic), certified by noise reduction with
λ chosen privately (docs/mathematics.md#a-target-in-the-units-people-read,
docs/mathematics.md#choosing-λ-under-the-guarantee, docs/mathematics.md#refusals-that-spend-nothing).

Its settings (the goal of each task, how λ is set, the ceiling), its result cards (the whole ε and its parts, the λ
chosen, the certified target and how often it was met in-sample, the held-out figure, why a run released nothing), its
downloads (the settings record and the Python snippet rerun the same runs: the goal, λ chosen privately or fixed, the
ceiling) and the check an upload gets before it is prepared: a target no table of its size could meet is refused with the package's
own sentence, and the table is not prepared, so nothing at all is spent. Every figure that reads the data exactly is
labelled evaluation only. The sentences and the summary come from the package (``accfirst.interpret.certified``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from accfirst.datasets import PreparedData
from accfirst.datasets.prepare.private import held_out_rows
from accfirst.datasets.prepared import PRIVATE_MODE
from accfirst.datasets.preprocess import preparation_options
from accfirst.erm.problems import PROBLEMS
from accfirst.erm.quality import DEFAULT_TARGETS, Accuracy, QualityTarget, VarianceExplained
from accfirst.erm.quality import quality_target as target_of_task
from accfirst.interpret import format_delta, format_epsilon, format_exp_epsilon
from accfirst.interpret.certified import HELDOUT, certificate_scope, certified_parts, stopped_sentence, target_text
from accfirst.methods.certified import NOISE_REDUCTION, refusal_before_reading
from accfirst.methods.options import DEFAULT_CEILING, SearchOptions
from accfirst.methods.registry import method_label
from accfirst.plots.explorer import figure_epsilon_distribution
from accfirst.plots.quality import figure_quality_reached
from accfirst.search.experiments import MODEL
from accfirst.snippet import RunSettings
from ui.charts import show_chart
from ui.dataset import show_preparation_note
from ui.downloads import download_buttons
from ui.settings import Choice
from ui.text import EVALUATION_LABEL, EVALUATION_ONLY, plain

SCOPE = "explorer"
R2_OPTIONS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
ACCURACY_OPTIONS = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99)
R2_GOAL = Choice(
    SCOPE,
    "r2",
    "Certify R² of at least (share of the training targets' variance explained)",
    DEFAULT_TARGETS[VarianceExplained.problem_name].goal,
    options=R2_OPTIONS,
    widget_type="select_slider",
    help="With probability at least 1 − γ the released model explains at least this share of the variance of the "
    "training targets. A larger share: a better model, more privacy spent.",
)
ACCURACY_GOAL = Choice(
    SCOPE,
    "acc",
    "Certify accuracy of at least (share of training rows classified right)",
    DEFAULT_TARGETS[Accuracy.problem_name].goal,
    options=ACCURACY_OPTIONS,
    labels={a: f"{a:.0%}" for a in ACCURACY_OPTIONS},
    widget_type="select_slider",
    help="With probability at least 1 − γ the released model classifies at least this share of the training rows "
    "right. A larger share: a better model, more privacy spent.",
)
GOALS = {VarianceExplained.problem_name: R2_GOAL, Accuracy.problem_name: ACCURACY_GOAL}
PRIVATE_LAMBDA, FIXED_LAMBDA = "auto", "fixed"
LAMBDA_CHOICE = Choice(
    SCOPE,
    "lamsel",
    "Regularisation λ",
    PRIVATE_LAMBDA,
    options=(PRIVATE_LAMBDA, FIXED_LAMBDA),
    labels={PRIVATE_LAMBDA: "chosen privately", FIXED_LAMBDA: "fixed: the Data section's λ"},
    widget_type="segmented_control",
    help="Chosen privately: the search tries a public grid of λ under its one private test and releases the first "
    "model that passes, whatever its λ. Fixed: the λ set in the Data section only.",
)
CEILING_OPTIONS = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0)
CEILING = Choice(
    SCOPE,
    "ceiling",
    "Ceiling: the most ε the search may spend (preparation aside)",
    DEFAULT_CEILING,
    options=CEILING_OPTIONS,
    widget_type="select_slider",
    help="The targets' variance, the private check and the models share it. A target no table of this size could "
    "meet within it is refused before the data are read: nothing is spent.",
)
CERTIFIED_SETTINGS = (R2_GOAL, ACCURACY_GOAL, LAMBDA_CHOICE, CEILING)
#: Where the methods would be chosen: why one method runs.
ONE_METHOD = (
    f"**{method_label(NOISE_REDUCTION)}** certifies a target in R² or accuracy: it chooses λ under its own private "
    "test. The other methods take an excess risk α or a share of the gain: switch the target to compare them."
)
#: The share of an upload's rows ``from_frame`` holds out when the page states none (its options' own default).
FROM_FRAME_TEST_SIZE = float(inspect.signature(preparation_options).parameters["test_size"].default)


def quality_target(task: str) -> QualityTarget:
    """The target the goal settings hold for ``task`` (their current value)."""
    return target_of_task(task, float(GOALS[task].value))


def certified_controls(where: Any, task: str, lam: float) -> QualityTarget:
    """The goal of ``task`` and how λ is set, in ``where``; the target they chose."""
    GOALS[task].widget(where)
    LAMBDA_CHOICE.widget(where)
    if LAMBDA_CHOICE.value == FIXED_LAMBDA:
        where.caption(f"λ = {lam:g}, as set in the Data section; the search tries no other.")
    else:
        where.caption("λ is chosen from a public grid under the search's one private test: no λ is read off the data.")
    return quality_target(task)


def certified_options(options: SearchOptions, lam: float) -> SearchOptions:
    """``options`` with the ceiling chosen and the grid of λ: the default one (chosen privately) or the fixed λ."""
    lambdas = (lam,) if LAMBDA_CHOICE.value == FIXED_LAMBDA else None
    return replace(options, ceiling=float(CEILING.value), lambdas=lambdas)


def with_heldout(frame: pd.DataFrame, data: PreparedData) -> pd.DataFrame:
    """The frame with each released model's held-out R² or accuracy (``HELDOUT``; evaluation only: it reads the test
    rows); NaN where nothing was released or there is no test row."""
    metric = "r2" if data.task == VarianceExplained.problem_name else "accuracy"
    models = frame[MODEL] if MODEL in frame.columns else pd.Series(None, index=frame.index, dtype=object)
    scores = [math.nan if theta is None else data.test_quality(np.asarray(theta))[metric] for theta in models]
    return frame.assign(**{HELDOUT: scores})


def _quality(value: float, unit: str) -> str:
    return f"{value:.1%}" if unit == Accuracy.unit else f"{value:.3f}"


def draw_certified(
    summary: pd.DataFrame,
    done: int,
    total: int,
    data: PreparedData,
    then: str = "refining…",
    saved: Mapping[str, str] | None = None,
) -> None:
    """The result card of runs toward a target in R² or accuracy (a ``ui.headline.live_headline`` drawer).

    ``summary`` is ``accfirst.interpret.certified.summarise_certified`` of the runs so far (``done`` of ``total``);
    ``saved`` plays no part (no bound on the model's size is bought here).
    """
    if done < total:
        st.caption(f"First results: {done} of {total} runs; {then}")
    else:
        st.caption(f"Medians over {int(summary['trials'].max())} runs.")
    for _, row in summary.iterrows():
        with st.container(border=True):
            st.markdown(f"#### {row['label']}: {target_text(row)}")
            if int(row["refused"]) == int(row["trials"]):
                st.metric("ε spent by the search", format_epsilon(0.0), help="Refused before reading: nothing spent.")
                st.warning(plain(stopped_sentence(row)), icon="✋")
                if data.prep_epsilon > 0:
                    st.caption(f"Preparing the table cost ε = {format_epsilon(data.prep_epsilon)}, paid once for it.")
                return
            delta = f", δ = {format_delta(float(row['delta']))}" if row["delta"] > 0 else ""
            st.metric(
                f"Median total ε{delta}",
                format_epsilon(float(row["median_eps"])),
                help="The whole privacy loss of a run, the preparation of the data included, median over runs. A run "
                "that released nothing is charged what it spent.",
            )
            st.markdown(
                "Where it went (medians): "
                + " · ".join(f"{name} **{format_epsilon(eps)}**" for name, eps in certified_parts(row))
            )
            st.metric("Risk factor e^ε", format_exp_epsilon(float(row["median_eps"])))
            lines = [_lambda_line(row), _met_line(row), _heldout_line(row, data)]
            st.markdown("  \n".join(line for line in lines if line))
            if words := stopped_sentence(row):
                st.caption(plain(words))
    show_preparation_note(st, data, int(summary["trials"].sum()))


def every_run_refused(summary: pd.DataFrame) -> bool:
    """Whether every run of a card's ``summary`` was refused before reading (the card then offers the alternative)."""
    return bool(len(summary)) and bool((summary["refused"] == summary["trials"]).all())


def _lambda_line(row: pd.Series) -> str:
    if not int(row["released"]):
        return ""
    if LAMBDA_CHOICE.value == FIXED_LAMBDA:
        return f"λ: **{row['median_lam']:.3g}** (fixed)"
    lams = int(row["lams"])
    spread = f", {lams} different λ over the runs" if lams > 1 else ""
    return f"λ chosen privately: **{row['median_lam']:.3g}** (median{spread})"


def _met_line(row: pd.Series) -> str:
    released = int(row["released"])
    scope = f" {words}" if (words := certificate_scope(str(row["unit"]))) else ""
    certified = (
        f"Certified: {target_text(row)}{scope} with probability ≥ 1 − γ, in **{released}/{int(row['trials'])}** runs"
    )
    if not released:
        return certified
    quality = _quality(float(row["median_quality"]), str(row["unit"]))
    return (
        f"{certified} · met in-sample: **{int(row['met'])}/{released}** (median {row['unit']} {quality}; "
        f"{EVALUATION_LABEL})"
    )


def _heldout_line(row: pd.Series, data: PreparedData) -> str:
    value = float(row["median_heldout"])
    if not math.isfinite(value):
        return ""
    where = f"{data.report.n_test:,} held-out rows"
    return f"Held-out {row['unit']}: **{_quality(value, str(row['unit']))}** (median, on {where}; {EVALUATION_LABEL})"


def certified_sections(results: pd.DataFrame, summary: pd.DataFrame, data: PreparedData, settings: RunSettings) -> None:
    """Below the card: ε across the runs, the quality each released model reached on ``data`` (in-sample and held
    out), and the downloads (the results, the settings record and the Python snippet that reruns ``settings``);
    nothing when every run was refused before reading (the card says why)."""
    if results.empty or bool(results["refused"].astype(bool).all()):
        return
    row = summary.iloc[0]
    st.subheader("Ex-post ε across runs")
    show_chart(figure_epsilon_distribution(results), "eps_distribution")
    st.subheader("Accuracy reached")
    reached = figure_quality_reached(with_heldout(results, data), str(row["unit"]), float(row["goal"]))
    show_chart(reached, "quality_reached")
    st.caption(
        f"In-sample: what the private test certified, on the training rows. Held out: the same models on rows no run "
        f"read. {EVALUATION_ONLY}"
    )
    st.subheader("Take it with you")
    download_buttons(st.columns(3), results, settings, "accfirst_results")


def upload_refusal(n_rows: int, options: Mapping[str, Any], search: SearchOptions, gamma: float) -> str | None:
    """The package's sentence refusing the explorer's target on an upload of ``n_rows`` rows prepared with ``options``
    (``from_frame``'s), or ``None``, before the table is prepared: a private split's training rows are known from
    ``n_rows`` alone (public). An evaluation-only preparation spends no ε and is not checked here."""
    if options.get("preparation", PRIVATE_MODE) != PRIVATE_MODE or n_rows < 2:
        return None
    task = str(options["task"])
    n_train = n_rows - held_out_rows(n_rows, float(options.get("test_size", FROM_FRAME_TEST_SIZE)))
    return refusal_before_reading(PROBLEMS[task], n_train, quality_target(task), gamma, search)


def show_refused_upload(task: str, sentence: str) -> None:
    """What the explorer shows for an upload refused before its preparation: the package's sentence (plain text), that
    nothing was spent, and the goal to change."""
    with st.container(border=True):
        st.markdown(f"#### {method_label(NOISE_REDUCTION)}: {target_text(quality_target(task))}")
        st.metric("ε spent", format_epsilon(0.0), help="The table was not prepared and no run read it.")
        st.warning(plain(f"Refused before the table was prepared: {sentence}."), icon="✋")
    st.caption(
        "Ask for less, raise the ceiling, or switch to an excess risk α or a share of the gain above: the table is "
        "prepared, and its preparation paid, only once its target can be met."
    )
