"""The explorer's sidebar below the Data section: how the search runs (γ, generator, noise, calibration, δ, the ε
levels) and how many trials, with what the settings cost or refuse said beside them.

``search_sidebar`` draws it and returns a ``SearchChoice``: the values a ``RunRequest`` needs and the names of the
settings that refuse to run (each shown in red where it is set). The calibration's captions price the private check
at α on the bound the runs start from (``accfirst.prediction.feasible_radius``: R₀ unless the bound on the model's size
is "none"), so that with a free bound they are exactly the "check" on the cards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from accfirst import Problem, default_eps_range
from accfirst.guidance import radius_name
from accfirst.interpret import guarantee_text
from accfirst.mechanisms.noise_reduction import LAPLACE
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import METHODS
from accfirst.prediction import feasible_radius
from ui.certified import CEILING
from ui.dataset import Selection
from ui.docs import docs_link
from ui.errors import package_errors
from ui.explorer_settings import (
    CALIBRATION,
    DELTA,
    EPS_MAX,
    EPS_MIN,
    FALLBACK,
    GAMMA,
    GENERATOR,
    LEVELS,
    NOISE,
    SEARCH,
    SPACING,
    TRIALS,
    paper_button,
)
from ui.settings import Setting, calibration_captions, delta_problem, generator_problem, noise_caption
from ui.target import TEST_BUDGET


@dataclass(frozen=True)
class SearchChoice:
    """What the sidebar chose: γ, the search options, the trials and the seed (``None``: the operating system's), and
    the settings that refuse to run (empty when everything can run)."""

    gamma: float
    options: SearchOptions
    trials: int
    seed: int | None
    problems: list[str] = field(default_factory=list)


def search_sidebar(
    chosen: Selection,
    problem: Problem,
    alpha: float | None,
    methods: list[str],
    seed_setting: Setting,
    *,
    certified: bool = False,
) -> SearchChoice:
    """Draw the search's settings in the sidebar for ``methods`` at α (``None``: a relative target, α released by
    each run, or, ``certified``, a target in R² or accuracy: its ceiling instead of the ε range and the fallback) and
    return what they chose."""
    sidebar = st.sidebar
    problems: list[str] = []
    sidebar.header("The search")
    gamma = float(GAMMA.widget(sidebar))
    GENERATOR.widget(sidebar)
    generator = SEARCH.chosen_generator()
    if chosen.task == "logistic":
        sidebar.caption("Logistic regression: output perturbation is the only generator that applies.")
    if message := generator_problem(generator, chosen.task):
        sidebar.error(message)
        problems.append("generator")
    noise = NOISE.widget(sidebar)
    refusals = [METHODS[m].noise_refusal for m in methods if METHODS[m].noises and noise not in METHODS[m].noises]
    for refusal in refusals:
        sidebar.error(refusal)
    if certified and noise != LAPLACE.name:
        refusals.append(
            f"A target in R² or accuracy is certified with {NOISE.labels[LAPLACE.name]} noise: choose it, or another "
            "target."
        )
        sidebar.error(refusals[-1])
    if refusals:
        problems.append("noise")
    _calibration(sidebar, problem, alpha, gamma, chosen.radius_mode)
    paper_button(sidebar)
    if certified:
        sidebar.caption(f"A certified target's runs give {guarantee_text(0.0, chosen.data.prep_delta)}.")
        return _certified(sidebar, gamma, noise, chosen.radius_mode, seed_setting, problems)
    delta = DELTA.widget(sidebar)
    sidebar.caption(noise_caption(noise, float(delta), chosen.data.prep_delta))
    if message := delta_problem(delta, methods, chosen.task, noise):
        sidebar.error(message)
        problems.append("delta")
    more: dict[str, Any] = {"test_budget": float(TEST_BUDGET.widget(sidebar))} if alpha is None else {}
    eps_min, eps_max = _levels(sidebar, problem, alpha, generator, problems)
    spacing = SPACING.widget(sidebar, horizontal=True)
    # A table that holds people's data never releases θ*: the paper's fallback is for synthetic tables only.
    fallback = SearchOptions.fallback if chosen.data.preparation.private_rows else FALLBACK.widget(sidebar)
    sidebar.subheader("Trials")
    trials = int(TRIALS.widget(sidebar))
    seed = seed_setting.widget(sidebar)
    options = SEARCH.options(
        chosen.radius_mode, eps_min=eps_min, eps_max=eps_max, spacing=spacing, noise=noise, fallback=fallback, **more
    )
    return SearchChoice(gamma, options, trials, seed, problems)


def _certified(
    sidebar: Any, gamma: float, noise: str, radius_mode: str, seed_setting: Setting, problems: list[str]
) -> SearchChoice:
    """The rest of the sidebar for a target in R² or accuracy: the ceiling and T (the levels span a thousandth of
    what the ceiling leaves them up to it), the trials and the seed."""
    sidebar.subheader("Privacy levels ε")
    CEILING.widget(sidebar)
    sidebar.caption(
        "The targets' variance (R²), the private check and the models share the ceiling; the levels rise to what it "
        "leaves them. A run whose check never passes releases nothing."
    )
    LEVELS.widget(sidebar)
    sidebar.subheader("Trials")
    trials = int(TRIALS.widget(sidebar))
    seed = seed_setting.widget(sidebar)
    return SearchChoice(gamma, SEARCH.options(radius_mode, noise=noise), trials, seed, problems)


def _calibration(sidebar: Any, problem: Problem, alpha: float | None, gamma: float, radius_mode: str) -> None:
    """The calibration's radio, priced at α on the bound the runs start from when α is known."""
    if alpha is None:  # α is released by each run: the captions cannot price the test in advance
        CALIBRATION.widget(sidebar)
        return
    radius = feasible_radius(problem, problem.lam, problem.radius, radius_mode)
    with st.spinner("Calibrating the tests…"):
        captions = calibration_captions(int(LEVELS.value), gamma, problem.shape.with_radius(radius), alpha)
    CALIBRATION.widget(sidebar, captions=captions)
    bound = radius_name(problem, radius, SearchOptions(radius_mode=radius_mode))
    bought = (
        "; a bound bought privately lowers it further, and the cards show what each run's check cost"
        if radius_mode == "private"
        else ", the cards' “check”"
    )
    sidebar.caption(
        f"ε_A: what the private accuracy check costs at α = {alpha:g} on the bound {bound} = {radius:.3g} that the "
        f"runs start from{bought}. The exact calibrations read each model's excess risk capped at α, which one person "
        "moves less, so their test needs less noise (derived); the theorem's and the paper's code's keep the paper's "
        "test. Doubling follows the choice: it uses its exact test when an exact calibration is chosen, the paper's "
        "otherwise, so the two are compared on equal terms."
    )
    docs_link(sidebar, "mathematics", "calibrations")


def _levels(
    sidebar: Any, problem: Problem, alpha: float | None, generator: str | None, problems: list[str]
) -> tuple[float | None, float | None]:
    """The ε grid's ends (``None``: the paper's default, said beside them) and T; refusals added to ``problems``."""
    sidebar.subheader("Privacy levels ε")
    if alpha is None:
        sidebar.caption("Paper default: ε_min = 1/n, ε_max = 4E at each run's released α (E: the theory approach's ε).")
    elif "generator" not in problems:
        with package_errors(sidebar, stop=False):
            default_min, default_max = default_eps_range(problem, alpha, generator)
            sidebar.caption(
                f"Paper default: ε_min = 1/n = **{default_min:.3g}**, ε_max = 4E = **{default_max:.3g}** "
                f"(E: the theory approach's ε at α = {alpha:g})."
            )
    eps_min = EPS_MIN.widget(sidebar, placeholder="paper default")
    eps_max = EPS_MAX.widget(sidebar, placeholder="paper default")
    for name, value in (("ε_min", eps_min), ("ε_max", eps_max)):
        if value is not None and value <= 0:
            sidebar.error(f"{name} must be > 0; leave it blank for the paper default.")
            problems.append(name)
    if eps_min is not None and eps_max is not None and eps_min > 0 and eps_max > 0 and eps_min >= eps_max:
        sidebar.error(f"ε_min ({eps_min:g}) must be smaller than ε_max ({eps_max:g}).")
        problems.append("eps range")
    LEVELS.widget(sidebar)
    return eps_min, eps_max
