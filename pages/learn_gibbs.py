"""Learn: the Gibbs posterior — privacy without sensitivity (docs/mathematics.md#the-gibbs-posterior; Minami et al. 2016).

The screen, on the sidebar's dataset: how the inverse temperature β sets (ε, δ), in the
derived form this project uses and in the slides' form (and, for ridge, the exponential
mechanism's pure ε); samples of the posterior as β grows, on the lattice a run releases on —
exact for ridge, kept on the run's ball; for logistic by the certified sampler (exact rejection,
or the proximal sampler within a proven total-variation bound); and the accuracy-first choice
of β: for ridge 2βn·R is exactly χ²_p, so β = χ²_{p,1−γ}/(2nα) meets α with probability 1 − γ
without any private test.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from accfirst import LogisticProblem, RidgeProblem
from accfirst.erm.gibbs import (
    ILLUSTRATION_PROPOSALS,
    logistic_plan,
    posterior_draws,
    posterior_hessian,
    ridge_plan,
)
from accfirst.erm.gibbs_privacy import (
    exponential_mechanism_epsilon,
    gibbs_epsilon,
    logistic_gradient_gap,
    ridge_gradient_gap,
)
from accfirst.interpret import format_delta, format_epsilon
from accfirst.plots.learn import (
    figure_chi_square,
    figure_gibbs_epsilon,
    figure_posterior_samples,
)
from ui.cache import session_memo
from ui.charts import show_chart
from ui.dataset import require_selection
from ui.errors import call
from ui.frame import ensure_frame
from ui.settings import FloatSlider, IntSetting, delta_setting, failure_setting, restore_from_url, write_to_url
from ui.text import EVALUATION_LABEL, EVALUATION_ONLY

SCOPE = "learn_gibbs"
SAMPLES = 400
# β*/16, β*/4 and β*: the cloud tightens by a factor 2 each time.
BETA_STEPS = (1 / 16, 1 / 4, 1.0)

ALPHA = FloatSlider(
    SCOPE, "alpha", "Accuracy you need: target excess risk α", 0.05, low=0.005, high=0.5, step=0.005, format="%.3f"
)
GAMMA = failure_setting(SCOPE, "gamma", "γ", 0.1, widget_type="segmented_control")
DELTA = delta_setting(SCOPE)
SEED = IntSetting(SCOPE, "seed", "Seed", 0, low=0, high=2**32 - 1, box=True)
SETTINGS = (ALPHA, GAMMA, DELTA, SEED)


def draws(problem: RidgeProblem | LogisticProblem, beta: float, plan, seed: int):
    """Lattice draws at β with the run's plan: exact ridge draws on its ball, or certified logistic draws within its
    TV bound (this session's memo)."""
    return posterior_draws(problem, beta, SAMPLES, np.random.default_rng(seed), plan)


ensure_frame()
st.title("The Gibbs posterior: privacy without sensitivity")
st.caption(
    "Instead of adding noise, sample the model: θ with probability ∝ exp(−β·n·L(θ)). Small β gives a wide, private "
    "posterior; large β concentrates it on the best model θ*. Minami et al. show it is (ε, δ)-DP whenever the loss "
    "is Lipschitz and convex, even if it is unbounded."
)
chosen = require_selection()
restore_from_url(SETTINGS)
problem = call(chosen.problem)
ridge = isinstance(problem, RidgeProblem)

# ---------------------------------------------------------------- β and (ε, δ)
left, right = st.columns([2, 3])
with left:
    alpha = ALPHA.widget()
    gamma = GAMMA.widget()
    delta = DELTA.widget()
    seed = SEED.widget()
write_to_url(SETTINGS)
if delta == 0 and not ridge:
    st.error("The logistic Gibbs posterior has no pure-ε guarantee: choose δ > 0.")
    st.stop()
curve_delta = delta if delta > 0 else 1e-6
if ridge:
    plan = call(ridge_plan, problem, alpha, gamma, delta)
    beta, failure, radius = plan.sampler.beta, plan.failure_bound, plan.sampler.radius
    gap = ridge_gradient_gap(problem.p, radius)
else:
    plan = call(logistic_plan, problem, alpha, gamma, curve_delta)
    beta, failure, radius = plan.beta, gamma, None
    gap = logistic_gradient_gap(problem.p)
derived = gibbs_epsilon(beta, problem.n, problem.lam, gap, curve_delta)
slides = gibbs_epsilon(beta, problem.n, problem.lam, gap, curve_delta, "slides")
with left:
    st.metric("Accuracy-first β", f"{beta:.4g}")
    st.metric(
        "A run's ε" + (f" (δ = {format_delta(plan.delta)})" if plan.delta else " (pure, δ = 0)"),
        format_epsilon(plan.epsilon),
    )
    st.metric(f"ε, derived form (δ = {format_delta(curve_delta)})", format_epsilon(derived))
    st.metric(f"ε, the slides' form (δ = {format_delta(curve_delta)})", format_epsilon(slides))
    if ridge:
        st.metric(
            "ε, exponential mechanism (pure, δ = 0)",
            format_epsilon(exponential_mechanism_epsilon(beta, problem.p, radius)),
        )
with right:
    show_chart(figure_gibbs_epsilon(problem.n, problem.p, problem.lam, gap, curve_delta, beta, radius), "epsilon")
st.caption(
    f"Replacing one row moves the gradient of the posterior's energy by at most β·G, G = {gap:.4g} "
    + (f"on the ball ‖θ‖ ≤ {radius:.4g} the run keeps the posterior on " if ridge else "(the logistic loss) ")
    + "and the posterior is βnλ-strongly log-concave, so the release is as private as a Gaussian mechanism with "
    "μ = G√(β/(nλ)) (derived in this project from Gopi, Lee & Liu's theorem; see the mathematics docs). The "
    "slides' theorem, 2L√(β(1 + 2 ln(1/δ))/(nλ)) with G for 2L, is shown for comparison."
    + (
        " On the ball the squared loss is also bounded, so the same sampler is the exponential mechanism with a "
        "pure ε; a run reports the smaller of the two. A run chooses the ball's radius, among those that keep the "
        "accuracy guarantee, to make its ε least."
        if ridge
        else " A run's δ also pays (1% of it) for the sampler's total-variation bound."
    )
)

# ---------------------------------------------------------------- samples as β grows
st.subheader("Samples of the posterior as β grows")
hessian = posterior_hessian(problem)
basis = np.linalg.eigh(hessian)[1][:, :2]  # smallest curvature: the widest directions
samples = {}
with st.spinner("Sampling the posterior…"):
    for share in BETA_STEPS:
        scaled_beta = beta * share
        result = session_memo(
            "gibbs_draws",
            (*chosen.problem_key, scaled_beta, alpha, gamma, curve_delta, seed),
            lambda scaled_beta=scaled_beta: call(draws, problem, scaled_beta, plan, seed),
            max_entries=24,
        )
        label = f"β = {scaled_beta:.3g}" + (" (accuracy-first)" if share == 1 else f" (β*/{round(1 / share)})")
        if len(result) < SAMPLES:
            label += f": {len(result)} of {SAMPLES} in the ball"
        samples[label] = result
show_chart(figure_posterior_samples(samples, problem.theta_star, basis), "samples")
if ridge:
    st.caption(
        "Ridge: exp(−βnL) is the Gaussian N(θ*, (βnH)⁻¹), sampled exactly; the privacy proof needs θ on a ball, so "
        "draws outside it are rejected (at most a public number of them), and each draw is rounded to a fine "
        f"lattice, as a run releases it ({EVALUATION_LABEL}). At a small β the ball holds little of the posterior: "
        f"this illustration draws at most {ILLUSTRATION_PROPOSALS:,} proposals per β, and the legend says when fewer "
        f"than {SAMPLES} of them fell in the ball."
    )
else:
    st.caption(
        "Logistic: the regularisation makes the posterior strongly log-concave, so a Gaussian as wide as λ alone "
        "allows lies above it everywhere (after scaling): proposals from it, kept with the right probability, are "
        "exact draws. Where too few would be kept (many features, small λ), the proximal sampler runs instead, for "
        "as many steps as a theorem needs to bring it within total variation γ_TV of the posterior. A sampler "
        "within γ_TV is (ε, δ_G + (e^ε + 1)γ_TV)-DP; a run spends 1% of its δ on γ_TV, so the δ it shows is the "
        f"whole δ. Each draw is rounded to a fine lattice, as a run releases it ({EVALUATION_LABEL})."
    )

# ---------------------------------------------------------------- accuracy first
st.subheader("The accuracy-first choice of β")
final = samples[label]
risks = problem.excess_risk(final)
scaled = 2 * beta * problem.n * np.asarray(risks)
cutoff = 2 * beta * problem.n * alpha
left, right = st.columns([2, 3])
with left:
    st.metric("Samples with excess risk ≤ α", f"{np.mean(np.asarray(risks) <= alpha):.0%}", help=EVALUATION_ONLY)
    st.metric("Guaranteed at least", f"{1 - failure:.0%}" if ridge else f"≈ {1 - gamma:.0%} (approximate)")
with right:
    show_chart(figure_chi_square(scaled, problem.p, cutoff), "chi_square")
if ridge:
    st.caption(
        "β = χ²_(p,1−γ)/(2nα) makes P(R > α) = γ exactly. Keeping θ on the ball cannot be checked without the data, "
        "so β is raised just enough that a bound which reads only n, p, λ and the radius still gives γ [derived]. No test "
        "and no search: this is why the Gibbs posterior competes with noise reduction for ridge (compare them in the "
        "Explorer, where its δ is always shown)."
    )
else:
    st.caption(
        "Logistic: the same β from the Laplace approximation N(θ*, (βnH*)⁻¹): the accuracy is approximate, not "
        "guaranteed, and the histogram shows how close χ²_p is here."
    )
