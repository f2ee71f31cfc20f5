"""Learn: the Laplace mechanism — noise that hides one person (docs/mathematics.md#teaching-mechanisms, the lecture
slides).

The screen: a count and its neighbour (one person more), both output densities and their
ratio inside the band e^(±ε); the tail bound for releasing k counts at once (the slides'
example: 10,000 counts at ε = 1 are all within 12.2 with probability 95%), with one
simulated release; and what integer noise does — rounded it is harmless for counts, cast to
an integer it breaks the bound (the bug this project's tests guard against).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from accfirst.plots.learn import figure_integer_noise, figure_neighbour_densities, figure_tail_bound
from accfirst.teaching import integer_noise_loss, laplace_variance, max_error_threshold
from ui.charts import show_chart
from ui.frame import ensure_frame
from ui.settings import Choice, FloatSlider, IntSetting, failure_setting, restore_from_url, write_to_url

SCOPE = "laplace"

EPSILON = FloatSlider(
    SCOPE,
    "eps",
    "Privacy level ε",
    1.0,
    low=0.05,
    high=5.0,
    step=0.05,
    format="%.2f",
    help="The noise scale is Δ₁/ε: smaller ε, more noise, more privacy.",
)
COUNT = IntSetting(SCOPE, "count", "The true count", 10, low=0, high=100)
COUNTS = Choice(
    SCOPE,
    "k",
    "How many counts are released together (k)",
    10_000,
    options=(1, 10, 100, 1_000, 10_000, 100_000, 1_000_000),
    widget_type="select_slider",
    labels={k: f"{k:,}" for k in (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)},
)
FAILURE = failure_setting(
    SCOPE,
    "d",
    "d",
    0.05,
    widget_type="segmented_control",
    help="The slides write “d = 95%” for the probability 1 − d of success; here d = 0.05.",
)
SEED = IntSetting(SCOPE, "seed", "Seed of the simulated release", 0, low=0, high=2**32 - 1, box=True)
SETTINGS = (EPSILON, COUNT, COUNTS, FAILURE, SEED)


ensure_frame()
st.title("The Laplace mechanism: noise that hides one person")
st.caption(
    "A count changes by at most Δ₁ = 1 when one person joins or leaves. Adding Laplace noise of scale Δ₁/ε makes "
    "every released value at most e^ε times likelier under one count than under its neighbour: ε-DP."
)
restore_from_url(SETTINGS)

# ---------------------------------------------------------------- a count and its neighbour
left, right = st.columns([2, 3])
with left:
    epsilon = EPSILON.widget()
    count = COUNT.widget()
    st.metric("Noise scale Δ₁/ε", f"{1 / epsilon:.3g}")
    st.metric("Noise variance 2(Δ₁/ε)²", f"{laplace_variance(epsilon):.3g}")
    st.metric("Largest density ratio", f"e^ε = {np.exp(epsilon):.3g}")
with right:
    show_chart(figure_neighbour_densities(count, count + 1, epsilon), "densities")
st.caption(
    "Whatever value is released, the two densities differ by a factor between e^(−ε) and e^ε (shaded): seeing "
    "the output, nobody can tell well whether the person is in the data. The bound is reached only outside "
    "the two counts, where the ratio is flat."
)

# ---------------------------------------------------------------- many counts
st.subheader("Many counts at once")
left, right = st.columns([2, 3])
with left:
    k = COUNTS.widget()
    d = FAILURE.widget()
    seed = SEED.widget()
    threshold = max_error_threshold(k, d, epsilon)
    largest = float(np.abs(np.random.default_rng(seed).laplace(0.0, 1 / epsilon, size=k)).max())
    st.metric("Every error below, with probability ≥ 1 − d", f"{threshold:.3g}", help="ln(k/d)·Δ₁/ε")
    st.metric(f"Largest error in one simulated release of {k:,} counts", f"{largest:.3g}")
with right:
    show_chart(figure_tail_bound(k, epsilon, d), "tail")
st.caption(
    "Each person affects one count, so all k counts together still cost only ε. The error bound grows with "
    "ln k, not with the population: the slides' 10,000 searches at ε = 1 stay within ln(10,000/0.05) ≈ 12.2 "
    "with probability 95% — good for the bulk, bad for outliers."
)

# ---------------------------------------------------------------- integer noise
st.subheader("What integer noise does")
write_to_url(SETTINGS)
show_chart(figure_integer_noise(count, epsilon), "integer")
rounded, truncated = integer_noise_loss(epsilon, "round"), integer_noise_loss(epsilon, "truncate")
st.caption(
    f"Rounding the noise to the nearest integer is post-processing for a count: the ratio stays e^{rounded:.3g}. "
    f"Casting it to an integer type truncates towards zero, doubles the chance of zero error, and the ratio at "
    f"the true count reaches 2e^ε = e^{truncated:.3g}. For a statistic that is not a whole number (a sum of "
    "scaled features, as in noise reduction), integer noise puts the outputs of neighbours on different "
    "lattices: one release tells them apart for sure (ε = ∞). The noise-reduction authors' published code cast "
    "its noise to integers; this project keeps float noise and tests for it."
)
