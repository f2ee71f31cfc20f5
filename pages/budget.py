"""Privacy budget: queue analyses of the session's data under one (ε, δ) budget and watch the ledger.

The screen, top to bottom: the budget (ε, δ) and its split between regressions and
counts; the queue (accuracy-first regressions at α, batches of counts at a relative
error) with a form to add to it; the ledger, filled in live as each analysis runs —
declared bound, realised charge, refund, remaining, the refusal when it comes — beside
the same queue under doubling; a chart of both. [derived; consistent with Rogers et al.
2023] Every setting, the queue included, lives in the URL.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from accfirst import default_eps_range
from accfirst.accounting.session import describe_budget, fitted, session_budget
from accfirst.datasets.prepared import EVALUATION_MODE
from accfirst.interpret import format_delta
from accfirst.plots.budget import figure_ledger
from ui.charts import show_chart
from ui.counts import CountSource, budget_delta_setting
from ui.dataset import require_selection, show_preparation_note
from ui.docs import docs_link
from ui.errors import call, package_errors
from ui.frame import ensure_frame
from ui.ledger import ARMS, BudgetRun, run_queues
from ui.noise import page_seed, repeatable_warning
from ui.queue import QUEUE, SCOPE, queue_editor
from ui.settings import Choice, FloatSlider, failure_setting, restore_from_url, write_to_url
from ui.spend import show_spend

DERIVED = "derived; consistent with Rogers et al. 2023"
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
SOURCE = CountSource(SCOPE, with_synthetic=False, default_source="data", default_mode="bins-data")

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
settings = (EPSILON, DELTA, SHARE, EPS_MAX, GAMMA, CAP, QUEUE, *SOURCE.settings(chosen.data))
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
analyses = queue_editor()
queue = QUEUE.value
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
run = BudgetRun(
    float(epsilon), float(delta), float(share), float(gamma), float(eps_max), float(cap), chosen.radius_mode, seed
)
repeatable_warning(st, seed, release)
with package_errors():
    steps = run_queues(chosen, queue, tuple(float(c) for c in counts), run)
ledgers = {colour: arm[-1].ledger for (_, _, colour), arm in zip(ARMS, steps, strict=True)}
(mine, mine_fit), (twin, twin_fit) = ((title, fitted(arm[-1].ledger)) for (title, _, _), arm in zip(ARMS, steps))
with fit_counts.container():
    first, second = st.columns(2)
    first.metric(f"Analyses that fit: {mine.lower()}", f"{mine_fit} of {len(analyses)}")
    second.metric(twin, f"{twin_fit} of {len(analyses)}")
    st.info(
        f"In the same budget, {mine_fit} of {len(analyses)} analyses fit as queued and {twin_fit} under doubling. "
        "Doubling's searches declare far more (each of its levels is paid in full), so the filter admits fewer."
    )
show_spend(st, chosen)
show_chart(figure_ledger(ledgers), key="ledger")
st.caption(
    "Declared: the most the analysis could cost, fixed before it ran — the filter admits it only if that fits in "
    "what is left. Charged: what it actually cost (a regression's ex-post ε; a batch of counts, the ρ of the levels "
    "where its counts stopped). Refund: the difference, back in the budget. Regressions are counted in ε, counts in "
    "ρ (zCDP); the chart puts both on one scale, the share of their own part of the budget. A Gaussian regression "
    "holds with its δ, shown beside its bound."
)
with st.expander("Every round of the filters (a batch of counts is one round per count, or per level under doubling)"):
    for (title, _, _), arm in zip(ARMS, steps, strict=True):
        st.markdown(f"**{title}**")
        rounds = arm[-1].rounds
        st.dataframe(rounds.drop(columns=["filter"]), hide_index=True, width="stretch")
docs_link(st, "mathematics", "many-analyses-one-budget", "Many analyses, one budget — The mathematics")
