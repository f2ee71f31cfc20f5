"""Where a run's ε went, in words: its parts in the order they are paid, and what the preparation of its rows adds
(docs/mathematics.md#what-a-run-reports, docs/mathematics.md#preparing-the-data-privately).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from accfirst.datasets.prepared import (
    EVALUATION_MODE,
    EXCLUDES_PREPARATION,
    PRIVATE,
    PRIVATE_MODE,
    PUBLIC_MODE,
    PUBLIC_PREPARATION,
    Preparation,
)
from accfirst.interpret.epsilon import format_delta, format_epsilon
from accfirst.result import RunResult

# The parts of a run's ex-post ε, in the order they are paid, and how a sentence names each.
BILL_PARTS = (
    ("eps_prep", "preparing the data"),
    ("eps_scale", "bounding R(0)"),
    ("eps_radius", "the private radius"),
    ("eps_test", "testing"),
    ("eps_hypothesis", "generating"),
)
# What ``eps_scale`` bought in a run toward a target in R² or accuracy
# (docs/mathematics.md#a-target-in-the-units-people-read).
VARIANCE_PART = "the targets' variance"
# The same parts in a summary row (``summarise_runs``), as a stakeholder reads them on a card.
SUMMARY_PARTS = (
    ("eps_prep", "preparing the data"),
    ("median_eps_scale", "the bound on R(0)"),
    ("median_eps_radius", "the bound on the model's size"),
    ("median_eps_test", "the check"),
    ("median_eps_hypothesis", "the model"),
)


def summary_parts(row: Mapping[str, Any], tests_accuracy: bool) -> list[tuple[str, float]]:
    """Where a method's median ε went, in the order it is paid: (name, ε) for each part it paid
    (docs/mathematics.md#a-private-radius, docs/mathematics.md#preparing-the-data-privately,
    docs/mathematics.md#a-relative-accuracy-target).

    The check appears for a method that tests accuracy, the model always; the other parts when they are > 0.
    """
    return [
        (name, float(row.get(field, 0.0)))
        for field, name in SUMMARY_PARTS
        if field == "median_eps_hypothesis"
        or (field == "median_eps_test" and tests_accuracy)
        or float(row.get(field, 0.0)) > 0
    ]


def bill_text(result: RunResult) -> str:
    """A run's whole ε and its parts in words: "ε = 1.23 (preparing the data 0.09 + testing 0.7 + generating 0.44)".

    Parts that are zero are left out, except testing and generating. After a preparation that read
    the data without noise the sentence says that the figure excludes it (evaluation only).
    """
    parts = [
        f"{VARIANCE_PART if field == 'eps_scale' and result.target else name} "
        f"{format_epsilon(float(getattr(result, field)))}"
        for field, name in BILL_PARTS
        if field in ("eps_test", "eps_hypothesis") or getattr(result, field) > 0
    ]
    text = f"ε = {format_epsilon(result.eps_total)} ({' + '.join(parts)})"
    if result.prep_mode == EVALUATION_MODE:
        text += f"; {EXCLUDES_PREPARATION}"
    return text


def preparation_label(mode: str, epsilon: float) -> str:
    """The tag every ε on prepared rows carries (docs/mathematics.md#preparing-the-data-privately): what it says about
    the preparation, or ``""``.

    Private: "includes preparing the data, ε = 0.0881"; evaluation only: "excludes the preparation, which read the
    data without noise (evaluation only)"; public data or rows given as they are: nothing to add.

    Parameters
    ----------
    mode : how the rows were prepared (``Problem.prep_mode``, the frame's ``prep_mode``).
    epsilon : the preparation's ε (``Problem.prep_epsilon``, the frame's ``eps_prep``).
    """
    if mode == EVALUATION_MODE:
        return EXCLUDES_PREPARATION
    if mode == PRIVATE_MODE:
        return f"includes preparing the data, ε = {format_epsilon(epsilon)}"
    return ""


def preparation_note(mode: str, epsilon: float, delta: float, runs: int | None = None, *, included: bool = True) -> str:
    """One sentence under a page's ε figures on prepared rows: what they include of the preparation
    (docs/mathematics.md#preparing-the-data-privately).

    "Every ε includes preparing the data, ε = 0.0881, δ = 10⁻⁶, paid once and shared by these 60
    runs." (``runs`` given), or "… paid once for this table."; after an evaluation-only preparation "Every ε
    excludes the preparation, which read the data without noise (evaluation only)."; on data generated from public
    parameters, that preparing them is free; ``""`` for rows given as they are. With
    ``included=False`` (a budget that covers only what runs on the prepared rows, such as counts of a
    prepared column) it says what preparing them cost besides.
    """
    if mode == PUBLIC_MODE:
        return f"The data are {PUBLIC_PREPARATION} (ε = 0)."
    if mode not in (PRIVATE_MODE, EVALUATION_MODE):
        return ""
    # Several runs on real data are several releases: each ε is one run's, and showing them together adds them up.
    repeated = (
        f" Each of the {runs:,} runs is a release of its own on this table: shown together they reveal what "
        f"{runs:,} runs would, and their ε add up."
        if runs is not None and runs > 1
        else ""
    )
    if mode == EVALUATION_MODE:
        return f"Every ε {EXCLUDES_PREPARATION}." + repeated
    if epsilon == 0 and delta == 0:
        return "Preparing the data cost ε = 0: every statistic was declared (nothing read)." + repeated
    paid = f"ε = {format_epsilon(epsilon)}" + (f", δ = {format_delta(delta)}" if delta > 0 else "")
    if not included:
        return f"The budget covers what runs on the prepared rows; preparing them cost {paid} besides, paid once."
    shared = (
        f"paid once and shared by these {runs:,} runs" if runs is not None and runs > 1 else "paid once for this table"
    )
    return f"Every ε includes preparing the data, {paid}, {shared}." + repeated


def step_cost(kind: str, epsilon: float, delta: float) -> str:
    """How a preparation step is listed: "declared", "private, ε = 0.0212" (and δ), "post-processing", …"""
    if kind == PRIVATE:
        return f"private, ε = {format_epsilon(epsilon)}" + (f", δ = {format_delta(delta)}" if delta > 0 else "")
    return kind


def preparation_steps(preparation: Preparation) -> pd.DataFrame:
    """The data report's table: one row per step — step, column, cost (``step_cost``), what it did."""
    frame = preparation.to_frame()
    return pd.DataFrame(
        {
            "step": frame["step"],
            "column": frame["column"],
            "cost": [step_cost(k, e, d) for k, e, d in zip(frame["kind"], frame["epsilon"], frame["delta"])],
            "what it did": frame["note"],
        }
    )
