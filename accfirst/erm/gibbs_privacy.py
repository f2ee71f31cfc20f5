"""The privacy of the Gibbs posterior exp(−β·n·L(θ)): its Gaussian privacy profile and the constants it rests on.

docs/mathematics.md#the-gibbs-posteriors-privacy [derived from Gopi, Lee & Liu 2022]. Replacing one row z by z′ changes
the energy βnL by β(ℓ(θ; z′) − ℓ(θ; z)), whose gradient is at most β·G in norm on the set the posterior lives on; the
energy is βnλ-strongly convex there whatever the data. Gopi, Lee & Liu (2022) show that two such Gibbs measures are
then as distinguishable as N(0, 1) and N(μ, 1) at most, μ = βG/√(βnλ) = G√(β/(nλ)): the release is μ-GDP, and at any
δ its ε is the Gaussian mechanism's (``gaussian_dp_epsilon``), with no slack from a concentration inequality.

G, the largest gradient of ℓ(θ; z) − ℓ(θ; z′) over pairs of rows (‖x‖₁ ≤ 1) [derived]:

- ridge on the ball ‖θ‖ ≤ r: the gradient is (xxᵀ − x′x′ᵀ)θ − yx + y′x′, at most r + 2 (the matrix lies
  between −I and I); with one feature it is at most r·|x² − x′²| + |x| + |x′|, whose maximum is
  r + 1 + 1/(4r) (x = 1, x′ = 1/(2r)) for r ≥ ½ and 2 below;
- logistic on all of R^p: the gradient is σ(u′ᵀθ)u′ − σ(uᵀθ)u for u = −yx, at most 2 in norm (approached by two
  rows at nearly opposite angles); with one feature it is at most max_θ σ(θ) + W(1/e)/θ = 1.0516… (the largest
  t/(1 + eᵗ) is W(1/e), at t = 1 + W(1/e)).

Ridge on the ball is also the exponential mechanism: the log-density ratio of neighbours is at most β times the range
of ℓ(θ; z) − ℓ(θ; z′) over the ball (``loss_range``), a pure ε. The slides' form 2L√(β(1 + 2 ln(1/δ))/(nλ)) is kept
for comparison, with G in place of 2L (its proof uses only the gradient of the difference).
"""

from __future__ import annotations

import functools
import math

from scipy import optimize
from scipy.special import log_ndtr

from accfirst.errors import AccFirstError
from accfirst.validation import validate_count, validate_positive, validate_probability

FORMS = ("derived", "slides")
# max_θ σ(θ) + W(1/e)/θ (at θ = 4.03162…, where σ(θ)σ(−θ) = W(1/e)/θ²), rounded up in its last digit.
LOGISTIC_LINE_GAP = 1.0516339915453224
# A released ε is the Gaussian profile's root moved up by this relative amount and checked: on the safe side.
ROOT_MARGIN = 1e-12


def gaussian_dp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2): the privacy profile of N(0, 1) against N(μ, 1).

    Both terms from ``log_ndtr``, so a large ε neither overflows e^ε nor loses the small difference.
    """
    first = log_ndtr(-epsilon / mu + mu / 2)
    second = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    return float(math.exp(first) * -math.expm1(second - first)) if second < first else 0.0


@functools.lru_cache(maxsize=4096)
def gaussian_dp_epsilon(mu: float, delta: float) -> float:
    """The least ε with ``gaussian_dp_delta(mu, ε)`` ≤ δ: a μ-GDP mechanism is (ε, δ)-DP (Dong, Roth & Su 2022).

    The profile falls with ε; its root lies below the zCDP conversion μ²/2 + μ√(2 ln(1/δ)) (μ-GDP is μ²/2-zCDP).
    The root is moved up by ``ROOT_MARGIN`` until the profile at it is at most δ.
    """
    mu, delta = validate_positive("mu", mu), validate_probability("delta", delta)
    if gaussian_dp_delta(mu, 0.0) <= delta:
        return 0.0
    high = mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta)) + 1.0
    root = float(optimize.brentq(lambda e: gaussian_dp_delta(mu, e) - delta, 0.0, high, xtol=1e-14, rtol=1e-13))
    epsilon = root * (1 + ROOT_MARGIN) + ROOT_MARGIN
    while gaussian_dp_delta(mu, epsilon) > delta:
        epsilon = epsilon * (1 + ROOT_MARGIN) + ROOT_MARGIN
    return epsilon


def ridge_gradient_gap(p: int, radius: float) -> float:
    """G for ridge on ‖θ‖ ≤ r: r + 1 + 1/(4r) (r ≥ ½) or 2 with one feature, r + 2 with more (module docstring)."""
    p, radius = validate_count("p", p, 1), validate_positive("radius", radius)
    if p > 1:
        return radius + 2.0
    return radius + 1.0 + 1.0 / (4.0 * radius) if radius >= 0.5 else 2.0


def logistic_gradient_gap(p: int) -> float:
    """G for logistic regression on R^p: 1.0516… with one feature, 2 with more (module docstring)."""
    return LOGISTIC_LINE_GAP if validate_count("p", p, 1) == 1 else 2.0


def loss_range(p: int, radius: float) -> float:
    """The largest range over ‖θ‖ ≤ r of ℓ(θ; z) − ℓ(θ; z′) for ridge rows (‖x‖₁ ≤ 1, |y| ≤ 1) [derived].

    Each ℓ lies in [0, ½(r + 1)²] on the ball, so the range is at most (r + 1)², the bound used with
    several features. With one feature the difference is aθ² − bθ + c with a = ½(x² − x′²), |b| ≤ |x| + |x′|;
    its range on [−r, r] is 2|b|r when the vertex lies outside, else (r√a + |b|/(2√a))². The largest b for a
    given a ≥ 0 is 1 + t with x = 1, x′ = t = √(1 − 2a), and the range then peaks at t = 1 (4r) or where
    rt(1 − t) = 1, t = (1 − √(1 − 4/r))/2 (r ≥ 4): docs/mathematics.md#the-gibbs-posteriors-privacy.
    """
    p, radius = validate_count("p", p, 1), validate_positive("radius", radius)
    if p > 1:
        return (radius + 1.0) ** 2
    widest = 4.0 * radius
    if radius >= 4.0:
        t = (1.0 - math.sqrt(1.0 - 4.0 / radius)) / 2.0
        half = (1.0 - t * t) / 2.0
        widest = max(widest, (radius * math.sqrt(half) + (1.0 + t) / (2.0 * math.sqrt(half))) ** 2)
    return widest * (1 + ROOT_MARGIN)


def gdp_mu(beta: float, n: int, lam: float, gap: float) -> float:
    """μ = G√(β/(nλ)): the posterior is βnλ-strongly log-concave and a row moves its energy's gradient by ≤ βG."""
    return gap * math.sqrt(beta / (n * lam))


def gibbs_epsilon(beta: float, n: int, lam: float, gap: float, delta: float, form: str = "derived") -> float:
    """ε of the Gibbs posterior exp(−βnL) at δ (docs/mathematics.md#the-gibbs-posteriors-privacy).

    ``form="derived"``: the Gaussian profile at μ = G√(β/(nλ)) (``gaussian_dp_epsilon``; valid for every ε).
    ``form="slides"``: the slides' theorem with 2L replaced by G, ε = G√(β(1 + 2 ln(1/δ))/(nλ)).

    Parameters
    ----------
    beta : inverse temperature β > 0.
    n, lam : rows and the ridge/logistic λ (the posterior is βnλ-strongly log-concave).
    gap : G, the largest gradient of the difference of two rows' losses (``ridge_gradient_gap``,
        ``logistic_gradient_gap``).
    delta : δ in (0, 1).
    """
    beta, gap = validate_positive("beta", beta), validate_positive("gap (G)", gap)
    n, lam = validate_count("n", n, 1), validate_positive("lam", lam)
    delta = validate_probability("delta", delta)
    if form == "derived":
        return gaussian_dp_epsilon(gdp_mu(beta, n, lam, gap), delta)
    if form == "slides":
        return gap * math.sqrt(beta * (1 + 2 * math.log(1 / delta)) / (n * lam))
    raise AccFirstError(f"form must be one of {FORMS}; got {form!r}")


def exponential_mechanism_epsilon(beta: float, p: int, radius: float) -> float:
    """Pure ε = β·``loss_range``(p, r) of ridge's Gibbs posterior on ‖θ‖ ≤ r (δ = 0).

    The log-density ratio of neighbours is −β·d(θ) − log E′[e^{−β·d}] for d = ℓ(·; z) − ℓ(·; z′), at most β times
    the range of d over the ball.
    """
    return validate_positive("beta", beta) * loss_range(p, radius)
