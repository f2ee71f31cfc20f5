"""Learn: the Gibbs posterior — privacy without sensitivity (docs/mathematics.md#the-gibbs-posterior; Minami et al. 2016).

The screen, on the sidebar's dataset: how the inverse temperature β sets (ε, δ), in the
derived form this project uses and in the slides' form (and, for ridge, the exponential
mechanism's pure ε); samples of the posterior as β grows — exact for ridge, truncated to the
ball C with its acceptance rate; for logistic by the certified sampler (exact rejection, or the
proximal sampler within a proven total-variation bound) with its acceptance rate; and the
accuracy-first choice of β: for ridge 2βn·R is exactly χ²_p, so β = χ²_{p,1−γ}/(2nα) meets α
with probability 1 − γ without any private test.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from accfirst import LogisticProblem, RidgeProblem
from accfirst.erm.gibbs import (
    chi_square_beta,
    exponential_mechanism_epsilon,
    gibbs_epsilon,
    gibbs_lipschitz,
    logistic_guarantee,
    posterior_hessian,
    ridge_beta,
    sample_logistic_gibbs,
    sample_ridge_gibbs,
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


def draws(problem: RidgeProblem | LogisticProblem, beta: float, delta: float, seed: int):
    """Exact ridge draws on C, or certified logistic draws within a run's TV bound at δ (this session's memo)."""
    rng = np.random.default_rng(seed)
    if isinstance(problem, RidgeProblem):
        return sample_ridge_gibbs(problem, beta, SAMPLES, rng)
    return sample_logistic_gibbs(problem, beta, SAMPLES, rng, logistic_guarantee(problem, beta, delta)[1])


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
lipschitz = gibbs_lipschitz(problem)
if ridge:
    beta, failure = call(ridge_beta, problem, alpha, gamma)
else:
    beta, failure = call(chi_square_beta, problem.n, problem.p, alpha, gamma), gamma
curve_delta = delta if delta > 0 else 1e-6
if ridge:
    derived = gibbs_epsilon(beta, problem.n, problem.lam, lipschitz, curve_delta)
else:  # a logistic run's ε: its δ also pays for the sampler's total-variation bound
    derived = call(logistic_guarantee, problem, beta, curve_delta)[0]
slides = gibbs_epsilon(beta, problem.n, problem.lam, lipschitz, curve_delta, "slides")
with left:
    st.metric("Accuracy-first β", f"{beta:.4g}")
    st.metric(f"ε, derived form (δ = {format_delta(curve_delta)})", format_epsilon(derived))
    st.metric(f"ε, the slides' form (δ = {format_delta(curve_delta)})", format_epsilon(slides))
    if ridge:
        st.metric(
            "ε, exponential mechanism (pure, δ = 0)",
            format_epsilon(exponential_mechanism_epsilon(beta, problem.norm_bound)),
        )
with right:
    show_chart(
        figure_gibbs_epsilon(
            problem.n, problem.lam, lipschitz, curve_delta, beta, problem.norm_bound if ridge else None
        ),
        "epsilon",
    )
st.caption(
    f"Each row's loss is L-Lipschitz with L = {lipschitz:.3g} "
    + ("(r + 1 on the ball C = {‖θ‖ ≤ r}) " if ridge else "(the logistic loss) ")
    + "and the posterior is βnλ-strongly log-concave. Derived form (derived in this project, see the mathematics docs): ρ = 2βL²/(nλ), "
    "ε = ρ + 2√(ρ ln(1/δ)), valid for every ε. The slides' theorem gives 2L√(β(1 + 2 ln(1/δ))/(nλ)): about the "
    "same below ε ≈ 1; beyond, only the derived form is proved here, so the product uses it."
    + (
        " For ridge on C the loss is also bounded, so the same sampler is the exponential mechanism with pure "
        "ε = β(r + 1)²; a run reports the smaller of the two."
        if ridge
        else ""
    )
)

# ---------------------------------------------------------------- samples as β grows
st.subheader("Samples of the posterior as β grows")
hessian = posterior_hessian(problem)
basis = np.linalg.eigh(hessian)[1][:, :2]  # smallest curvature: the widest directions
samples, notes = {}, []
with st.spinner("Sampling the posterior…"):
    for share in BETA_STEPS:
        scaled_beta = beta * share
        result = session_memo(
            "gibbs_draws",
            (*chosen.problem_key, scaled_beta, curve_delta, seed),
            lambda scaled_beta=scaled_beta: call(draws, problem, scaled_beta, curve_delta, seed),
            max_entries=24,
        )
        label = f"β = {scaled_beta:.3g}" + (" (accuracy-first)" if share == 1 else f" (β*/{round(1 / share)})")
        samples[label] = result.thetas
        if ridge:
            notes.append(f"{label}: {result.acceptance_rate:.1%} of the Gaussian draws fell in C")
        else:
            path = "exact rejection" if result.steps == 1 else f"{result.steps} proximal steps"
            notes.append(f"{label}: {path}, {result.acceptance_rate:.0%} of the proposals accepted")
show_chart(figure_posterior_samples(samples, problem.theta_star, basis), "samples")
if ridge:
    st.caption(
        "Ridge: exp(−βnL) is the Gaussian N(θ*, (βnH)⁻¹), sampled exactly; the privacy proof needs θ in the ball C, "
        f"so draws outside are rejected. Acceptance rates ({EVALUATION_LABEL}): " + "; ".join(notes) + "."
    )
else:
    st.caption(
        "Logistic: the regularisation makes the posterior strongly log-concave, so a Gaussian as wide as λ alone "
        "allows lies above it everywhere (after scaling): proposals from it, kept with the right probability, are "
        "exact draws. Where too few would be kept (many features, small λ), the proximal sampler runs instead, for "
        "as many steps as a theorem needs to bring it within total variation γ_TV of the posterior. A sampler "
        "within γ_TV is (ε, δ_G + (e^ε + 1)γ_TV)-DP; a run spends 1% of its δ on γ_TV, so the δ it shows is the "
        f"whole δ. How the draws were made ({EVALUATION_LABEL}): " + "; ".join(notes) + "."
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
    if not ridge:
        guaranteed = f"≈ {1 - gamma:.0%} (approximate)"
    else:
        guaranteed = f"{1 - failure:.0%}" if failure < 1 else "1 − γ/P(C)"
    st.metric("Guaranteed at least", guaranteed)
with right:
    show_chart(figure_chi_square(scaled, problem.p, cutoff), "chi_square")
if ridge:
    st.caption(
        "β = χ²_(p,1−γ)/(2nα) makes P(R > α) = γ exactly. Keeping θ in C cannot be checked without the data, so β is "
        "raised just enough that a bound which reads only n, p, λ and the radius still gives γ [derived]. No test "
        "and no search: this is why the Gibbs posterior competes with noise reduction for ridge (compare them in the "
        "Explorer, where its δ is always shown)."
    )
else:
    st.caption(
        "Logistic: the same β from the Laplace approximation N(θ*, (βnH*)⁻¹): the accuracy is approximate, not "
        "guaranteed, and the histogram shows how close χ²_p is here."
    )
if failure >= 1:
    st.warning(
        "The stated radius is too small for a data-independent guarantee: the accuracy holds with probability "
        "1 − γ/P(C), where P(C) is only known from the acceptance rate."
    )
