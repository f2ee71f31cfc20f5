"""The α sweep's settings, declared once (URL keys, ranges, the paper's grid), and its sidebar.

A link whose grid, methods and trials together ask for more runs than one click may start is refused like any bad
value: the three go back to their defaults, said in the page's one notice (``ui.link_notice``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from accfirst.methods.registry import METHODS, method_label
from accfirst.methods.theory import Theory
from accfirst.plots.paper import VERSUS as FIG1_VERSUS
from accfirst.search.sweep import PAPER_ALPHAS_TEXT, parse_alphas
from accfirst.snippet import RunSettings
from ui.link_notice import report_ignored
from ui.settings import Choice, IntSetting, InvalidValue, Setting, restore_from_url, search_settings
from ui.work import MAX_RUNS, runs_refusal

SCOPE = "sweep"


@dataclass(frozen=True)
class AlphaGrid(Setting):
    """The α grid as text, ``start:stop:step`` (stop included) or ``a,b,c`` (``accfirst.search.sweep.parse_alphas``)."""

    def parse(self, raw: list[str]) -> str:
        try:
            parse_alphas(raw[-1])
        except ValueError as exc:
            raise InvalidValue(f"{self.key}: {exc}") from None
        return raw[-1]

    def to_url(self, value: str) -> str:
        return value

    def _draw(self, where: Any, **kwargs: Any) -> str:
        return where.text_input(self.label, **kwargs)


ALPHAS = AlphaGrid(
    SCOPE,
    "alphas",
    "α grid: start:stop:step (stop included) or a list a,b,c",
    PAPER_ALPHAS_TEXT,
    help="The requested excess risks. The paper's grid is 0.005:0.2:0.005 (40 values).",
)
SEARCH = search_settings(SCOPE)
METHODS_SETTING, GAMMA, LEVELS, GENERATOR, CALIBRATION, DELTA = SEARCH
TRIALS = IntSetting(SCOPE, "trials", "Trials per method and α", 10, low=1, high=200, box=True)
VERSUS = Choice(
    SCOPE,
    "fig1",
    "Compare noise reduction with",
    Theory.key,  # the paper's Fig. 1a/b, and fig1_epsilon's own default
    options=tuple(FIG1_VERSUS),
    # Each comparison with what it is in the paper (its panels), or what it says of its guarantee (Method.comparison).
    labels={
        key: f"{method.in_sentence} ({method.comparison.note})"
        for key, method in METHODS.items()
        if method.comparison is not None
    },
    widget_type="segmented_control",
)
RISK_FACTOR = Choice(
    SCOPE,
    "axis",
    "Vertical axis",
    "eps",
    options=("eps", "exp"),
    labels={"eps": "ex-post ε", "exp": "risk factor e^ε (log)"},
    widget_type="segmented_control",
)
SETTINGS = (ALPHAS, METHODS_SETTING, TRIALS, GAMMA, LEVELS, GENERATOR, CALIBRATION, DELTA, VERSUS, RISK_FACTOR)


def run_count(alphas_text: str, methods: list[str], trials: int) -> int:
    """Runs of a sweep: methods × α values × trials."""
    return len(methods) * len(parse_alphas(alphas_text)) * int(trials)


def restore_settings() -> None:
    """The settings from the link, a grid beyond what one click may start refused (``MAX_RUNS``)."""
    from_link = ALPHAS.state_key not in st.session_state  # else the visitor's own values: the page prices them
    restore_from_url(SETTINGS)
    runs = run_count(ALPHAS.value, METHODS_SETTING.value, TRIALS.value) if from_link else 0
    if runs > MAX_RUNS:
        report_ignored([f"alphas, methods and trials together: {runs_refusal(runs)} Using the defaults of all three."])
        for setting in (ALPHAS, METHODS_SETTING, TRIALS):
            st.session_state[setting.state_key] = setting.default


def sweep_sidebar(seed_setting: Setting) -> tuple[int, float, int | None, float]:
    """Trials, γ, T, the seed, generator, calibration and δ in the sidebar: (trials, γ, seed, δ)."""
    sidebar = st.sidebar
    sidebar.header("The sweep")
    trials = int(TRIALS.widget(sidebar))
    gamma = float(GAMMA.widget(sidebar))
    LEVELS.widget(sidebar)
    seed = seed_setting.widget(sidebar)
    GENERATOR.widget(sidebar)
    CALIBRATION.widget(sidebar)
    delta = float(DELTA.widget(sidebar))
    return trials, gamma, seed, delta


def report_settings(request: RunSettings, title: str, alphas_text: str) -> dict[str, object]:
    """The settings block of the HTML report."""
    return {
        "data": title,
        "task": request.task,
        "λ": request.lam,
        "public bound on ‖θ‖": "none" if request.radius is None else request.radius,
        "bound on the model's size": request.options.radius_mode,
        "γ": request.gamma,
        "T": request.options.T,
        "generator": request.options.generator or "the paper's",
        "calibration": request.options.calibration,
        "δ ((ε, δ) methods)": request.options.delta,
        "methods": ", ".join(method_label(m) for m in request.methods),
        "α": f"{alphas_text} ({len(request.alphas)} values)",
        "trials": request.trials,
        "seed": "operating system (a release)" if request.seed is None else request.seed,
    }
