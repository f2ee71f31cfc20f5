"""α sweep: the paper's Figures 1–4 on the chosen data, live.

The screen, top to bottom: the α grid and the methods, the run and stop buttons with a
progress bar; then the last sweep's figures (Fig. 1 ex-post ε vs α against the theory
approach or doubling, in ε or e^ε; Fig. 2 excess risk; Fig. 3 testing vs generation;
Fig. 4 ‖θ‖ vs M), the paper's table and the downloads (tidy CSV, offline HTML report,
settings, Python snippet, command line). Trials, γ, T, seed, generator and calibration
sit in the sidebar under the shared dataset picker; every setting lives in the URL.

A sweep runs only when asked (it can take a minute): before that the page shows what it would cost, refuses more
than one click may start and asks before a long one; Stop ends it and keeps the previous results (``ui.sweep_run``).
On a real table the session's spend on it follows the figures (``ui.spend``).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from accfirst.cli import command_line
from accfirst.plots.paper import (
    fig1_epsilon,
    fig2_excess_risk,
    fig3_breakdown,
    fig4_theta_norm,
    html_report,
    paper_table,
)
from accfirst.search.sweep import parse_alphas
from accfirst.snippet import RunSettings
from ui.charts import show_chart
from ui.dataset import require_selection, show_data_report, show_preparation_note
from ui.downloads import download_buttons
from ui.errors import package_errors
from ui.frame import ensure_frame
from ui.noise import noise_seed, page_seed, repeatable_warning
from ui.settings import delta_problem, generator_problem, write_to_url
from ui.spend import show_spend
from ui.sweep_run import RESULT_KEY, SweepResult, run_sweep_controls, sweep_cost
from ui.sweep_settings import (
    ALPHAS,
    METHODS_SETTING,
    RISK_FACTOR,
    SCOPE,
    SEARCH,
    SETTINGS,
    VERSUS,
    restore_settings,
    sweep_sidebar,
)
from ui.text import EVALUATION_LABEL

# ---------------------------------------------------------------- controls
ensure_frame()
st.title("α sweep: the paper's figures on your data")
st.caption(
    "Every method at every requested excess risk α, several trials each: the ex-post privacy loss, the accuracy "
    "reached, where the privacy goes and how far the hypotheses stay below the norm bound — Figures 1–4 of "
    "Ligett et al. (NeurIPS 2017), on the data chosen in the sidebar."
)
chosen = require_selection()
# A sweep on a real table is a release: its noise comes from the operating system unless a seed is set (ui.noise).
release = chosen.data.preparation.private_rows
SEED, SEED_LINK = page_seed(SCOPE, "Seed", release=release, upload=not chosen.shared)
restore_settings()
left, right = st.columns([3, 2])
alphas_text = ALPHAS.widget(left)
methods = METHODS_SETTING.widget(right)
trials, gamma, seed, delta = sweep_sidebar(SEED)
write_to_url((*SETTINGS, *SEED_LINK))
repeatable_warning(st, seed, release)

alphas: list[float] = []
with package_errors(left, stop=False):
    alphas = parse_alphas(alphas_text)
refusals = [generator_problem(SEARCH.chosen_generator(), chosen.task), delta_problem(delta, methods, chosen.task)]
for message in filter(None, refusals):
    st.sidebar.error(message)
if not methods:
    right.error("Choose at least one method.")

# ---------------------------------------------------------------- cost, then run
request, cost, run_seed = None, None, None
if alphas and methods and not any(refusals):
    request = RunSettings(
        dataset=chosen.spec,
        task=chosen.task,
        lam=chosen.lam,
        alphas=tuple(alphas),
        gamma=gamma,
        methods=tuple(methods),
        trials=trials,
        seed=seed,
        radius=chosen.radius,
        options=SEARCH.options(chosen.radius_mode),
    )
    run_seed = noise_seed(seed, ("sweep", chosen.problem_key, request.gamma, request.options))
    cost = sweep_cost(chosen, request, run_seed)
    request = request if cost is not None else None
run_sweep_controls(chosen, request, cost, run_seed, alphas_text)

# ---------------------------------------------------------------- results
result: SweepResult | None = st.session_state.get(RESULT_KEY)
if result is None:
    st.info(
        "Choose the grid and press **Run sweep**. On the built-in synthetic data the paper's full grid with 10 "
        "trials takes well under a minute on two cores; Stop (or changing a setting) ends a sweep early."
    )
    show_data_report(chosen)
    st.stop()
results = result.results
if result.request != request:
    st.info("The figures show the last sweep you ran; the settings have changed since. Press **Run sweep** to update.")
show_preparation_note(st, chosen.data, len(results))
show_spend(st, chosen)

tabs = st.tabs(
    ["Fig. 1 — ε vs α", "Fig. 2 — excess risk", "Fig. 3 — testing vs generation", "Fig. 4 — ‖θ‖ vs M", "Table"]
)
with tabs[0]:
    controls = st.columns(2)
    versus = VERSUS.widget(controls[0])
    risk_factor = RISK_FACTOR.widget(controls[1]) == "exp"
    show_chart(fig1_epsilon(results, versus, risk_factor), "fig1")
    st.caption(
        "Medians over trials with the interquartile band; a run whose test never passed released nothing and "
        "counts at its declared top ε. The theory approach "
        "promises only an *expected* excess risk α, while noise reduction and doubling meet α with probability "
        "1 − γ — the comparison is generous to the theory approach."
    )
with tabs[1]:
    show_chart(fig2_excess_risk(results), "fig2")
    st.caption(
        f"True excess risk of the released hypothesis ({EVALUATION_LABEL}); a run that released nothing has none."
    )
with tabs[2]:
    show_chart(fig3_breakdown(results), "fig3")
    st.caption(
        "Testing: ε_A of InteractiveAboveThreshold (noise reduction) or the accrued Laplace tests (doubling). "
        "Generation: the ε of the released hypothesis (noise reduction) or of all generated ones (doubling)."
    )
with tabs[3]:
    show_chart(fig4_theta_norm(results), "fig4")
    st.caption(
        "The tests' sensitivity assumes ‖θ‖ ≤ M (or the public bound R when one is stated); much smaller norms "
        "show how pessimistic that bound is."
    )
with tabs[4]:
    st.dataframe(paper_table(results), hide_index=True, width="stretch")
    st.caption("Median over trials (∞ if at least half fell back) and the share of runs that fell back to θ*.")

st.subheader("Take it with you")
columns = st.columns(4)
download_buttons([columns[0], *columns[2:]], results, result.request, "accfirst_sweep")
columns[1].download_button(
    "Report (HTML, works offline)",
    partial(html_report, results, result.report, result.steps),
    file_name="accfirst_sweep_report.html",
    mime="text/html",
    on_click="ignore",
)
if result.request.dataset.builtin is not None:
    st.markdown("The same sweep from the command line (writes `results.csv` and `report.html`):")
    st.code(command_line(result.request, result.alphas_text), language="bash")

show_data_report(chosen)
