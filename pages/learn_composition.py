"""Learn: how privacy adds up — composition, groups, post-processing, neighbours
(docs/mathematics.md#teaching-mechanisms).

The screen: the total ε of k rounds by basic, advanced and zCDP composition side by side;
group privacy for k people; post-processing (a decision read off a noisy count keeps the
ratio); and the two notions of neighbours (the slides add or remove one person, this
project replaces one).
"""

from __future__ import annotations

import streamlit as st

from accfirst.interpret import format_delta
from accfirst.plots.learn import figure_composition, figure_group_privacy, figure_post_processing
from accfirst.teaching import (
    advanced_composition,
    basic_composition,
    replace_one_from_add_remove,
    zcdp_composition,
)
from ui.charts import show_chart
from ui.errors import call
from ui.frame import ensure_frame
from ui.settings import Choice, FloatSlider, IntSetting, restore_from_url, write_to_url

SCOPE = "composition"
DELTAS = (0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5)

EPSILON = FloatSlider(SCOPE, "eps", "ε of one round", 0.1, low=0.01, high=2.0, step=0.01, format="%.2f")
DELTA = Choice(
    SCOPE,
    "delta",
    "δ of one round",
    0.0,
    options=DELTAS,
    labels={d: format_delta(d) for d in DELTAS},
    widget_type="select_slider",
)
ROUNDS = IntSetting(SCOPE, "k", "Rounds k", 100, low=1, high=2000)
SLACK = Choice(
    SCOPE,
    "slack",
    "Target δ′ of the total (advanced, zCDP)",
    1e-6,
    options=DELTAS[1:],
    labels={d: format_delta(d) for d in DELTAS[1:]},
    widget_type="select_slider",
)
GROUP = IntSetting(SCOPE, "group", "Largest group", 10, low=2, high=50)
SETTINGS = (EPSILON, DELTA, ROUNDS, SLACK, GROUP)


def show_guarantee(where, label: str, epsilon: float, delta: float) -> None:
    """An (ε, δ) pair as a metric: ε large, δ beneath it."""
    where.metric(label, f"ε = {epsilon:.3g}", f"δ = {format_delta(delta)}", delta_color="off", delta_arrow="off")


ensure_frame()
st.title("How privacy adds up")
st.caption(
    "Every answer about the same people spends privacy. The slides' rules: run rounds one after another and the "
    "ε's add; count more carefully and they add like a square root; protect a group and pay per member; and "
    "whatever you compute from a private output costs nothing more."
)
restore_from_url(SETTINGS)

# ---------------------------------------------------------------- composition
left, right = st.columns([2, 3])
with left:
    epsilon = EPSILON.widget()
    delta = DELTA.widget()
    rounds = ROUNDS.widget()
    slack = SLACK.widget()
    basic = call(basic_composition, epsilon, delta, rounds)
    advanced = call(advanced_composition, epsilon, delta, rounds, slack)
    show_guarantee(st, "Basic: (kε, kδ)", *basic)
    show_guarantee(st, "Advanced", *advanced)
    if delta == 0:
        show_guarantee(st, "zCDP", zcdp_composition(epsilon, rounds, slack), slack)
with right:
    show_chart(figure_composition(epsilon, delta, max(rounds, 2), slack), "composition")
st.caption(
    "Advanced composition, √(2k ln(1/δ′))·ε + kε(e^ε − 1), grows like √k but pays a small δ′; it wins over kε "
    "only after enough rounds. zCDP (each ε-round is ε²/2-zCDP, the ρ's add, and ρ-zCDP is "
    "(ρ + 2√(ρ ln(1/δ)), δ)-DP) is tighter still once there are many rounds; for a few, plain kε can win. "
    "Adaptive choices of the next question are allowed in all three."
)

# ---------------------------------------------------------------- groups
st.subheader("Group privacy")
largest = GROUP.widget()
show_chart(figure_group_privacy(epsilon, max(delta, 1e-6), largest), "groups")
st.caption(
    "A guarantee for one person stretches to k people at (kε, k·e^((k−1)ε)·δ): ε grows linearly, δ "
    "exponentially, so group privacy is only useful for pure ε. "
    + ("(δ = 10⁻⁶ is used here because the round's δ is 0.)" if delta == 0 else "")
)

# ---------------------------------------------------------------- post-processing
st.subheader("Post-processing")
show_chart(figure_post_processing(min(epsilon * 10, 3.0), 10, 11), "post")
st.caption(
    f"A noisy count at ε = {min(epsilon * 10, 3.0):.2g}, and a yes/no decision made from it (“is it at least "
    "t?”). Whatever the threshold, the decision's probabilities under the count and under its neighbour differ by "
    "at most e^ε (shaded): nothing computed from a private output, without the data, can be less private."
)

# ---------------------------------------------------------------- neighbours
st.subheader("Which datasets are neighbours?")
write_to_url(SETTINGS)
replaced = replace_one_from_add_remove(epsilon, delta)
left, right = st.columns(2)
show_guarantee(left, "Add or remove one person (the slides)", epsilon, delta)
show_guarantee(right, "Replace one person (this project)", *replaced)
st.caption(
    "The slides call datasets neighbours when one person is added or removed (‖x − x′‖₁ ≤ 1). This project "
    "replaces one person's record, which is one removal and one addition: an add/remove guarantee (ε, δ) gives "
    "the replace-one guarantee (2ε, 2e^ε·δ), group privacy for two. One more caution from the slides: "
    "“|log ratio| ≤ ε with probability ≥ 1 − δ” is enough for (ε, δ)-DP, but not the same thing."
)
