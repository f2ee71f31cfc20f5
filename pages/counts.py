"""Counts: release as many counts as one (ε, δ) budget allows, each within a relative error.

The screen, top to bottom: where the counts come from (a column of the session's data or
a synthetic log-uniform set); the budget, the relative error and the cap κ; per method
(noise reduction, doubling) how many counts were certified before the budget ran out;
the charts (counts certified against ρ spent, realised relative errors, ρ per count);
what κ trades; a download. [derived; consistent with Rogers et al. 2023] Every setting
lives in the URL.
"""

from __future__ import annotations

import streamlit as st

from accfirst.accounting.counts import compare_counts, summarise_counts
from accfirst.accounting.filters import zcdp_budget
from accfirst.interpret import format_delta
from accfirst.methods.doubling import Doubling
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.registry import method_label
from accfirst.plots.counts import figure_counts_certified, figure_counts_errors, figure_counts_privacy
from ui.cache import session_memo
from ui.charts import show_chart
from ui.counts import CountSource, budget_delta_setting
from ui.dataset import require_selection, show_preparation_note
from ui.docs import docs_link
from ui.errors import call, package_errors
from ui.frame import ensure_frame
from ui.noise import noise_seed, page_seed, repeatable_warning
from ui.settings import Choice, failure_setting, restore_from_url, write_to_url
from ui.text import EVALUATION_LABEL

SCOPE = "counts"
DERIVED = "derived; consistent with Rogers et al. 2023"

EPSILON = Choice(
    SCOPE,
    "eps",
    "Budget ε",
    1.0,
    options=(0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0),
    widget_type="select_slider",
    help="The whole release is (ε, δ)-differentially private, however many counts it reaches.",
)
DELTA = budget_delta_setting(
    SCOPE,
    "The (ε, δ) guarantee may fail with probability δ; choose it well below 1/(number of people).",
)
REL_ERROR = Choice(
    SCOPE,
    "alpha",
    "Relative error α",
    0.1,
    options=(0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5),
    widget_type="select_slider",
    help="A released count ŷ is certified when |ŷ − q| ≤ α·q with probability ≥ 1 − β.",
)
BETA = failure_setting(SCOPE, "beta", "β (per count)", 0.05)
CAP = Choice(
    SCOPE,
    "cap",
    "Cap κ: the share of the budget one count may use",
    0.05,
    options=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
    widget_type="select_slider",
)
SOURCE = CountSource(SCOPE)


def released(
    counts: tuple[float, ...], alpha: float, epsilon: float, delta: float, beta: float, cap: float, seed: int | None
):
    """Both arms on the same counts (kept per session: the counts may come from an upload).

    Without a seed the noise is operating-system entropy drawn once for these choices (``ui.noise``).
    """
    key = (counts, alpha, epsilon, delta, beta, cap, seed)
    noise = noise_seed(seed, ("counts", *key))
    return session_memo(
        "counts",
        key,
        lambda: compare_counts(list(counts), alpha, epsilon, delta, beta=beta, cap=cap, seed=noise),
        max_entries=4,
    )


ensure_frame()
st.title("Counts to a relative error, under one budget")
st.caption(
    "Release as many counts as the budget allows, each within a relative error you choose, in any order and with "
    f"no number fixed in advance; noise reduction against doubling ({DERIVED})."
)
chosen = require_selection()
settings = (EPSILON, DELTA, REL_ERROR, BETA, CAP, *SOURCE.settings(chosen.data))
restore_from_url(settings)
# Counts of a real table's column are a release: noise from the operating system unless a seed is set.
release = SOURCE.reads(chosen.data)
SEED, linked = page_seed(SCOPE, "Seed", release=release, upload=not chosen.shared)

left, right = st.columns(2)
with left.container(border=True):
    st.markdown("**The counts**")
    with package_errors(stop=False):
        source = SOURCE.draw(st, chosen.data, SEED.value or 0)
with right.container(border=True):
    st.markdown("**The budget and the accuracy**")
    epsilon = EPSILON.widget()
    delta = DELTA.widget()
    alpha = REL_ERROR.widget()
    beta = BETA.widget()
    cap = CAP.widget()
    seed = SEED.widget()
write_to_url((*settings, *linked))
if source is None:
    st.stop()
counts, described = source

rho_budget = zcdp_budget(epsilon, delta)
st.markdown(
    f"**{described}**: {len(counts):,} counts, the smallest {counts.min():,.0f}, the largest {counts.max():,.0f} "
    "(true counts, shown for evaluation: not private). "
    f"Budget (ε, δ) = ({epsilon:g}, {format_delta(delta)}), that is ρ = {rho_budget:.3g} in zCDP; one count may use "
    f"at most κ·ρ = {cap * rho_budget:.3g} ({DERIVED})."
)
repeatable_warning(st, seed, release)
if release:
    show_preparation_note(st, chosen.data, included=False)
frame = call(released, tuple(float(c) for c in counts), alpha, epsilon, delta, beta, cap, seed)
summary = summarise_counts(frame).set_index("method")

st.subheader(f"Counts certified within {alpha:g} relative error before the budget runs out")
cards = st.columns(len(summary))
for card, (method, row) in zip(cards, summary.iterrows(), strict=True):
    with card.container(border=True):
        st.markdown(f"#### {method_label(method)}")
        st.metric(f"Counts certified (ε = {epsilon:g}, δ = {format_delta(delta)})", f"{row['certified']:,}")
        ended = "the budget ran out" if row["refused"] else "every count was tried"
        share = "—" if row["certified"] == 0 else f"{row['share_within']:.0%}"
        st.markdown(
            f"{row['attempted']:,} of {len(counts):,} counts tried before {ended}; "
            f"{row['not_certified']:,} tried but not certified (charged their cap). "
            f"Certified counts truly within α: **{share}** (promised ≥ {1 - beta:.0%}; {EVALUATION_LABEL})."
        )
nr, doubling = (int(summary.loc[m.key, "certified"]) for m in (NoiseReduction, Doubling))
if doubling:
    st.info(f"Noise reduction certified {nr / doubling:.2g}× as many counts as doubling with the same budget.")

show_chart(figure_counts_certified(frame), "certified")
left, right = st.columns(2)
with left:
    show_chart(figure_counts_errors(frame, alpha), "errors")
with right:
    show_chart(figure_counts_privacy(frame), "privacy")
st.caption(
    "Each count gets noisier-to-sharper releases until one is certified: a noisy value large enough, next to its "
    "noise, that it must be within α of the truth (except with probability β). Noise reduction refines one noisy "
    "value and pays only for the sharpest it used; doubling draws fresh values and pays for every one. True counts "
    f"and realised errors read the data ({EVALUATION_LABEL})."
)

st.subheader("The cap κ: what it trades")
st.markdown(
    f"κ = {cap:g} lets one count use at most {cap:.0%} of the budget. Small counts are the expensive ones: a count "
    "is certified only once its noise is small next to it, so a small count needs little noise, which costs much "
    "privacy. **A small κ** gives such a count up early (not certified, charged its cap) and the budget goes on to "
    "the next counts, so more counts are released in all. **A large κ** certifies smaller counts, but one of them "
    "can take most of the budget: with κ = 1 both methods stop at the first count too small to certify, and noise "
    "reduction can lose its advantage."
)
docs_link(st, "mathematics", "counts-to-a-relative-error", "Counts to a relative error — The mathematics")
st.download_button(
    "Counts released (CSV)",
    frame.to_csv(index=False),
    file_name="accfirst_counts.csv",
    mime="text/csv",
    on_click="ignore",
)
