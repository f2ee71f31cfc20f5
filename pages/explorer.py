"""Explorer: set the accuracy you need, see the privacy you pay.

The screen, top to bottom: the data report (open for an upload); the accuracy target — an
excess risk α, or (uploads and real tables) the share of the best model's gain to keep, whose
α each run releases privately — and the methods; the headline per method (median ex-post ε,
e^ε, posterior bounds, success and fallback, where the privacy went — the bound on the model's
size, the check, the model — and what the bound saved, one sentence each); ε across trials and
its split; one trial's search step by step; the accuracy reached; downloads. Settings
of the search sit in the sidebar under the shared dataset picker. Every setting lives
in the URL.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pandas as pd
import streamlit as st

from accfirst import Problem, default_eps_range
from accfirst.guidance import advise
from accfirst.interpret import (
    alpha_meaning,
    describe_alpha,
    format_delta,
    radius_sentence,
    summarise_runs,
)
from accfirst.methods.options import FALLBACKS, SearchOptions
from accfirst.methods.registry import METHODS, method_label
from accfirst.methods.relative import RelativeTarget
from accfirst.plots.explorer import (
    figure_breakdown,
    figure_epsilon_distribution,
    figure_excess_risk,
    figure_noise_comparison,
    figure_relative_risk,
    figure_search,
    figure_test_quality,
)
from accfirst.snippet import reproduction_snippet, settings_json
from ui.cache import session_memo
from ui.charts import show_chart
from ui.dataset import (
    DATASET,
    LAMBDA,
    LAMBDA_OPTIONS,
    RADIUS,
    RADIUS_MODE,
    UPLOAD,
    Selection,
    require_selection,
    show_data_report,
    show_radius_notice,
)
from ui.docs import docs_link
from ui.errors import call, package_errors
from ui.frame import ensure_frame
from ui.guidance import SHARED_FIXABLE, show_guidance
from ui.headline import draw_headline
from ui.noise import noise_seed, page_seed, repeatable_warning
from ui.runs import RunRequest, iter_trials, released, traced_run, workers
from ui.settings import (
    Choice,
    FloatSlider,
    IntSetting,
    OptionalFloat,
    Toggle,
    calibration_captions,
    delta_problem,
    generator_problem,
    noise_setting,
    restore_from_url,
    search_settings,
    write_to_url,
)
from ui.target import (
    KAPPA,
    RELATIVE,
    TARGET_MODE,
    TARGET_SETTINGS,
    TEST_BUDGET,
    follow_dataset,
    quality_sentence,
    released_alpha_text,
    show_zero_model_notice,
    target_heading,
)
from ui.text import plain
from ui.work import estimate, measured_costs

SCOPE = "explorer"

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
SETTINGS = (
    *TARGET_SETTINGS,
    ALPHA,
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
# A preset sets every one of these: the values it names, the defaults for the rest.
PRESET_SETTINGS = (DATASET, LAMBDA, RADIUS_MODE, RADIUS, *SETTINGS)
PRESETS = {
    # Measured (20 trials, seed 0, the private radius): noise reduction ε = 0.357 (e^ε ≈ 1.43), doubling 0.661,
    # theory 1.07, no fallbacks: a visible saving and a meaningful privacy, live.
    "Classroom demo": ((DATASET, "synthetic-buzz"), (ALPHA, 0.1)),
    "Paper's Figure 1 settings": ((DATASET, "synthetic-buzz"), (ALPHA, 0.05), *PAPER_SETTINGS),
    "Your data": ((DATASET, UPLOAD),),
}


def apply_settings(values: tuple[tuple[object, object], ...], every: tuple = ()) -> None:
    """Set the widgets named in ``values`` (an ``on_click`` callback: before the widgets are drawn).

    Settings in ``every`` that ``values`` does not name go back to their defaults.
    """
    chosen = {setting.state_key: value for setting, value in values}
    for setting in every:
        st.session_state[setting.state_key] = setting.default
    st.session_state.update(chosen)


def alpha_text(chosen: Selection, problem: Problem, alpha: float) -> str:
    """What α means on this data in plain words (evaluation only: it reads θ*), once per problem and α."""
    return session_memo(
        "alpha_meaning",
        (*chosen.problem_key, alpha),
        lambda: describe_alpha(alpha_meaning(problem, alpha, chosen.data.report, chosen.data.target_name)),
        max_entries=64,
    )


LAST_HEADLINE = f"{SCOPE}.last_headline"
CONFIRMED = f"{SCOPE}.confirmed"


# ---------------------------------------------------------------- controls
ensure_frame()
st.title("Set the accuracy you need, see the privacy you pay")
st.caption(
    "Accuracy-first differential privacy (Ligett et al., NeurIPS 2017): choose the excess risk α your model "
    "may have; each method finds a private model that meets it and reports the privacy loss ε it paid."
)
restore_from_url(SETTINGS)
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
chosen = require_selection()
# Runs on a real table are releases: their noise comes from the operating system unless a seed is set (ui.noise).
release = chosen.data.preparation.private_rows
SEED, SEED_LINK = page_seed(SCOPE, "Seed", release=release, upload=not chosen.shared)
show_data_report(chosen)
with st.spinner("Building the problem (θ*, sensitivities)…"):
    problem = call(chosen.problem)
show_radius_notice(problem)

top_left, top_right = st.columns([3, 2])
follow_dataset(chosen)
relative = TARGET_MODE.widget(top_left) == RELATIVE
if relative:
    target: float | RelativeTarget = RelativeTarget(float(KAPPA.widget(top_left)))
    alpha = None
    released_slot = top_left.empty()
    released_slot.caption("α = κ·Ŝ is released privately by each run: it appears here once the first trials are done.")
else:
    alpha = float(ALPHA.widget(top_left))
    target = alpha
    with package_errors(top_left, stop=False):
        # The sentence names the target column, which an upload controls: plain text, never Markdown.
        top_left.caption(plain(alpha_text(chosen, problem, alpha) + " Evaluation only: this reads the data."))
        show_zero_model_notice(top_left, problem, alpha, relative=False)
methods = METHODS_SETTING.widget(top_right)
problems: list[str] = []
if not methods:
    top_right.error("Choose at least one method.")
    problems.append("methods")

sidebar = st.sidebar
sidebar.header("The search")
gamma = GAMMA.widget(sidebar)
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
if refusals:
    problems.append("noise")
if relative:  # α is released by each run: the captions cannot price the test in advance
    CALIBRATION.widget(sidebar)
else:
    with st.spinner("Calibrating the tests…"):
        captions = calibration_captions(int(LEVELS.value), float(gamma), problem.shape, alpha)
    CALIBRATION.widget(sidebar, captions=captions)
sidebar.caption(
    "ε_A: the private test's privacy loss here. The exact calibrations read each model's excess risk capped at α, "
    "which one person moves less, so their test needs less noise (derived); the theorem's and the paper's code's "
    "keep the paper's test. Doubling follows the choice: it uses its exact test when an exact calibration is "
    "chosen, the paper's otherwise, so the two are compared on equal terms."
)
docs_link(sidebar, "mathematics", "calibrations")
sidebar.button(
    "Paper settings",
    key=f"{SCOPE}.paper",
    on_click=apply_settings,
    args=(PAPER_SETTINGS,),
    help=f"The authors' configuration: their code's calibration, T = {PAPER.T}, λ = 0.005, γ = 0.1, Laplace noise, "
    "no bound on the model's size but the paper's M, and on a synthetic table their fallback (the exact θ* when no "
    "level passes).",
)
delta = DELTA.widget(sidebar)
if message := delta_problem(delta, methods, chosen.task, noise):
    sidebar.error(message)
    problems.append("delta")

if relative:
    test_budget = float(TEST_BUDGET.widget(sidebar))
sidebar.subheader("Privacy levels ε")
if relative:
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
spacing = SPACING.widget(sidebar, horizontal=True)
# A table that holds people's data never releases θ*: the paper's fallback is for synthetic tables only.
fallback = SearchOptions.fallback if release else FALLBACK.widget(sidebar)

sidebar.subheader("Trials")
trials = TRIALS.widget(sidebar)
seed = SEED.widget(sidebar)
write_to_url((*SETTINGS, *SEED_LINK))

if problems:
    st.error("Nothing ran: fix the settings marked in red first.", icon="✋")
    st.stop()

options = SEARCH.options(
    chosen.radius_mode,
    eps_min=eps_min,
    eps_max=eps_max,
    spacing=spacing,
    noise=noise,
    fallback=fallback,
    **({"test_budget": test_budget} if relative else {}),
)
request = RunRequest(
    alpha=target,
    gamma=float(gamma),
    methods=tuple(methods),
    trials=int(trials),
    seed=noise_seed(seed, ("explorer", chosen.problem_key, float(gamma), options)),
    chosen_seed=seed,
    options=options,
)
repeatable_warning(st, seed, release)


def savings(summary: pd.DataFrame) -> dict[str, str]:
    """What the bound on the model's size saved each method (public constants and released numbers only)."""
    return {
        row["method"]: radius_sentence(problem, row, float(gamma), request.options) for _, row in summary.iterrows()
    }


# ---------------------------------------------------------------- 1. headline (live)
st.subheader(target_heading(target))
headline = st.empty()
progress_slot = st.empty()
if LAST_HEADLINE in st.session_state:  # keep the previous numbers on screen until new ones arrive
    with headline.container():
        draw_headline(**st.session_state[LAST_HEADLINE], data=chosen.data)
last_draw, drawn, paused = 0.0, 0, None
confirmed = st.session_state.setdefault(CONFIRMED, set())
with package_errors():
    for progress in iter_trials(chosen, request):
        now = time.perf_counter()
        if progress.done > drawn and (progress.finished or now - last_draw > 0.25):
            summary = summarise_runs(progress.frame)
            with headline.container():
                draw_headline(summary, progress.done, progress.total, chosen.data, saved=savings(summary))
            last_draw, drawn = now, progress.done
        if progress.done == len(methods) and not progress.finished and request not in confirmed:
            # Trial 0 of each method measured what a run costs here: ask before a long wait.
            rest = estimate(measured_costs(progress.frame), trials - 1, workers(chosen))
            if rest.needs_confirmation:
                paused = rest
                break
        if not progress.finished and progress.seconds > 0.3:
            progress_slot.progress(
                progress.done / progress.total, text=f"Running trials: {progress.done} of {progress.total}"
            )
    progress_slot.empty()
if paused is not None:
    summary = summarise_runs(progress.frame)
    with headline.container():
        draw_headline(
            summary,
            progress.done,
            progress.total,
            chosen.data,
            "the rest waits for your go-ahead below.",
            savings(summary),
        )
    with progress_slot.container():
        st.warning(f"The other trials would take {paused.describe()}.", icon="⏳")
        st.button(
            f"Run the other trials ({paused.describe()})",
            key=f"{SCOPE}.continue",
            type="primary",
            on_click=confirmed.add,
            args=(request,),
        )
st.session_state[LAST_HEADLINE] = {
    "summary": summary,
    "done": progress.done,
    "total": progress.total,
    "saved": savings(summary),
}
results = progress.frame
if relative and len(results):
    released_slot.markdown(released_alpha_text(results))
    if results["alpha"].notna().any():
        with package_errors(top_left, stop=False):
            show_zero_model_notice(top_left, problem, float(results["alpha"].median()), relative=True)
if progress.finished and not relative:  # guidance (issue 10): why ε is weak and what would lower it
    advice = advise(
        problem, alpha, gamma, request.options, summary, lam_choices=LAMBDA_OPTIONS, largest_alpha=ALPHA.high
    )
    show_guidance(st, advice, {ALPHA.key: ALPHA, **SHARED_FIXABLE})

# ---------------------------------------------------------------- 2–3. ε across trials, breakdown
st.subheader("Ex-post ε across trials")
left, right = st.columns(2)
with left:
    show_chart(figure_epsilon_distribution(results), "eps_distribution")
with right:
    show_chart(figure_breakdown(results), "eps_breakdown")
    st.caption(
        "Radius: the privacy of a bound on the model's size bought privately (when one was). Testing: the privacy "
        "of the private accuracy test (ε_A for noise reduction, one Laplace test per step for doubling). "
        "Generating: the ε of the released hypothesis. The theory approach and the Gibbs posterior do not test."
    )
compared = [m for m in methods if METHODS[m].noises >= {"laplace", "gaussian"}]
if noise == "gaussian" and compared and paused is None:
    st.subheader("Laplace vs Gaussian noise")
    laplace_options = replace(request.options, noise="laplace")
    # Another question: its own noise (the visitor's seed, or a secret of its own), never the Gaussian runs' noise.
    laplace_seed = noise_seed(seed, ("explorer", chosen.problem_key, float(gamma), laplace_options))
    laplace_request = replace(request, methods=tuple(compared), seed=laplace_seed, options=laplace_options)
    with st.spinner("Running the same trials with Laplace noise…"), package_errors(stop=False):
        *_, laplace = iter_trials(chosen, laplace_request)
        show_chart(
            figure_noise_comparison(laplace.frame, results[results["method"].isin(compared)]), "noise_comparison"
        )
        st.caption(
            f"Generation part of ε only (the test is the same Laplace test either way). Gaussian noise reduction "
            f"pays an (ε, δ)-ex-post loss with δ = {format_delta(delta)} (derived; consistent with Rogers et al. "
            "2023); Laplace pays a pure ε."
        )

# ---------------------------------------------------------------- 4. the search, step by step
st.subheader("The search, step by step")
replay, exactness = st.columns([1, 2], vertical_alignment="bottom")
show = SHOW.widget(replay)
exact = EXACT.widget(exactness)
if show >= trials:
    st.error(f"Trial {show} does not exist: trials are numbered 0 to {trials - 1}.")
traced = {}
if show < trials:
    with st.spinner("Replaying the trial…"), package_errors(stop=False):
        traced = {method: traced_run(chosen, request, method, int(show), exact=exact) for method in methods}
# A relative run that showed no signal tested nothing: it has no search to replay.
searching = [m for m in methods if METHODS[m].tests_accuracy and m in traced and traced[m].trace is not None]
if show < trials:
    if searching and traced:
        columns = st.columns(len(searching))
        for column, method in zip(columns, searching, strict=True):
            run = traced[method]
            with column:
                show_chart(
                    figure_search(
                        run.trace.to_frame(),
                        method=method,
                        alpha=run.alpha,
                        stop_index=run.stop_index,
                        trial=int(show),
                        nothing_released=run.nothing_released,
                    ),
                    f"search_{method}",
                )
        st.caption(
            "Each point is one private hypothesis, noisiest (most private) first. The test sees only the noisy "
            "risk and the noisy threshold and stops at the first level where the noisy risk is at or below it. "
            "The true excess risks (grey) are computed for teaching only: they read the data and are not private. "
            "▲ marks levels where a certified lower bound was enough to reject the hypothesis."
        )
    elif methods and traced:
        st.info(
            "Nothing to replay: the theory approach and the Gibbs posterior do not search (each releases one "
            "hypothesis at an ε fixed in advance), and a run whose data showed no signal tested nothing."
        )

# ---------------------------------------------------------------- 5. accuracy reached
st.subheader("Accuracy reached")
left, right = st.columns(2)
with left:
    show_chart(figure_relative_risk(results) if relative else figure_excess_risk(results, alpha), "excess_risk")
with right:
    if traced:
        with package_errors(stop=False):
            rows = [("θ* (non-private)", "nonprivate", chosen.data.test_quality(problem.theta_star))]
            rows += [
                (f"{method_label(m)} (trial {show})", m, chosen.data.test_quality(traced[m].theta)) for m in traced
            ]
            quality = pd.DataFrame(
                [(name, key, metric, value) for name, key, scores in rows for metric, value in scores.items()],
                columns=["model", "method", "metric", "value"],
            )
            show_chart(figure_test_quality(quality), "test_quality")
            st.caption(quality_sentence(rows, chosen.task) + " θ* is the exact, non-private minimiser.")

# ---------------------------------------------------------------- 6. downloads
st.subheader("Take it with you")
settings = request.settings(chosen, show=int(show), exact=bool(exact))
first, second, third = st.columns(3)
first.download_button(
    "Results (CSV)",
    released(results).to_csv(index=False),
    file_name="accfirst_results.csv",
    mime="text/csv",
    on_click="ignore",
)
second.download_button(
    "Settings (JSON)",
    settings_json(settings),
    file_name="accfirst_settings.json",
    mime="application/json",
    on_click="ignore",
)
third.download_button(
    "Python snippet",
    reproduction_snippet(settings),
    file_name="accfirst_reproduce.py",
    mime="text/x-python",
    on_click="ignore",
    help="Reruns these trials with the accfirst package: same seed, same numbers.",
)
