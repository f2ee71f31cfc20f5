"""The explorer's accuracy target: R² or accuracy (certified), the share of the best model's gain to keep (κ), or an
excess risk α.

By default the target is in the units people read (``ui.certified``): a certified in-sample R² for ridge, accuracy for
logistic, λ chosen privately (docs/mathematics.md#a-target-in-the-units-people-read). The share of the gain keeps at
least a share of what the best model gains over predicting nothing (a relative target κ, docs/mathematics.md,
“A relative accuracy target”); the excess risk α is the paper's target, on the prepared loss's own scale, and the
paper's presets and figures use it. The visitor may switch the mode (the paper's presets set α), and the URL
carries the mode (``target``), κ (``kappa``), the test budget (``budget``) and the goals of ``ui.certified``. The package releases α = κ·Ŝ in each run; this module only draws the controls and says what came
out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from accfirst import Problem
from accfirst.erm.quality import Accuracy, QualityTarget, VarianceExplained
from accfirst.interpret import alpha_meaning, describe_alpha, format_epsilon
from accfirst.interpret.certified import target_text
from accfirst.methods.options import DEFAULT_TEST_BUDGET
from accfirst.methods.relative import RelativeTarget
from ui.cache import session_memo
from ui.certified import CEILING, CERTIFIED_SETTINGS, GOALS, certified_controls, show_refused_upload
from ui.dataset import Selection
from ui.errors import package_errors
from ui.settings import Choice, FloatSlider
from ui.text import EVALUATION_ONLY, plain

SCOPE = "explorer"
ABSOLUTE, RELATIVE, QUALITY = "alpha", "kappa", "quality"
TARGET_MODE = Choice(
    SCOPE,
    "target",
    "Accuracy target",
    QUALITY,
    options=(QUALITY, RELATIVE, ABSOLUTE),
    # Short: the three fit side by side on a 390 px phone (a segmented control does not wrap, it hides what overflows).
    labels={QUALITY: "R² / accuracy", RELATIVE: "Share of the gain", ABSOLUTE: "Excess risk α"},
    widget_type="segmented_control",
    help="R² / accuracy: the released model's in-sample R² (ridge) or accuracy (logistic) is certified, λ chosen "
    "privately; noise reduction runs. Share of the gain: keep at least this share of what the best model gains over "
    "predicting nothing; each run buys a private bound on that gain and sets α from it. Excess risk α: the paper's "
    "target, on the prepared loss's own scale; every method runs.",
)
KAPPA_OPTIONS = (0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.02, 0.01)
KAPPA = Choice(
    SCOPE,
    "kappa",
    "Keep at least this share of what the best model gains over predicting nothing",
    0.2,
    options=KAPPA_OPTIONS,
    labels={kappa: f"{1 - kappa:.0%}" for kappa in KAPPA_OPTIONS},
    widget_type="select_slider",
    help="90% means: the private model's excess risk is at most a tenth of the zero model's (κ = 0.1), with "
    "probability at least 1 − γ. A larger share: a more accurate model, more privacy spent.",
)
BUDGET_OPTIONS = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
TEST_BUDGET = Choice(
    SCOPE,
    "budget",
    "Test budget: the most ε the private test may cost",
    DEFAULT_TEST_BUDGET,
    options=BUDGET_OPTIONS,
    widget_type="select_slider",
    help="With a share to keep: a run whose private bound on the gain is so small that the test would cost more "
    "than this stops and says the data show no signal a private model could keep (it still pays for the bound).",
)
ALPHA = FloatSlider(
    SCOPE,
    "alpha",
    "Accuracy you need: target excess risk α",
    0.05,
    low=0.001,
    high=0.5,
    step=0.001,
    help="The largest excess risk R(θ) = L(θ) − L(θ*) you accept. Smaller α: more accurate model, more privacy spent.",
)
TARGET_SETTINGS = (TARGET_MODE, KAPPA, TEST_BUDGET, ALPHA, *CERTIFIED_SETTINGS)


def use_relative() -> None:
    """Switch to the share of the gain (a button's ``on_click``: before the widgets are drawn)."""
    st.session_state[TARGET_MODE.state_key] = RELATIVE


def target_heading(target: float | RelativeTarget | QualityTarget) -> str:
    """The headline's title for the target."""
    if isinstance(target, (VarianceExplained, Accuracy)):
        return f"What it paid to certify {target_text(target)}"
    if isinstance(target, RelativeTarget):
        return f"What each method paid to keep at least {target.share_kept:.0%} of the gain"
    return f"What each method paid for excess risk ≤ {target:g}"


def met_line(row: pd.Series) -> str:
    """How often a method met its target, for its headline card (Markdown)."""
    rate = f"**{row['successes']}/{row['trials']}** ({row['success_rate']:.0%})"
    kappa = float(row.get("kappa", math.nan))
    if math.isnan(kappa):
        return f"Met α: {rate}"
    return f"Kept ≥ {1 - kappa:.0%}: {rate} · no signal: **{row['no_signals']}/{row['trials']}**"


def zero_model_meets(problem: Problem, alpha: float) -> bool:
    """Whether predicting nothing already meets α (α ≥ R(0)): evaluation only, R(0) reads the data."""
    return alpha >= problem.zero_risk


def show_zero_model_notice(where: Any, problem: Problem, alpha: float, *, relative: bool) -> None:
    """Say plainly when predicting nothing already meets α (``zero_model_meets``), and offer the share."""
    if not zero_model_meets(problem, alpha):
        return
    where.warning(
        f"Predicting nothing already meets this target: on this data the all-zero model's excess risk is "
        f"R(0) = {problem.zero_risk:.3g} ≤ α = {alpha:.3g}, so any privacy paid here buys no accuracy. "
        + EVALUATION_ONLY,
        icon="🎯",
    )
    if not relative:
        where.button(
            "Ask for a share of the gain instead",
            key=f"{SCOPE}.use_relative",
            on_click=use_relative,
            help="Keep at least a share of what the best model gains over predicting nothing, whatever the scale.",
        )


def released_alpha_text(results: pd.DataFrame) -> str:
    """What the runs released: the median α = κ·Ŝ, its range, ε_S and the runs without signal (Markdown)."""
    released = results["alpha"].dropna()
    eps_scale = format_epsilon(float(results["eps_scale"].median()))
    no_signal = int(results["alpha"].isna().sum())
    if released.empty:
        return (
            f"**No α was released**: in every run the private bound on the gain showed no signal a private model "
            f"could keep at this test budget and n (each run still paid ε = {eps_scale} for the bound). Ask for a "
            "smaller share, or raise the test budget in the sidebar."
        )
    spread = f" (from {released.min():.3g} to {released.max():.3g})" if released.size > 1 else ""
    text = (
        f"Released α = κ·Ŝ: median **{released.median():.3g}**{spread} over {len(results)} runs, Ŝ being each "
        f"run's private lower bound on the zero model's excess risk, bought with ε = {eps_scale} of its privacy."
    )
    if no_signal:
        text += f" {no_signal} run{'s' if no_signal > 1 else ''} showed no signal and learnt nothing."
    return text


def alpha_text(chosen: Selection, problem: Problem, alpha: float) -> str:
    """What α means on this data in plain words (evaluation only: it reads θ*), once per problem and α."""
    return session_memo(
        "alpha_meaning",
        (*chosen.problem_key, alpha),
        lambda: describe_alpha(alpha_meaning(problem, alpha, chosen.data.report, chosen.data.target_name)),
        max_entries=64,
    )


@dataclass(frozen=True)
class TargetChoice:
    """The target the controls chose: α, a relative target (``alpha`` ``None``, released by each run, shown in
    ``released_slot`` once known) or a target in R² or accuracy (``alpha`` ``None``, ``certified``); ``zero_risk`` is
    R(0), the excess risk of predicting nothing (evaluation only, read at an absolute α), and ``zero_meets`` whether it
    already meets α."""

    target: float | RelativeTarget | QualityTarget
    alpha: float | None
    released_slot: Any = None
    zero_risk: float = math.nan

    @property
    def zero_meets(self) -> bool:
        return self.alpha is not None and self.alpha >= self.zero_risk

    @property
    def certified(self) -> bool:
        """Whether the target is in R² or accuracy (noise reduction only, λ chosen under its test)."""
        return isinstance(self.target, (VarianceExplained, Accuracy))


def target_controls(where: Any, chosen: Selection, problem: Problem) -> TargetChoice:
    """The kind of target and its value in ``where``, with what it means on this data beside it."""
    mode = TARGET_MODE.widget(where)
    if mode == QUALITY:
        return TargetChoice(certified_controls(where, chosen.task, chosen.lam), None)
    if mode == RELATIVE:
        target = RelativeTarget(float(KAPPA.widget(where)))
        slot = where.empty()
        slot.caption("α = κ·Ŝ is released privately by each run: it appears here once the first trials are done.")
        return TargetChoice(target, None, slot)
    alpha = float(ALPHA.widget(where))
    with package_errors(where, stop=False):
        # The sentence names the target column, which an upload controls: plain text, never Markdown.
        where.caption(plain(alpha_text(chosen, problem, alpha) + " " + EVALUATION_ONLY))
        show_zero_model_notice(where, problem, alpha, relative=False)
    return TargetChoice(alpha, alpha, zero_risk=problem.zero_risk)


def refused_upload_view(task: str, sentence: str) -> None:
    """An upload the target in R² or accuracy refused before its preparation (``ui.certified.show_refused_upload``),
    with the kind of target, the goal and the ceiling to change: another target, or one that can be met, prepares it."""
    left, _ = st.columns([3, 2])
    TARGET_MODE.widget(left)
    GOALS[task].widget(left)
    CEILING.widget(left)
    show_refused_upload(task, sentence)
