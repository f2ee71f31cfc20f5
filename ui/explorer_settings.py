"""The explorer's settings, declared once: the URL keys, the widgets' ranges, and the presets that set them.

Every setting lives in the URL (``ui.settings``). ``SETTINGS`` are the page's own (the accuracy
target's come from ``ui.target``); a preset sets the shared sidebar's and the page's settings at
once, the values it names and the defaults for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from accfirst.errors import AccFirstError
from accfirst.methods.options import FALLBACKS, SearchOptions
from accfirst.methods.theory import UNCERTIFIED_ALPHA, Theory
from ui.certified import FIXED_LAMBDA, LAMBDA_CHOICE, certified_options, upload_refusal
from ui.dataset import DATASET, LAMBDA, RADIUS, RADIUS_MODE, UPLOAD
from ui.settings import (
    Choice,
    IntSetting,
    OptionalFloat,
    Setting,
    Toggle,
    noise_setting,
    restore_from_url,
    search_settings,
)
from ui.target import ABSOLUTE, ALPHA, QUALITY, TARGET_MODE, TARGET_SETTINGS

SCOPE = "explorer"

SEARCH = search_settings(SCOPE)
METHODS_SETTING, GAMMA, LEVELS, GENERATOR, CALIBRATION, DELTA = SEARCH
NOISE = noise_setting(SCOPE)
EPS_MIN = OptionalFloat(SCOPE, "eps_min", "ε_min (blank = paper default)", None)
EPS_MAX = OptionalFloat(SCOPE, "eps_max", "ε_max (blank = paper default)", None)
SPACING = Choice(SCOPE, "spacing", "Spacing of the levels", "geometric", options=("geometric", "linear"))
FALLBACK = Choice(
    SCOPE,
    "fallback",
    "When no level passes the test",
    SearchOptions.fallback,
    options=FALLBACKS,
    labels={"nothing": "release nothing", "exact": "release the exact θ* (the paper's; ε = ∞)"},
    help="A run whose test never passes releases nothing and is charged its top level. The paper released the "
    "exact, non-private model instead: offered on synthetic tables only, to reproduce its figures.",
)
TRIALS = IntSetting(SCOPE, "trials", "Trials (independent runs)", 20, low=1, high=200)
SHOW = IntSetting(
    SCOPE,
    "show",
    "Trial to replay",
    0,
    low=0,
    high=199,
    box=True,
    help="Which trial to replay step by step (same seed, same result).",
)
EXACT = Toggle(
    SCOPE,
    "exact",
    "Compute every true excess risk (slower)",
    False,
    help="Off: levels the test rejected on a certified lower bound show that bound (▲). On: one exact solve per "
    "level, which takes seconds on the 100,000-row datasets.",
)
SETTINGS: tuple[Setting, ...] = (
    *TARGET_SETTINGS,
    METHODS_SETTING,
    GAMMA,
    GENERATOR,
    CALIBRATION,
    NOISE,
    DELTA,
    EPS_MIN,
    EPS_MAX,
    LEVELS,
    SPACING,
    FALLBACK,
    TRIALS,
    SHOW,
    EXACT,
)
PAPER = SearchOptions.paper()
# The authors' configuration (SearchOptions.paper(), λ and γ of their experiments), for the "Paper settings" button.
PAPER_SETTINGS = (
    (LAMBDA, 0.005),
    (GAMMA, 0.1),
    (CALIBRATION, PAPER.calibration),
    (LEVELS, PAPER.T),
    (GENERATOR, "paper"),
    (NOISE, PAPER.noise),
    (SPACING, PAPER.spacing),
    (EPS_MIN, PAPER.eps_min),
    (EPS_MAX, PAPER.eps_max),
    (RADIUS, None),
    (RADIUS_MODE, PAPER.radius_mode),
    (FALLBACK, PAPER.fallback),
)
PAPER_HELP = (
    f"The authors' configuration: their code's calibration, T = {PAPER.T}, λ = 0.005, γ = 0.1, Laplace noise, no "
    "bound on the model's size but the paper's M, and on a synthetic table their fallback (the exact θ* when no level "
    "passes)."
)
# A preset sets every one of these: the values it names, the defaults for the rest.
PRESET_SETTINGS = (DATASET, LAMBDA, RADIUS_MODE, RADIUS, *SETTINGS)
PRESETS = {
    # Measured (20 trials, seed 0, the private radius): noise reduction ε = 0.290 (e^ε ≈ 1.34), doubling 0.660,
    # theory 1.08, no fallbacks: a visible saving and a meaningful privacy, live.
    "Classroom demo": ((DATASET, "synthetic-buzz"), (TARGET_MODE, ABSOLUTE), (ALPHA, 0.1)),
    "Paper's Figure 1 settings": ((DATASET, "synthetic-buzz"), (TARGET_MODE, ABSOLUTE), (ALPHA, 0.05), *PAPER_SETTINGS),
    "Your data": ((DATASET, UPLOAD),),
}

#: What the refusal's "not certified" button sets: the excess risk α = ``UNCERTIFIED_ALPHA`` and the theory approach
#: alone.
UNCERTIFIED_SETTINGS = ((TARGET_MODE, ABSOLUTE), (ALPHA, UNCERTIFIED_ALPHA), (METHODS_SETTING, [Theory.key]))


def apply_settings(values: tuple[tuple[Setting, object], ...], every: tuple[Setting, ...] = ()) -> None:
    """Set the widgets named in ``values`` (an ``on_click`` callback: before the widgets are drawn).

    Settings in ``every`` that ``values`` does not name go back to their defaults.
    """
    chosen = {setting.state_key: value for setting, value in values}
    for setting in every:
        st.session_state[setting.state_key] = setting.default
    st.session_state.update(chosen)


def preset_buttons() -> None:
    """The row of presets ("Start from: …"), each setting the dataset, λ, α and every search setting at once."""
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown("**Start from:**")
        for name, values in PRESETS.items():
            st.button(
                name,
                key=f"{SCOPE}.preset.{name}",
                on_click=apply_settings,
                args=(values, PRESET_SETTINGS),
                help="Sets the dataset, λ, α and every search setting at once.",
            )


def paper_button(where: Any) -> None:
    """The "Paper settings" button: the authors' search settings, the rest kept."""
    where.button(
        "Paper settings", key=f"{SCOPE}.paper", on_click=apply_settings, args=(PAPER_SETTINGS,), help=PAPER_HELP
    )


def uncertified_button(where: Any) -> None:
    """A refused target's alternative as an action (docs/mathematics.md#refusals-that-spend-nothing): the theory
    approach alone at α = ``UNCERTIFIED_ALPHA``, labelled not certified; the page then runs it (the rest kept)."""
    where.button(
        f"Run the theory approach at α = {UNCERTIFIED_ALPHA:g} instead (not certified)",
        key=f"{SCOPE}.uncertified",
        on_click=apply_settings,
        args=(UNCERTIFIED_SETTINGS,),
        help="One model at the ε the theory approach sets in advance from α and public numbers, before it reads the "
        "data. Nothing certifies its R² or accuracy: it is promised only an expected excess risk α. A table that is "
        "not public is prepared first, and that preparation is paid.",
    )


def upload_check(n_rows: int, options: Mapping[str, Any]) -> str | None:
    """Before an upload of ``n_rows`` rows is prepared with ``options``: the package's sentence refusing the explorer's
    target in R² or accuracy at its settings (``ui.certified.upload_refusal``), or ``None`` (another target, or one
    that can be met)."""
    if TARGET_MODE.value != QUALITY:
        return None
    search = certified_options(SEARCH.options(RADIUS_MODE.value, noise=NOISE.value), float(LAMBDA.value))
    try:
        return upload_refusal(n_rows, options, search, float(GAMMA.value))
    except AccFirstError:  # settings the page refuses (a noise other than Laplace) are said there
        return None


def ignored_by_target() -> tuple[frozenset[str], str]:
    """The shared settings the explorer's target does not read, and why (a ``ui.dataset.IgnoredSettings``).

    A target in R² or accuracy runs each λ on the bound that λ implies (no bound on the model's size is bought or
    taken), and with λ chosen privately it reads no λ either. The frame asks before the page has run, so the target's
    own settings are first restored from a link.
    """
    restore_from_url((TARGET_MODE, LAMBDA_CHOICE))
    if TARGET_MODE.value != QUALITY:
        return frozenset(), ""
    size = frozenset({RADIUS_MODE.key, RADIUS.key})
    if LAMBDA_CHOICE.value == FIXED_LAMBDA:
        return size, (
            "A target in R² or accuracy bounds each model by what its λ implies: the bound on the model's size applies "
            "to the other targets."
        )
    return size | {LAMBDA.key}, (
        "A target in R² or accuracy chooses λ privately and bounds each model by what its λ implies: λ and the bound "
        "on the model's size apply to the other targets, or to a fixed λ."
    )
