"""The "what would lower it" box: why the privacy is weak and one-click fixes (``accfirst.guidance``).

A fix sets its settings' widgets in a button's ``on_click`` callback, so the rerun that
follows the click draws the widgets with the new values (and the URL follows them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from accfirst import Problem, SearchOptions
from accfirst.guidance import Advice, Fix, advise
from accfirst.interpret import format_epsilon, format_exp_epsilon
from accfirst.methods.registry import method_label
from ui.dataset import LAMBDA, LAMBDA_OPTIONS, RADIUS, RADIUS_MODE
from ui.docs import docs_link
from ui.settings import Setting
from ui.target import ALPHA, KAPPA, KAPPA_OPTIONS, TargetChoice
from ui.text import EVALUATION_LABEL, plain

# The settings a fix may change, by URL key: the shared sidebar's and the accuracy target's.
FIXABLE: dict[str, Setting] = {setting.key: setting for setting in (LAMBDA, RADIUS, RADIUS_MODE, ALPHA, KAPPA)}
CAPPED = (
    "A looser α stops below R(0) = {zero:.3g}, the excess risk of predicting zero, which would meet anything larger ("
    + EVALUATION_LABEL
    + ")."
)
ZERO_MEETS = (
    "Predicting nothing already meets this α (see above): a larger α would buy nothing. Ask for a share of the gain "
    "instead; the fixes below lower ε at this α."
)


def _apply(fix: Fix, settings: Mapping[str, Setting]) -> None:
    for key, value in fix.changes.items():
        st.session_state[settings[key].state_key] = value


def explorer_guidance(
    problem: Problem, choice: TargetChoice, gamma: float, options: SearchOptions, summary: pd.DataFrame
) -> None:
    """The explorer's box under the headline, when the best search's privacy is weak (``accfirst.guidance``).

    A looser target is offered as a larger α or a smaller share of the gain; not when predicting nothing already
    meets α, which the notice above the headline says (a larger α would buy nothing), and a larger α stops below R(0)
    (evaluation only: R(0) reads the data, and the box says so when it stops there).
    """
    below_zero = math.floor(choice.zero_risk * 1000 - 1e-9) / 1000 if math.isfinite(choice.zero_risk) else ALPHA.high
    largest = min(ALPHA.high, below_zero)
    advice = advise(
        problem,
        choice.alpha,
        gamma,
        options,
        summary,
        lam_choices=LAMBDA_OPTIONS,
        largest_alpha=largest,
        kappa_choices=KAPPA_OPTIONS,
        widen=not choice.zero_meets,
    )
    capped = advice is not None and any(fix.changes.get(ALPHA.key) == largest < ALPHA.high for fix in advice.fixes)
    first = ZERO_MEETS if choice.zero_meets else (CAPPED.format(zero=choice.zero_risk) if capped else "")
    show_guidance(st, advice, FIXABLE, first)


def show_guidance(where: Any, advice: Advice | None, settings: Mapping[str, Setting], first: str = "") -> None:
    """Draw the box in ``where``: one sentence of why (after ``first``, when given), then each fix with its predicted
    ε and a button.

    A fix gets a button only when every key it changes has a setting in ``settings`` (URL key →
    ``Setting``); the others are shown as advice. Nothing is drawn when ``advice`` is ``None``.
    """
    if advice is None:
        return
    with where.container(border=True):
        st.markdown(
            f"**What would lower it** ({plain(method_label(advice.method).lower())}, median "
            f"ε = {format_epsilon(advice.eps)})"
        )
        if first:
            st.markdown(first)
        st.markdown(plain(advice.why))
        for index, fix in enumerate(advice.fixes):
            text, action = st.columns([4, 1], vertical_alignment="center")
            about = "≤" if fix.at_most else "≈"
            text.markdown(
                f"**{plain(fix.title)}**: predicted ε {about} {plain(format_epsilon(fix.predicted_eps))} "
                f"(e^ε {about} {plain(format_exp_epsilon(fix.predicted_eps))})"
            )
            text.caption(plain(fix.sentence))
            if fix.changes and all(key in settings for key in fix.changes):
                action.button(
                    "Apply",
                    key=f"guidance.fix.{index}",
                    on_click=_apply,
                    args=(fix, settings),
                    help=plain(f"Sets {', '.join(fix.changes)} and reruns."),
                )
        st.caption(
            "Predictions scale the measured radius, testing and generation parts by their formulas; they read only "
            "public constants and the released ε and radii."
        )
        docs_link(st, "mathematics", "the-guidances-predictions", label="How the predictions are made")
