"""Privacy budget: queue analyses of the session's data under one (ε, δ) budget and watch the ledger.

The screen, top to bottom: the budget (ε, δ) and its split between regressions and
counts; the queue (accuracy-first regressions at α, batches of counts at a relative
error) with a form to add to it; the ledger, filled in live as each analysis runs —
declared bound, realised charge, refund, remaining, the refusal when it comes — beside
the same queue under doubling; a chart of both. [derived; consistent with Rogers et al.
2023] Every setting, the queue included, lives in the URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from accfirst import default_eps_range
from accfirst.accounting.session import (
    Analysis,
    SessionStep,
    describe_budget,
    fitted,
    run_session,
    session_budget,
)
from accfirst.datasets.prepared import EVALUATION_MODE
from accfirst.erm.problem import Problem
from accfirst.errors import AccFirstError
from accfirst.interpret import format_delta
from accfirst.methods.options import SearchOptions
from accfirst.plots.budget import figure_ledger
from ui.cache import session_memo
from ui.charts import show_chart
from ui.counts import CountSource, budget_delta_setting
from ui.dataset import Selection, require_selection, show_preparation_note
from ui.docs import docs_link
from ui.errors import call, package_errors
from ui.frame import ensure_frame
from ui.noise import noise_seed, page_seed, repeatable_warning
from ui.settings import Choice, FloatSlider, InvalidValue, Setting, failure_setting, restore_from_url, write_to_url
from ui.text import plain

SCOPE = "budget"
DERIVED = "derived; consistent with Rogers et al. 2023"
# A queue is bounded so that one click stays a few seconds of work on the shared server.
MAX_QUEUE = 8
EXAMPLE_QUEUE = ("nr-laplace-0.1", "counts-nr-0.1", "nr-laplace-0.05", "nr-gaussian-0.05", "counts-nr-0.05")
ALPHAS = (0.01, 0.02, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)


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


EPSILON = Choice(
    SCOPE,
    "eps",
    "Budget ε",
    8.0,
    options=(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0),
    widget_type="select_slider",
    help="Everything the queue releases is, together, (ε, δ)-differentially private.",
)
DELTA = budget_delta_setting(
    SCOPE,
    "The guarantee may fail with probability δ. Counts and Gaussian regressions need δ > 0; Laplace regressions "
    "alone are pure ε.",
)
SHARE = FloatSlider(
    SCOPE,
    "share",
    "Share of ε for regressions",
    0.5,
    low=0.05,
    high=0.95,
    step=0.05,
    format="%.2f",
    help="Regressions are charged in an ex-post filter, counts in a zCDP filter; a queue with both splits the budget "
    "and the two parts add up. A queue of one kind gets the whole budget.",
)
EPS_MAX = Choice(
    SCOPE,
    "eps_max",
    "Top of each regression's ε grid, ε_max",
    1.0,
    options=(0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 500.0, 1000.0, 5000.0),
    widget_type="select_slider",
    help="Inside a budget a search declares the loss of its last level before it runs, so ε_max sets how much it "
    "must be admitted with. A search that would need more falls back: it releases nothing and is charged the bound.",
)
GAMMA = failure_setting(SCOPE, "gamma", "γ (regressions)", 0.1)
CAP = Choice(
    SCOPE,
    "cap",
    "Cap κ per count",
    0.05,
    options=(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
    widget_type="select_slider",
    help="The share of the counts' budget one count may use (see the Counts page).",
)
QUEUE = QueueSetting(SCOPE, "queue", "Queue", EXAMPLE_QUEUE)
SOURCE = CountSource(SCOPE, with_synthetic=False, default_source="data", default_mode="bins-data")
ADD_KIND, ADD_METHOD, ADD_NOISE, ADD_TARGET = (f"{SCOPE}.add_{name}" for name in ("kind", "method", "noise", "target"))


def add_to_queue() -> None:
    state = st.session_state
    noise = state[ADD_NOISE] if state[ADD_KIND] == "regression" else "laplace"
    item = Analysis(state[ADD_KIND], state[ADD_METHOD], state[ADD_TARGET], noise).to_text()
    state[QUEUE.state_key] = (*state[QUEUE.state_key], item)[:MAX_QUEUE]


def remove_from_queue(position: int) -> None:
    queue = st.session_state[QUEUE.state_key]
    st.session_state[QUEUE.state_key] = queue[:position] + queue[position + 1 :]


def set_queue(queue: tuple[str, ...]) -> None:
    st.session_state[QUEUE.state_key] = queue


def short_label(analysis: Analysis) -> str:
    """E.g. "NR regression, α = 0.1", "doubling counts, ±5%", "… (Gaussian)": narrow enough for a phone."""
    method = "NR" if analysis.method == "nr" else "doubling"
    if analysis.kind == "counts":
        return f"{method} counts, ±{analysis.target * 100:g}%"
    noise = " (Gaussian)" if analysis.noise == "gaussian" else ""
    return f"{method} regression, α = {analysis.target:g}{noise}"


def ledger_table(ledger: pd.DataFrame, analyses: list[Analysis]) -> pd.DataFrame:
    """The ledger as a visitor reads it: amounts with their unit, δ beside each declared bound."""

    def amounts(column: str) -> list[str]:
        # A round refused before it could declare a bound (a public check) has none: "—".
        return [f"{value:.3g} {unit}" if value == value else "—" for value, unit in zip(ledger[column], ledger["unit"])]

    return pd.DataFrame(
        {
            "#": ledger["analysis"],
            "analysis": [
                short_label(analyses[i - 1].under(m)) if i else "preparing the table"
                for i, m in zip(ledger["analysis"], ledger["method"])
            ],
            "outcome": ledger["status"],
            "declared": amounts("declared"),
            "δ": [format_delta(d) for d in ledger["delta"]],
            "charged": amounts("realised"),
            "refund": amounts("refund"),
            "remaining": amounts("remaining"),
        }
    )


def draw_ledger(where: Any, ledger: pd.DataFrame, analyses: list[Analysis]) -> None:
    with where.container():
        running = f" ({len(ledger)} of {len(analyses)} run so far)" if len(ledger) < len(analyses) else ""
        st.markdown(f"**{fitted(ledger)} of {len(analyses)} analyses fit**{running}")
        st.dataframe(ledger_table(ledger, analyses), hide_index=True, width="stretch")
        for status, icon in (("refused", "✋"), ("failed", "⚠️")):
            rows = ledger[ledger["status"] == status]
            if len(rows):
                lines = [
                    plain(f"Analysis {row['analysis']} ({row['label']}): {row['note']}") for _, row in rows.iterrows()
                ]
                st.error("  \n".join(lines), icon=icon)


def run_queues(
    chosen: Selection,
    problem: Problem,
    queue: tuple[str, ...],
    counts: tuple[float, ...],
    params: tuple,
    slots: dict[str, Any],
) -> dict[str, list[SessionStep]]:
    """The queue and its doubling twin, each drawn live in its slot as it runs; kept per session (uploads)."""
    key = (chosen.problem_key, queue, counts, params)
    seed = noise_seed(params[-1], ("budget", *key))  # a release's noise: drawn once for these choices
    run = (*params[:-1], seed)
    return session_memo("budget", key, lambda: _run_live(problem, queue, counts, run, slots), max_entries=4)


def _run_live(
    problem: Problem, queue: tuple[str, ...], counts: tuple[float, ...], params: tuple, slots: dict[str, Any]
) -> dict[str, list[SessionStep]]:
    epsilon, delta, share, gamma, eps_max, cap, radius_mode, seed = params
    options = SearchOptions(eps_max=eps_max, radius_mode=radius_mode)
    analyses = [Analysis.from_text(item) for item in queue]
    steps: dict[str, list[SessionStep]] = {}
    for method, slot in slots.items():
        arm = [a.under(method) if method == "doubling" else a for a in analyses]
        steps[method] = []
        for step in run_session(problem, arm, list(counts), epsilon, delta, share, gamma, options, cap=cap, seed=seed):
            steps[method].append(step)
            draw_ledger(slot, step.ledger, analyses)
    return steps


# ---------------------------------------------------------------- controls
ensure_frame()
st.title("Many analyses, one privacy budget")
st.caption(
    "Ask many questions of the same data under one (ε, δ) budget: privacy filters admit each analysis only if its "
    f"worst case still fits, charge what it actually cost and give the rest back ({DERIVED})."
)
chosen = require_selection()
# A queue on a real table is a release: its noise comes from the operating system unless a seed is set.
release = chosen.data.preparation.private_rows
SEED, linked = page_seed(SCOPE, "Seed of the queue's noise", release=release, upload=not chosen.shared)
settings = (
    EPSILON,
    DELTA,
    SHARE,
    EPS_MAX,
    GAMMA,
    CAP,
    QUEUE,
    *SOURCE.settings(chosen.data),
)
restore_from_url(settings)
with st.spinner("Building the problem (θ*, sensitivities)…"):
    problem = call(chosen.problem)

budget_box, regression_box, counts_box = st.columns(3)
with budget_box.container(border=True):
    st.markdown("**The budget**")
    epsilon = EPSILON.widget()
    delta = DELTA.widget()
    share = SHARE.widget()
with regression_box.container(border=True):
    st.markdown("**Regressions** (accuracy first)")
    eps_max = EPS_MAX.widget()
    gamma = GAMMA.widget()
with counts_box.container(border=True):
    st.markdown("**Counts** (rows of one column)")
    source = None  # stays None when the package refuses the source (the error is shown)
    with package_errors(stop=False):
        source = SOURCE.draw(st, chosen.data, 0)
    cap = CAP.widget()
seed = SEED.widget(st.sidebar)

queue: tuple[str, ...] = QUEUE.value
analyses = [Analysis.from_text(item) for item in queue]
st.subheader("The queue")
with st.container(border=True):
    if not analyses:
        st.info("The queue is empty: add an analysis below.")
    for position, analysis in enumerate(analyses):
        text, button = st.columns([6, 1], vertical_alignment="center")
        text.markdown(f"{position + 1}. {analysis.label}")
        button.button("Remove", key=f"{SCOPE}.remove.{position}", on_click=remove_from_queue, args=(position,))
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
        ["nr", "doubling"],
        key=ADD_METHOD,
        format_func={"nr": "noise reduction", "doubling": "doubling"}.get,
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
        on_click=add_to_queue,
        type="primary",
        disabled=len(queue) >= MAX_QUEUE,
        help=f"At most {MAX_QUEUE} analyses.",
    )
    example.button("Example queue", key=f"{SCOPE}.example", on_click=set_queue, args=(EXAMPLE_QUEUE,))
    clear.button("Empty the queue", key=f"{SCOPE}.clear", on_click=set_queue, args=((),))
write_to_url((*settings, *linked))

if not analyses:
    st.stop()
if source is None and any(a.kind == "counts" for a in analyses):
    st.error("The counts cannot be made from this column: choose another above, or remove the counts from the queue.")
    st.stop()
counts = source[0] if source is not None else pd.Series([0.0])

# ---------------------------------------------------------------- the budget in words
with package_errors():
    budget = session_budget(epsilon, delta, analyses, share)
kinds = {a.kind for a in analyses}
parts = []
if "regression" in kinds:
    parts.append(f"regressions (ex-post filter): {describe_budget(budget.expost)}")
if "counts" in kinds:
    parts.append(f"counts (zCDP filter): {describe_budget(budget.zcdp)}")
st.markdown(f"**Budget (ε, δ) = ({epsilon:g}, {format_delta(delta)})** — " + "; ".join(parts) + f" ({DERIVED}).")
if source is not None and "counts" in kinds:
    st.caption(f"Each batch of counts: {source[1]} ({len(counts)} counts).")
if chosen.data.preparation.mode == EVALUATION_MODE:  # a private preparation is the ledger's first row
    show_preparation_note(st, chosen.data)
regressions = [a for a in analyses if a.kind == "regression"]
if regressions:
    with package_errors(stop=False):
        paper_max = default_eps_range(problem, regressions[0].target, None)[1]
        st.caption(
            f"The grid of each regression runs from ε_min = 1/n up to ε_max = {eps_max:g}. The paper's default top, "
            f"4E, would be {paper_max:.3g} at α = {regressions[0].target:g}: a search declares about that much before "
            "it runs, so a realistic budget would admit almost nothing. A smaller ε_max is admitted more easily; a "
            "search that would need more falls back and releases nothing."
            + (
                " A bound on the model's size bought privately is part of its search's declared bound and charge."
                if chosen.radius_mode == "private"
                else ""
            )
        )

# ---------------------------------------------------------------- the ledger, live
st.subheader("The ledger")
fit_counts = st.empty()
st.markdown("##### Your queue")
mine = st.empty()
st.markdown("##### The same queue under doubling")
slots = {"nr": mine, "doubling": st.empty()}
params = (
    float(epsilon),
    float(delta),
    float(share),
    float(gamma),
    float(eps_max),
    float(cap),
    chosen.radius_mode,
    seed,
)
repeatable_warning(st, seed, release)
with package_errors():
    steps = run_queues(chosen, problem, queue, tuple(float(c) for c in counts), params, slots)
for method, slot in slots.items():
    draw_ledger(slot, steps[method][-1].ledger, analyses)
ledgers = {method: steps[method][-1].ledger for method in ("nr", "doubling")}
fits = {method: fitted(ledger) for method, ledger in ledgers.items()}
with fit_counts.container():
    first, second = st.columns(2)
    first.metric("Analyses that fit: your queue", f"{fits['nr']} of {len(analyses)}")
    second.metric("The same queue under doubling", f"{fits['doubling']} of {len(analyses)}")
    st.info(
        f"In the same budget, {fits['nr']} of {len(analyses)} analyses fit as queued and {fits['doubling']} under "
        "doubling. Doubling's searches declare far more (each of its levels is paid in full), so the filter admits "
        "fewer."
    )
show_chart(figure_ledger(ledgers), key="ledger")
st.caption(
    "Declared: the most the analysis could cost, fixed before it ran — the filter admits it only if that fits in "
    "what is left. Charged: what it actually cost (a regression's ex-post ε; a batch of counts, the ρ of the levels "
    "where its counts stopped). Refund: the difference, back in the budget. Regressions are counted in ε, counts in "
    "ρ (zCDP); the chart puts both on one scale, the share of their own part of the budget. A Gaussian regression "
    "holds with its δ, shown beside its bound."
)
with st.expander("Every round of the filters (a batch of counts is one round per count, or per level under doubling)"):
    for method, title in (("nr", "Your queue"), ("doubling", "Under doubling")):
        st.markdown(f"**{title}**")
        rounds = steps[method][-1].rounds
        st.dataframe(rounds.drop(columns=["filter"]), hide_index=True, width="stretch")
docs_link(st, "mathematics", "many-analyses-one-budget", "Many analyses, one budget — The mathematics")
