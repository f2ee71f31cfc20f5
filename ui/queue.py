"""The budget page's queue of analyses: its URL setting, the buttons that change it and the form that adds to it.

A queue lives in the URL as ``queue=nr-laplace-0.05,counts-nr-0.1`` (``Analysis.to_text``), at most ``MAX_QUEUE``
analyses so that one click stays a few seconds of work on the shared server. The methods a visitor may queue are the
package's (``COUNT_METHODS``), named by their classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from accfirst.accounting.counts import COUNT_METHODS
from accfirst.accounting.session import Analysis
from accfirst.errors import AccFirstError
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import METHODS
from ui.settings import InvalidValue, Setting

SCOPE = "budget"
MAX_QUEUE = 8
ALPHAS = (0.01, 0.02, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)
EXAMPLE_QUEUE = tuple(
    Analysis(kind, NoiseReduction.key, target, noise).to_text()
    for kind, target, noise in (
        ("regression", 0.1, "laplace"),
        ("counts", 0.1, "laplace"),
        ("regression", 0.05, "laplace"),
        ("regression", 0.05, "gaussian"),
        ("counts", 0.05, "laplace"),
    )
)
ADD_KIND, ADD_METHOD, ADD_NOISE, ADD_TARGET = (f"{SCOPE}.add_{name}" for name in ("kind", "method", "noise", "target"))


@dataclass(frozen=True)
class QueueSetting(Setting):
    """The queue of analyses, in the URL as ``queue=nr-laplace-0.05,counts-nr-0.1`` (changed by buttons, no widget)."""

    def parse(self, raw: list[str]) -> tuple[str, ...]:
        items = [item for text in raw for item in text.split(",") if item]
        if len(items) > MAX_QUEUE:
            raise InvalidValue(f"{self.key} may hold at most {MAX_QUEUE} analyses; got {len(items)}")
        try:
            return tuple(Analysis.from_text(item).to_text() for item in items)
        except AccFirstError as exc:
            raise InvalidValue(f"{self.key}: {exc}") from None

    def to_url(self, value: tuple[str, ...]) -> str:
        return ",".join(value)

    def _draw(self, where: Any, **kwargs: Any) -> None:
        raise AccFirstError("the queue has no widget: buttons change it")


QUEUE = QueueSetting(SCOPE, "queue", "Queue", EXAMPLE_QUEUE)


def short_label(analysis: Analysis) -> str:
    """E.g. "NR regression, α = 0.1", "doubling counts, ±5%", "… (Gaussian)": narrow enough for a phone."""
    method = METHODS[analysis.method]
    name = method.short_label or method.in_sentence
    if analysis.kind == "counts":
        return f"{name} counts, ±{analysis.target * 100:g}%"
    noise = " (Gaussian)" if analysis.noise == "gaussian" else ""
    return f"{name} regression, α = {analysis.target:g}{noise}"


def _add() -> None:
    state = st.session_state
    noise = state[ADD_NOISE] if state[ADD_KIND] == "regression" else "laplace"
    item = Analysis(state[ADD_KIND], state[ADD_METHOD], state[ADD_TARGET], noise).to_text()
    state[QUEUE.state_key] = (*state[QUEUE.state_key], item)[:MAX_QUEUE]


def _remove(position: int) -> None:
    queue = st.session_state[QUEUE.state_key]
    st.session_state[QUEUE.state_key] = queue[:position] + queue[position + 1 :]


def _set(queue: tuple[str, ...]) -> None:
    st.session_state[QUEUE.state_key] = queue


def queue_editor() -> list[Analysis]:
    """The queue, each analysis with its Remove button, and the form that adds one; the analyses queued."""
    queue: tuple[str, ...] = QUEUE.value
    analyses = [Analysis.from_text(item) for item in queue]
    st.subheader("The queue")
    with st.container(border=True):
        if not analyses:
            st.info("The queue is empty: add an analysis below.")
        for position, analysis in enumerate(analyses):
            text, button = st.columns([6, 1], vertical_alignment="center")
            text.markdown(f"{position + 1}. {analysis.label}")
            button.button("Remove", key=f"{SCOPE}.remove.{position}", on_click=_remove, args=(position,))
        kind_box, method_box, noise_box, target_box = st.columns(4)
        # Radios like their neighbours: a segmented control cut "a batch of counts" off in a quarter column.
        kind = kind_box.radio(
            "Add",
            ["regression", "counts"],
            key=ADD_KIND,
            format_func={"regression": "a regression", "counts": "a batch of counts"}.get,
        )
        method_box.radio(
            "Method",
            list(COUNT_METHODS),
            key=ADD_METHOD,
            format_func=lambda key: METHODS[key].in_sentence,
            horizontal=True,
        )
        noise_box.radio(
            "Noise",
            ["laplace", "gaussian"],
            key=ADD_NOISE,
            disabled=kind != "regression",
            format_func=str.capitalize,
            horizontal=True,
        )
        target_box.select_slider(
            "Excess risk α" if kind == "regression" else "Relative error", ALPHAS, value=0.1, key=ADD_TARGET
        )
        add, example, clear = st.columns(3)
        add.button(
            "Add to the queue",
            key=f"{SCOPE}.add",
            on_click=_add,
            type="primary",
            disabled=len(queue) >= MAX_QUEUE,
            help=f"At most {MAX_QUEUE} analyses.",
        )
        example.button("Example queue", key=f"{SCOPE}.example", on_click=_set, args=(EXAMPLE_QUEUE,))
        clear.button("Empty the queue", key=f"{SCOPE}.clear", on_click=_set, args=((),))
    return analyses
