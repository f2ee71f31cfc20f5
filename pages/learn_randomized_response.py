"""Learn: randomized response — plausible deniability with coins (docs/mathematics.md#teaching-mechanisms, the lecture
slides).

The screen: the protocol (truthful with probability p, else "yes" with probability q) with
its ε live and the 2 × 2 table of answer probabilities; a simulated class poll (class size,
true share) with the unbiased estimate, its confidence interval and how it spreads over
repeated polls; and the live classroom poll. A teacher opens a room and shows its code and
link; students who open the link flip real coins and send only the randomized answer — the
server never learns anyone's truth — and the estimate updates live, with a warning in words
when the answers do not fit the coins, and the answers the room refused and why. A link
with ``?room=`` shows the student view only: one answer per browser (``ui.poll``: a reload,
the Back button or the link pasted again cannot answer twice); a malformed code is listed in
the page's notice and the class page shows.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from accfirst.errors import AccFirstError
from accfirst.plots.learn import figure_live_estimate, figure_poll_spread, figure_response_table
from accfirst.teaching import RandomizedResponse, parse_room_code
from ui.charts import show_chart
from ui.errors import call, package_errors
from ui.frame import ensure_frame
from ui.link_notice import report_ignored
from ui.poll import ROOM_PARAMETER, TEACHER_ROOM, browser_token, poll_rooms
from ui.settings import Choice, FloatSlider, IntSetting, restore_from_url, write_to_url

SCOPE = "rr"
POLLS = 2000
SIXTHS = tuple(k / 6 for k in range(1, 6))
SIXTH_LABELS = {1 / 6: "1/6", 2 / 6: "1/3", 3 / 6: "1/2", 4 / 6: "2/3", 5 / 6: "5/6"}

P = FloatSlider(
    SCOPE,
    "p",
    "p: probability of answering truthfully",
    0.5,
    low=0.01,
    high=1.0,
    step=0.01,
    format="%.2f",
    help="The slides' first coin: tails (probability ½) means answer truthfully.",
)
Q = FloatSlider(
    SCOPE,
    "q",
    "q: probability of a forced “yes”",
    0.5,
    low=0.0,
    high=1.0,
    step=0.01,
    format="%.2f",
    help="When not answering truthfully, say “yes” with probability q (the slides' second coin: q = ½).",
)
CLASS = IntSetting(SCOPE, "n", "Class size n", 30, low=5, high=2000)
TRUTH = FloatSlider(SCOPE, "truth", "True share π who would say “yes”", 0.3, low=0.0, high=1.0, step=0.01)
SEED = IntSetting(SCOPE, "seed", "Seed", 0, low=0, high=2**32 - 1, box=True)
ROOM_P = Choice(
    SCOPE,
    "room_p",
    "Truthful with probability p",
    0.5,
    options=SIXTHS,
    labels=SIXTH_LABELS,
    widget_type="select_slider",
    help="½ is a coin; other values use a die.",
)
ROOM_Q = Choice(
    SCOPE,
    "room_q",
    "Forced “yes” with probability q",
    0.5,
    options=SIXTHS,
    labels=SIXTH_LABELS,
    widget_type="select_slider",
)
SETTINGS = (P, Q, CLASS, TRUTH, SEED, ROOM_P, ROOM_Q)


def interval_text(interval: tuple[float, float]) -> str:
    """An interval rounded outwards to two decimals, so a narrow one never reads as a point."""
    return f"{math.floor(interval[0] * 100) / 100:.2f}–{math.ceil(interval[1] * 100) / 100:.2f}"


def share_text(estimate: float, clipped: float) -> str:
    """The estimated true share as the chart draws it (a percentage in 0–100%), and the unbiased value it was
    clipped from when that left 0–100%."""
    if estimate == clipped:
        return f"{clipped:.0%} (unbiased)"
    return f"{clipped:.0%}: the unbiased estimate, {estimate:.0%}, leaves 0–100% while answers are few"


@st.fragment(run_every=2)
def live_results(code: str) -> None:
    """The room's counts and estimate, redrawn every 2 seconds; a warning when the answers do not fit the coins."""
    with package_errors(stop=False):
        shown = poll_rooms().snapshot(code)
        show_chart(figure_live_estimate(shown.estimate, shown.interval, shown.yes, shown.answers), f"live_{code}")
        if shown.answers == 0:
            return
        counted = f"From {shown.answers} randomized answer{'s' if shown.answers != 1 else ''} ({shown.yes} “yes”)"
        if shown.misfit is None:
            low, high = shown.interval
            st.caption(
                f"{counted}: estimated true share {share_text(shown.estimate, shown.clipped_estimate)}; 95% interval "
                f"{math.floor(low * 100):.0f}–{math.ceil(high * 100):.0f}%."
            )
            return
        devices = shown.protocol.devices
        extreme = f"{'at least' if shown.misfit.direction == 'more' else 'at most'} {shown.yes} “yes”"
        st.warning(
            f"{shown.misfit.direction.capitalize()} “yes” than the {devices} allow: some answers may not follow the "
            f"{devices}. Had every answer followed them, {extreme} out of {shown.answers} would come with "
            f"probability at most {shown.misfit.probability:.1%}.",
            icon="⚠️",
        )
        st.caption(
            f"{counted}: estimated true share {shown.clipped_estimate:.0%}, clipped to 0–100% because the answers do "
            f"not fit the {devices}; no interval, since no true share fits them."
        )


def student_view(code: str) -> None:
    """What a phone shows on the room's link: the coins, two answer buttons (until this browser answers), the
    result."""
    room = call(poll_rooms().snapshot, code)
    token = call(browser_token, code)
    st.subheader("Class poll: answer with coins")
    st.write("Your teacher asks a yes/no question. Before you answer:")
    st.info(room.protocol.instructions(), icon="🪙")
    st.caption(
        "Only the answer the coins tell you to give leaves your phone. Nobody — not the teacher, not the "
        f"server — can know whether it is your truth (ε = {room.protocol.epsilon:.2f}: plausible deniability)."
    )
    if call(poll_rooms().has_answered, code, token):
        st.success("Thank you: your randomized answer is in.", icon="✅")
    else:
        yes, no = st.columns(2)
        for column, answer, label in ((yes, True, "Answer “yes”"), (no, False, "Answer “no”")):
            if column.button(label, key=f"answer_{answer}", type="primary", width="stretch"):
                call(poll_rooms().submit, code, answer, token)
                st.rerun()
    live_results(code)


def show_refusals(code: str) -> None:
    """The answers the room refused, and why (a second answer from a browser, a flood, a full poll)."""
    with package_errors(stop=False):
        refused = poll_rooms().snapshot(code).refused
        if refused:
            reasons = "; ".join(f"{reason}: {count}" for reason, count in refused)
            total = sum(count for _, count in refused)
            st.caption(f"Refused {total} answer{'s' if total != 1 else ''} — {reasons}.")


def teacher_view() -> None:
    """Open a room (or show the open one): its code, its link, the live estimate and the refused answers."""
    code = st.session_state.get(TEACHER_ROOM)
    if code is None:
        with st.form("join", border=False):
            typed = st.text_input("Got a code from your teacher? Type it here", max_chars=12, key="join_code")
            if st.form_submit_button("Join the poll"):
                st.query_params[ROOM_PARAMETER] = call(parse_room_code, typed)
                st.rerun()
        st.write("Or open a poll for your class:")
        left, right = st.columns(2)
        room_p = ROOM_P.widget(left)
        room_q = ROOM_Q.widget(right)
        protocol = RandomizedResponse(room_p, room_q)
        st.caption(f"Students will read: {protocol.instructions()}  ε = {protocol.epsilon:.2f}.")
        if st.button("Open a poll", type="primary", key="open_room"):
            st.session_state[TEACHER_ROOM] = call(poll_rooms().open_room, protocol)
            st.rerun()
        return
    st.write("Ask your question aloud. Students open this link on their phones, or this page and type the code:")
    code_column, link_column = st.columns([1, 3], vertical_alignment="center")
    code_column.metric("Room code", code)
    link_column.code(f"{st.context.url or ''}?{ROOM_PARAMETER}={code}", language=None)
    st.caption(
        "One answer per browser: the app keeps a random identifier in each student's browser (a cookie), so a reload, "
        "the Back button or the link opened again cannot answer twice; another browser can. The poll also refuses "
        "answers arriving faster than a class sends them."
    )
    live_results(code)
    show_refusals(code)
    if st.button("Close the poll", key="close_room"):
        with package_errors(stop=False):
            poll_rooms().close_room(code)
        del st.session_state[TEACHER_ROOM]
        st.rerun()


# ---------------------------------------------------------------- a student's phone
ensure_frame()
room_text = st.query_params.get(ROOM_PARAMETER)
if room_text is not None:
    try:
        room_code = parse_room_code(room_text)
    except AccFirstError as error:  # a malformed code in a link: said once at the top, the class page instead
        report_ignored([f"{ROOM_PARAMETER}: {error}"])
        del st.query_params[ROOM_PARAMETER]
    else:
        student_view(room_code)
        st.stop()

# ---------------------------------------------------------------- the protocol
st.title("Randomized response: answers nobody can hold against you")
st.caption(
    "The lecture slides' protocol: flip a coin; tails, answer truthfully; heads, flip again and answer “yes” for "
    "heads, “no” for tails. Every single answer is deniable, yet the class's share can still be estimated."
)
restore_from_url(SETTINGS)
left, right = st.columns([2, 3])
with left:
    p = P.widget()
    q = Q.widget()
    protocol = call(RandomizedResponse, p, q)
    epsilon = protocol.epsilon
    st.metric("Privacy loss ε", "∞" if math.isinf(epsilon) else f"{epsilon:.3f}")
    st.caption(
        "ε = max over the two answers of ln(P(answer | yes) / P(answer | no)). The slides' p = q = ½ gives ln 3 ≈ "
        "1.10. With p = 1 (always the truth), or q at 0 or 1, some answer gives the truth away: ε = ∞."
    )
with right:
    show_chart(figure_response_table(protocol), "table")

# ---------------------------------------------------------------- a simulated class
st.subheader("A simulated class poll")
left, right = st.columns([2, 3])
with left:
    n = CLASS.widget()
    truth = TRUTH.widget()
    seed = SEED.widget()
write_to_url(SETTINGS)
yes_counts = protocol.simulate_polls(n, truth, POLLS, np.random.default_rng(seed))
estimates = protocol.estimate(yes_counts / n)
first = int(yes_counts[0])
interval = protocol.confidence_interval(first, n)
standard_error = math.sqrt(protocol.variance(truth, n))
with left:
    st.metric("One poll's estimate π̂", f"{estimates[0]:.3f}", help="π̂ = (λ̂ − (1−p)q)/p, λ̂ the share of “yes”.")
    st.metric("Its 95% interval", interval_text(interval))
    st.metric(
        f"Spread over {POLLS:,} polls (sd)",
        f"{estimates.std():.3f}",
        help=f"The formula √(λ(1−λ)/(np²)) gives {standard_error:.3f}.",
    )
with right:
    show_chart(figure_poll_spread(estimates, truth, standard_error, float(estimates[0]), interval), "spread")
st.caption(
    "Each simulated student truly says “yes” with probability π, then follows the protocol. The estimate is "
    "unbiased: over many polls it centres on the truth; privacy costs precision, as the spread grows by 1/p. "
    "The interval is the exact (Clopper–Pearson) one for the share of “yes”, mapped to π: it holds the truth in "
    "at least 95% of polls."
)

# ---------------------------------------------------------------- the live poll
st.subheader("Live classroom poll")
st.caption(
    "The poll lives in this server's memory only and closes after 2 hours without answers. It keeps the number of "
    "“yes” and of answers, how many answers it refused, and a fingerprint of each answering browser's token, never "
    "tied to its answer: no names, no true answers."
)
teacher_view()
