"""The "what would lower it" box: why the privacy is weak and one-click fixes (``accfirst.guidance``).

A fix sets its settings' widgets in a button's ``on_click`` callback, so the rerun that
follows the click draws the widgets with the new values (and the URL follows them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from accfirst.guidance import Advice, Fix
from accfirst.interpret import format_epsilon, format_exp_epsilon
from accfirst.methods.registry import method_label
from ui.dataset import LAMBDA, RADIUS, RADIUS_MODE
from ui.docs import docs_link
from ui.settings import Setting
from ui.text import plain

# The shared sidebar's settings a fix may change, by URL key; a page adds its own (e.g. α).
SHARED_FIXABLE: dict[str, Setting] = {LAMBDA.key: LAMBDA, RADIUS.key: RADIUS, RADIUS_MODE.key: RADIUS_MODE}


def _apply(fix: Fix, settings: Mapping[str, Setting]) -> None:
    for key, value in fix.changes.items():
        st.session_state[settings[key].state_key] = value


def show_guidance(where: Any, advice: Advice | None, settings: Mapping[str, Setting]) -> None:
    """Draw the box in ``where``: one sentence of why, then each fix with its predicted ε and a button.

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
