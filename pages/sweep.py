"""α sweep: the paper's Figures 1–4 on the chosen data, live.

The screen, top to bottom: the α grid and the methods, the run and stop buttons with a
progress bar; then the last sweep's figures (Fig. 1 ex-post ε vs α against the theory
approach or doubling, in ε or e^ε; Fig. 2 excess risk; Fig. 3 testing vs generation;
Fig. 4 ‖θ‖ vs M), the paper's table and the downloads (tidy CSV, offline HTML report,
settings, Python snippet, command line). Trials, γ, T, seed, generator and calibration
sit in the sidebar under the shared dataset picker; every setting lives in the URL.

A sweep runs only when asked (it can take a minute). Before that the page shows what
it would cost — the runs, and the time estimated from one measured run of each method
(``ui.work``) — refuses more than one click may start, and asks before a long one. On
built-in data it runs on the server's worker processes (``ui.runs.worker_pool``, one
per core), which every visitor's sweeps and explorer views share in turn; an upload's
sweep runs in the page's own thread, so its data never leave the session. Pressing
Stop — or changing any setting — while it runs makes Streamlit stop the script at the
next progress update (at least every 0.25 s); the sweep's work is cancelled, each worker
stops after the run it is doing, and the page keeps the previous results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import streamlit as st

from accfirst.cli import command_line
from accfirst.methods.registry import method_label
from accfirst.plots.paper import VERSUS as FIG1_VERSUS
from accfirst.plots.paper import (
    fig1_epsilon,
    fig2_excess_risk,
    fig3_breakdown,
    fig4_theta_norm,
    html_report,
    paper_table,
)
from accfirst.search.sweep import PAPER_ALPHAS_TEXT, parse_alphas, sweep
from accfirst.snippet import RunSettings, reproduction_snippet, settings_json
from ui.charts import show_chart
from ui.dataset import require_selection, show_data_report, show_preparation_note
from ui.errors import call, package_errors
from ui.frame import ensure_frame
from ui.link_notice import report_ignored
from ui.noise import noise_seed, page_seed, repeatable_warning
from ui.runs import RunRequest, first_trials, worker_pool, workers
from ui.settings import (
    Choice,
    IntSetting,
    InvalidValue,
    Setting,
    delta_problem,
    generator_problem,
    restore_from_url,
    search_settings,
    write_to_url,
)
from ui.work import MAX_RUNS, estimate, measured_costs, runs_refusal

SCOPE = "sweep"
RESULT_KEY = "sweep.result"
RUNNING_KEY = "sweep.running"
CONFIRMING_KEY = "sweep.confirming"


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
# What each comparison of Fig. 1 is in the paper (its panels), or says of its guarantee.
VERSUS_NOTES = {"theory": "Fig. 1a/b", "doubling": "Fig. 1c/d", "gibbs": "ε, δ"}
VERSUS = Choice(
    SCOPE,
    "fig1",
    "Compare noise reduction with",
    "theory",
    options=tuple(FIG1_VERSUS),
    labels={key: f"{name} ({VERSUS_NOTES[key]})" for key, name in FIG1_VERSUS.items()},
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
from_link = ALPHAS.state_key not in st.session_state
restore_from_url(SETTINGS)
if from_link and run_count(ALPHAS.value, METHODS_SETTING.value, TRIALS.value) > MAX_RUNS:
    # Refused like any bad value in a link: the grid, methods and trials go back to their defaults.
    refusal = runs_refusal(run_count(ALPHAS.value, METHODS_SETTING.value, TRIALS.value))
    report_ignored([f"alphas, methods and trials together: {refusal} Using the defaults of all three."])
    for setting in (ALPHAS, METHODS_SETTING, TRIALS):
        st.session_state[setting.state_key] = setting.default

left, right = st.columns([3, 2])
alphas_text = ALPHAS.widget(left)
methods = METHODS_SETTING.widget(right)

sidebar = st.sidebar
sidebar.header("The sweep")
trials = TRIALS.widget(sidebar)
gamma = GAMMA.widget(sidebar)
LEVELS.widget(sidebar)
seed = SEED.widget(sidebar)
GENERATOR.widget(sidebar)
CALIBRATION.widget(sidebar)
delta = DELTA.widget(sidebar)
write_to_url((*SETTINGS, *SEED_LINK))
repeatable_warning(st, seed, release)

problems: list[str] = []
alphas: list[float] = []
with package_errors(left, stop=False):
    alphas = parse_alphas(alphas_text)
if not alphas:
    problems.append("alphas")
if not methods:
    right.error("Choose at least one method.")
    problems.append("methods")
if message := generator_problem(SEARCH.chosen_generator(), chosen.task):
    sidebar.error(message)
    problems.append("generator")
if message := delta_problem(delta, methods, chosen.task):
    sidebar.error(message)
    problems.append("delta")

# ---------------------------------------------------------------- cost, then run
request, cost = None, None
if not problems:
    request = RunSettings(
        dataset=chosen.spec,
        task=chosen.task,
        lam=chosen.lam,
        alphas=tuple(alphas),
        gamma=float(gamma),
        methods=tuple(methods),
        trials=int(trials),
        seed=seed,
        radius=chosen.radius,
        options=SEARCH.options(chosen.radius_mode),
    )
    run_seed = noise_seed(seed, ("sweep", chosen.problem_key, request.gamma, request.options))
    total = len(alphas) * len(methods) * int(trials)
    refusal = runs_refusal(total)
    if refusal is None:
        # One run of each method at the middle α (the explorer's trial 0 there, cached alike) measures the cost.
        probe = RunRequest(alphas[len(alphas) // 2], request.gamma, request.methods, 1, run_seed, request.options)
        with st.spinner("Timing one run of each method…"), package_errors():
            cost = estimate(measured_costs(first_trials(chosen, probe)), len(alphas) * int(trials), workers(chosen))
        refusal = cost.refusal()
    st.markdown(
        f"**{total:,} runs**: {len(methods)} method(s) × {len(alphas)} α × {trials} trials on "
        f"{chosen.data.n:,} rows × {chosen.data.p} features" + (f", {cost.describe()}." if cost is not None else ".")
    )
    if refusal is not None:
        st.error(refusal, icon="✋")
        request = None
run_column, stop_column, _ = st.columns([1, 1, 4])
run = run_column.button("Run sweep", type="primary", disabled=request is None, key="sweep.run")
if run and cost is not None and cost.needs_confirmation:
    st.session_state[CONFIRMING_KEY] = request
    run = False
if request is not None and st.session_state.get(CONFIRMING_KEY) == request:
    st.warning(f"This sweep would take {cost.describe()}; it shares the server with every visitor.", icon="⏳")
    run = st.button(f"Run it ({cost.describe()})", key="sweep.confirm")
stopped = st.session_state.pop(RUNNING_KEY, None)
if stopped is not None and not run:
    kept = (
        "the results below are from the last sweep that finished"
        if RESULT_KEY in st.session_state
        else "no sweep has finished yet"
    )
    st.warning(f"The sweep was stopped after {stopped[0]:,} of {stopped[1]:,} runs; {kept}.", icon="⏹️")
if run and request is not None:
    st.session_state.pop(CONFIRMING_KEY, None)
    problem = call(chosen.problem)
    stop_slot = stop_column.empty()
    stop_slot.button("Stop", key="sweep.stop", help="Stop the sweep; the previous results stay.")
    bar = st.progress(0.0, text="Starting…")
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        st.session_state[RUNNING_KEY] = (done, total)
        bar.progress(done / total, text=f"Sweep: {done:,} of {total:,} runs")

    st.session_state[RUNNING_KEY] = (0, total)
    shared = {"pool": worker_pool(), "source": chosen.source} if chosen.shared else {}
    with package_errors():
        frame = sweep(
            problem,
            request.alphas,
            request.gamma,
            request.methods,
            request.trials,
            run_seed,
            workers=1,
            progress=progress,
            **shared,
            **request.options.to_dict(),
        )
    st.session_state.pop(RUNNING_KEY, None)
    stop_slot.empty()
    bar.progress(1.0, text=f"Done: {total:,} runs in {time.perf_counter() - started:.0f} s")
    st.session_state[RESULT_KEY] = (
        request,
        frame,
        report_settings(request, chosen.title, alphas_text),
        alphas_text,
        chosen.data.report.steps,
    )

# ---------------------------------------------------------------- results
result = st.session_state.get(RESULT_KEY)
if result is None:
    st.info(
        "Choose the grid and press **Run sweep**. On the built-in synthetic data the paper's full grid with 10 "
        "trials takes well under a minute on two cores; Stop (or changing a setting) ends a sweep early."
    )
    show_data_report(chosen)
    st.stop()
done_request, results, done_settings, done_alphas_text, done_steps = result
if done_request != request:
    st.info("The figures show the last sweep you ran; the settings have changed since. Press **Run sweep** to update.")
show_preparation_note(st, chosen.data, len(results))

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
        "True excess risk of the released hypothesis (evaluation only: reads the data, not private); a run that "
        "released nothing has none."
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
first, second, third, fourth = st.columns(4)
first.download_button(
    "Results (CSV)", results.to_csv(index=False), file_name="accfirst_sweep.csv", mime="text/csv", on_click="ignore"
)
second.download_button(
    "Report (HTML, works offline)",
    partial(html_report, results, done_settings, done_steps),
    file_name="accfirst_sweep_report.html",
    mime="text/html",
    on_click="ignore",
)
third.download_button(
    "Settings (JSON)",
    settings_json(done_request),
    file_name="accfirst_sweep_settings.json",
    mime="application/json",
    on_click="ignore",
)
fourth.download_button(
    "Python snippet",
    reproduction_snippet(done_request),
    file_name="accfirst_sweep.py",
    mime="text/x-python",
    on_click="ignore",
    help="Reruns this sweep with the accfirst package: same seed, same numbers.",
)
if done_request.dataset.builtin is not None:
    st.markdown("The same sweep from the command line (writes `results.csv` and `report.html`):")
    st.code(command_line(done_request, done_alphas_text), language="bash")

show_data_report(chosen)
