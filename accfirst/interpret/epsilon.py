"""An ex-post ε in words: the risk factor e^ε, the posterior bound it allows, δ and probabilities for display, and
typical values of runs that may fall back (docs/mathematics.md#setting-and-notation,
docs/mathematics.md#what-a-run-reports).

``e^ε`` is the privacy-risk factor: an adversary with prior probability q that a person's record is the one in
question ends with posterior at most ``q·e^ε / (1 − q + q·e^ε)``. Aggregates over trials keep fallback runs (ε = ∞)
in: medians treat ∞ as ∞.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from accfirst.errors import AccFirstError

# e^ε overflows float64 above ~709.78; beyond this we only ever print powers of ten.
_LOG10_E = 1 / math.log(10)
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _validate_prior(prior: float) -> float:
    if isinstance(prior, bool) or not isinstance(prior, (int, float, np.floating)) or not 0 < prior < 1:
        raise AccFirstError(f"prior must be a probability in (0, 1); got {prior!r}")
    return float(prior)


def _validate_epsilon(eps: ArrayLike) -> np.ndarray:
    values = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(values)) or np.any(values < 0):
        raise AccFirstError(f"epsilon must be ≥ 0 (∞ allowed); got {eps!r}")
    return values


@overload
def posterior_bound(eps: float, prior: float) -> float: ...
@overload
def posterior_bound(eps: np.ndarray, prior: float) -> np.ndarray: ...
@overload
def posterior_bound(eps: ArrayLike, prior: float) -> float | np.ndarray: ...
def posterior_bound(eps: ArrayLike, prior: float) -> float | np.ndarray:
    """The largest posterior an adversary with prior q can reach: q·e^ε/(1 − q + q·e^ε)
    (docs/mathematics.md#setting-and-notation).

    Computed as expit(ε + logit q), which never overflows: ε = ∞ (fallback) gives 1.

    Parameters
    ----------
    eps : ex-post privacy loss ε ≥ 0, a number or an array; ∞ allowed.
    prior : q ∈ (0, 1), the adversary's prior probability.
    """
    q = _validate_prior(prior)
    values = _validate_epsilon(eps)
    result = expit(values + math.log(q) - math.log1p(-q))
    return float(result) if result.ndim == 0 else result


def exp_epsilon(eps: float) -> float:
    """e^ε as a float, ∞ where it overflows (ε > ~709) or ε = ∞."""
    value = float(_validate_epsilon(eps))
    return math.exp(value) if value < 709 else math.inf


def significant(value: float, digits: int = 3) -> str:
    """``value`` rounded to ``digits`` significant digits, with thousands separators, no exponent."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    rounded = round(value, digits - 1 - magnitude)
    magnitude = math.floor(math.log10(abs(rounded)))  # 9.999 rounds up to 10.0
    decimals = max(digits - 1 - magnitude, 0)
    return f"{rounded:,.{decimals}f}"


def format_epsilon(eps: float) -> str:
    """ε for display: 3 significant digits, "∞" on fallback."""
    value = float(eps)
    if math.isinf(value):
        return "∞"
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
        return f"{value:.3g}"
    return significant(value)


def format_exp_epsilon(eps: float) -> str:
    """e^ε for display without overflow: "1,650", "3.24 × 10⁷", "10⁴³⁴²⁹⁴" (huge ε), "∞".

    3 significant digits: below 10⁶ the number is written out; above, as mantissa × 10^k
    computed from ε·log₁₀e, so any finite ε has a finite label; from 10¹⁰⁰⁰ on, the
    power of ten alone.
    """
    value = float(_validate_epsilon(eps))
    if math.isinf(value):
        return "∞"
    log10 = value * _LOG10_E
    if log10 < 6:
        return significant(math.exp(value))
    exponent = math.floor(log10)
    mantissa = 10 ** (log10 - exponent)
    if mantissa >= 9.995:  # rounding 9.996 to two decimals would print "10.00 × 10^k"
        mantissa, exponent = 1.0, exponent + 1
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    return power if exponent >= 1000 else f"{mantissa:.2f} × {power}"


def format_delta(delta: float) -> str:
    """δ for display: "0", "10⁻⁶", "1.04 × 10⁻⁶" (3 significant digits), plain from 10⁻³ up."""
    value = float(delta)
    if value == 0 or value >= 1e-3:
        return f"{value:.3g}"
    exponent = math.floor(math.log10(value))
    mantissa = float(significant(value / 10**exponent))
    if mantissa >= 10:  # 9.996 × 10⁻⁷ rounds to 10.0
        mantissa, exponent = mantissa / 10, exponent + 1
    power = "10" + str(exponent).translate(SUPERSCRIPTS)
    return power if mantissa == 1 else f"{mantissa:g} × {power}"


def guarantee_text(own_delta: float, prep_delta: float = 0.0) -> str:
    """What kind of promise an ε is, by where its δ comes from (the one source of every sentence about δ).

    "a pure ε"; "an (ε, δ) guarantee with δ = 10⁻⁶ from preparing the data"; "an (ε, δ) guarantee with δ = 10⁻⁶";
    "an (ε, δ) guarantee with δ = 2 × 10⁻⁶ (10⁻⁶ of its own, 10⁻⁶ from preparing the data)".

    Parameters
    ----------
    own_delta : the δ the method's own mechanisms add (Gaussian noise, the Gibbs posterior), 0 for pure ε.
    prep_delta : the δ of the table's private preparation, shared by every run on it
        (docs/mathematics.md#preparing-the-data-privately).
    """
    if own_delta <= 0 and prep_delta <= 0:
        return "a pure ε"
    if own_delta <= 0:
        return f"an (ε, δ) guarantee with δ = {format_delta(prep_delta)} from preparing the data"
    total = f"an (ε, δ) guarantee with δ = {format_delta(min(own_delta + prep_delta, 1.0))}"
    if prep_delta <= 0:
        return total
    return f"{total} ({format_delta(own_delta)} of its own, {format_delta(prep_delta)} from preparing the data)"


def delta_sentence(own_delta: float, prep_delta: float = 0.0) -> str:
    """One sentence on what a figure's δ means (``guarantee_text``), or ``""`` for a pure ε.

    A δ that only the preparation adds is the same for every method on the table: the methods compare as pure ε
    figures would. A δ of the method's own is a weaker kind of promise than a pure ε.
    """
    if own_delta <= 0 and prep_delta <= 0:
        return ""
    what = guarantee_text(own_delta, prep_delta)
    if own_delta <= 0:
        return (
            f"{what[:1].upper()}{what[1:]}: every method on this table shares that δ, so they compare as pure ε "
            "figures would."
        )
    return (
        f"{what[:1].upper()}{what[1:]}: the bound may fail with probability up to δ, a weaker promise than a pure ε, "
        "so compare it with the other methods with care."
    )


def own_delta(row: Mapping[str, Any]) -> float:
    """The δ a summary row's (or a run's) method added itself: its ``delta`` less its preparation's ``delta_prep``."""
    return max(float(row.get("delta", 0.0)) - float(row.get("delta_prep", 0.0)), 0.0)


def format_probability(p: float) -> str:
    """A probability as a percentage that never rounds a bound below 1 up to "100%"."""
    value = float(p)
    if value >= 1:
        return "100%"
    if value > 0.9999:
        return "> 99.99%"
    percent = 100 * value
    if percent >= 99:
        return f"{math.floor(percent * 100) / 100:.2f}%"
    if percent >= 10:
        return f"{percent:.1f}%"
    return f"{percent:.3g}%"


def format_posterior(eps: float, prior: float) -> str:
    """The docs/mathematics.md#setting-and-notation posterior bound as a percentage: "100%" only for ε = ∞
    (fallback)."""
    if math.isinf(float(eps)):
        return "100%"
    return format_probability(min(posterior_bound(eps, prior), 0.99999))


def quantile_with_inf(values: ArrayLike, q: float) -> float:
    """numpy's linear-interpolation quantile, except that ∞ counts as ∞ (docs/mathematics.md#what-a-run-reports).

    ``np.quantile`` returns NaN as soon as it interpolates next to an ∞; here the
    result is ∞ when the upper neighbour is ∞ and the interpolation weight is > 0.
    """
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    if ordered.size == 0:
        return math.nan
    position = (ordered.size - 1) * q
    low, high = math.floor(position), math.ceil(position)
    weight = position - low
    if weight == 0 or ordered[low] == ordered[high]:
        return float(ordered[low])
    if math.isinf(ordered[high]):
        return math.inf
    return float(ordered[low] + weight * (ordered[high] - ordered[low]))


def median_with_inf(values: ArrayLike) -> float:
    """The median where ∞ (fallback) counts as a value larger than every finite one
    (docs/mathematics.md#what-a-run-reports).

    Of an even count, the mean of the two middle values (∞ if either is ∞); NaN if empty.
    """
    return quantile_with_inf(values, 0.5)
