"""Explorer: set the accuracy you need, see the privacy you pay.

The screen, top to bottom: the presets; the data report (open for an upload); the accuracy target — by default a
certified R² (ridge) or accuracy (logistic) with λ chosen privately, which noise reduction alone runs toward, its card
giving the whole ε and its parts, the λ chosen, how often the target was met in-sample and the held-out figure
(evaluation only), or why nothing was released (``ui.certified``; an upload such a target cannot meet is refused before
it is prepared, spending nothing, and a refusal offers its uncertified alternative as a button, the theory approach
labelled not certified); or the share of the best model's gain to keep, whose α each run releases
privately; or the paper's excess risk α — and the methods; the headline per method, drawn live (median ex-post ε, e^ε, posterior bounds, success and fallback,
where the privacy went — the bound on the model's size, the check, the model — and what the bound saved, one sentence
each), the session's spend on a real table, and what would lower ε when it is weak; ε across trials and its split;
one trial's search step by step; the accuracy reached; downloads. The search's settings sit in the sidebar under the
shared dataset picker (``ui.search_sidebar``). Every setting lives in the URL.
"""

from __future__ import annotations

import streamlit as st

from accfirst.interpret import radius_sentence
from accfirst.interpret.certified import summarise_certified
from accfirst.methods.certified import NOISE_REDUCTION
from ui.certified import (
    ONE_METHOD,
    certified_options,
    certified_sections,
    draw_certified,
    every_run_refused,
    with_heldout,
)
from ui.dataset import refused_before_preparing, require_selection, show_data_report, show_radius_notice
from ui.downloads import download_buttons
from ui.epsilon_charts import epsilon_charts, noise_comparison
from ui.errors import call, package_errors
from ui.explorer_settings import METHODS_SETTING, SCOPE, SETTINGS, preset_buttons, uncertified_button
from ui.frame import ensure_frame
from ui.guidance import explorer_guidance
from ui.headline import live_headline
from ui.noise import noise_seed, page_seed, repeatable_warning
from ui.quality import accuracy_section
from ui.replay import replay_section
from ui.runs import RunRequest
from ui.search_sidebar import search_sidebar
from ui.settings import restore_from_url, write_to_url
from ui.spend import record_runs, show_spend
from ui.target import (
    refused_upload_view,
    released_alpha_text,
    show_zero_model_notice,
    target_controls,
    target_heading,
)

# ---------------------------------------------------------------- controls
ensure_frame()
st.title("Set the accuracy you need, see the privacy you pay")
st.caption(
    "Accuracy-first differential privacy (Ligett et al., NeurIPS 2017): name the accuracy your model needs; the search "
    "finds a private model that meets it and reports the privacy loss ε it paid."
)
restore_from_url(SETTINGS)
preset_buttons()
if (refused := refused_before_preparing()) is not None:
    page_seed(SCOPE, "Seed", release=True, upload=True)  # a link's seed has no place on an upload here either
    refused_upload_view(*refused)
    uncertified_button(st)
    write_to_url(SETTINGS)
    st.stop()
chosen = require_selection()
# Runs on a real table are releases: their noise comes from the operating system unless a seed is set (ui.noise).
release = chosen.data.preparation.private_rows
SEED, SEED_LINK = page_seed(SCOPE, "Seed", release=release, upload=not chosen.shared)
show_data_report(chosen)
with st.spinner("Building the problem (θ*, sensitivities)…"):
    problem = call(chosen.problem)
show_radius_notice(problem)

top_left, top_right = st.columns([3, 2])
choice = target_controls(top_left, chosen, problem)
if choice.certified:
    top_right.markdown(ONE_METHOD)
    methods = [NOISE_REDUCTION]
else:
    methods = METHODS_SETTING.widget(top_right)
    if not methods:
        top_right.error("Choose at least one method.")
search = search_sidebar(chosen, problem, choice.alpha, methods, SEED, certified=choice.certified)
write_to_url((*SETTINGS, *SEED_LINK))
if search.problems or not methods:
    st.error("Nothing ran: fix the settings marked in red first.", icon="✋")
    st.stop()

options = certified_options(search.options, chosen.lam) if choice.certified else search.options
request = RunRequest(
    alpha=choice.target,
    gamma=search.gamma,
    methods=tuple(methods),
    trials=search.trials,
    seed=noise_seed(search.seed, ("explorer", chosen.problem_key, search.gamma, options)),
    chosen_seed=search.seed,
    options=options,
)
repeatable_warning(st, search.seed, release)

# ---------------------------------------------------------------- 1. headline (live), spend, guidance
st.subheader(target_heading(choice.target))
if choice.certified:
    headline = live_headline(
        chosen,
        request,
        lambda summary: {},
        summarise=lambda frame: summarise_certified(with_heldout(frame, chosen.data)),
        draw=draw_certified,
    )
    if every_run_refused(headline.summary):
        uncertified_button(st)
    record_runs(chosen, request.rows_key, headline.results[~headline.results["refused"].astype(bool)])
    spend = st.empty()
    certified_sections(headline.results, headline.summary, chosen.data, request.settings(chosen))
    show_spend(spend, chosen)
    st.stop()  # the sections below are the comparison of methods at an excess risk α or a share of the gain
headline = live_headline(
    chosen,
    request,
    lambda summary: {
        row["method"]: radius_sentence(problem, row, search.gamma, request.options) for _, row in summary.iterrows()
    },
)
results = headline.results
record_runs(chosen, request.rows_key, results)
spend = st.empty()  # filled at the end, with every release this view showed
if choice.alpha is None and len(results):
    choice.released_slot.markdown(released_alpha_text(results))
    if results["alpha"].notna().any():
        with package_errors(top_left, stop=False):
            show_zero_model_notice(top_left, problem, float(results["alpha"].median()), relative=True)
if headline.finished:
    with package_errors(stop=False):
        explorer_guidance(problem, choice, search.gamma, request.options, headline.summary)

# ---------------------------------------------------------------- 2–3. ε across trials, where it went
epsilon_charts(results)
if not headline.paused:
    laplace = noise_comparison(chosen, request, results)
    if laplace is not None:
        record_runs(chosen, ("laplace", request.rows_key), laplace)

# ---------------------------------------------------------------- 4. the search, step by step
replay = replay_section(chosen, request)

# ---------------------------------------------------------------- 5. accuracy reached
accuracy_section(chosen, problem, results, replay, choice.alpha)

# ---------------------------------------------------------------- 6. downloads
st.subheader("Take it with you")
settings = request.settings(chosen, show=replay.show, exact=replay.exact)
download_buttons(st.columns(3), results, settings, "accfirst_results")
show_spend(spend, chosen)
