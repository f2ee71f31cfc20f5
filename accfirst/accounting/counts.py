"""Releasing counts to a target relative error under one budget (docs/mathematics.md#counts-to-a-relative-error).

[derived reconstruction of Rogers et al. 2023, section 7; consistent with Rogers et al. 2023]

Counts q ≥ 0 (ℓ2-sensitivity 1 each) are asked in a fixed order with no number fixed in
advance; each gets noisier-to-sharper Gaussian releases until one is *certified*: at a level
with noise sd σ and noisy value y, stop and release iff y ≥ c·σ·(1 + 1/α). The constant c is
calibrated exactly [derived, docs/mathematics.md#counts-to-a-relative-error]: the least c with

    sup_q Σ_k P(y_k ≥ c·σ_k(1 + 1/α) and |y_k − q| > αq) ≤ β

over the count's K levels, so a certified count is within relative error α with probability
≥ 1 − β, whatever q is. The stop reads only the released values, which are lattice points: the
ideal noisy counts rounded exactly (docs/mathematics.md, "Noise that float64 cannot betray"),
which the bound allows for.

Two arms share the stop rule, the per-count cap ρ̄ = min(κ·ρ_B, remaining) on the noise
level, and the lowest level ρ̄·2^{−19}:

- ``"nr"``: one Brownian noise reduction per count on a geometric grid up to ρ̄ (ratio √2,
  so every doubling level is also a level), a unified-filter round charged only the level
  where it stopped (docs/mathematics.md#the-zcdp-filter); a count that never certifies is charged ρ̄.
- ``"doubling"``: independent Gaussian releases at ρ_1, 2ρ_1, 4ρ_1, …, ρ̄, each a zCDP round
  charged in full.

Both run in a ``ZCDPFilter`` and stop at its first refusal.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq, minimize_scalar
from scipy.special import ndtr, ndtri

from accfirst.accounting.filters import ZCDPFilter
from accfirst.errors import AccFirstError, DataError
from accfirst.mechanisms.brownian import GAUSSIAN, brownian_noise_reduction
from accfirst.validation import as_generator, release_seed, validate_count, validate_positive

COUNT_METHODS = ("nr", "doubling")
FloatOrArray = TypeVar("FloatOrArray", float, NDArray[np.float64])
# Doubling levels ρ̄·2^{−19} … ρ̄: a 724-fold range of noise sd per count. Counts too large
# for the lowest level pay at most ρ̄·2^{−19}.
DOUBLING_LEVELS = 20
NR_LEVELS = 2 * DOUBLING_LEVELS - 1
COUNT_COLUMNS = (
    "method",
    "index",
    "count",
    "status",
    "certified",
    "released",
    "level",
    "levels",
    "sigma",
    "error_bound",
    "rho",
    "cap",
    "spent",
    "remaining",
    "rel_error",
    "within",
)


# A released value is the ideal noisy count rounded to a lattice no coarser than 2⁻¹⁶σ: at most 2⁻¹⁷σ away.
ROUNDING = 2.0**-17
# Counts at which the worst failure probability is sought: this many per level on a logarithmic scale, from 10⁻²
# of the sharpest level's sd to 10× the dullest level's threshold, then refined around the worst of them.
POINTS_PER_LEVEL = 64
SEARCH_TOLERANCE = 1e-10


def failure_bound(
    c: float, rel_error: float, sigmas: NDArray[np.float64], q: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Σ_k P(y_k ≥ c·σ_k(1 + 1/α) and |y_k − q| > αq) for each count q: the union over levels of certifying a value
    outside α (docs/mathematics.md#counts-to-a-relative-error). [derived]

    y_k = q + z_k + r_k with z_k ∼ N(0, σ_k²) (noise reduction's levels are correlated; the union bound does not mind)
    and |r_k| ≤ ``ROUNDING``·σ_k. Above: z ≥ max(a − q, αq) − r; below: a − q − r ≤ z < −αq − r.
    """
    sigma = sigmas[None, :]
    counts = np.asarray(q, dtype=np.float64)[:, None]
    threshold = c * sigma * (1.0 + 1.0 / rel_error)
    above = ndtr(ROUNDING - np.maximum(threshold - counts, rel_error * counts) / sigma)
    below = np.maximum(0.0, ndtr(ROUNDING - rel_error * counts / sigma) - ndtr((threshold - counts) / sigma - ROUNDING))
    bound: NDArray[np.float64] = (above + below).sum(axis=1)
    return bound


def worst_failure(c: float, rel_error: float, sigmas: NDArray[np.float64]) -> tuple[float, float]:
    """(sup_q ``failure_bound``, the count where it is reached), for levels with noise sd ``sigmas``.

    The bound vanishes for counts far below the sharpest level's sd (nothing certifies but by chance, and that chance
    is counted at q → 0 by the grid's first point) and far above the dullest threshold (certified at once, within α).
    """
    low = math.log(1e-2 * float(sigmas.min()))
    high = math.log(10.0 * c * float(sigmas.max()) * (1.0 + 1.0 / rel_error))
    grid = np.exp(np.linspace(low, high, POINTS_PER_LEVEL * (sigmas.size + 8)))
    values = failure_bound(c, rel_error, sigmas, np.concatenate([[0.0], grid]))
    best = int(np.argmax(values))
    if best == 0:
        return float(values[0]), 0.0
    step = (high - low) / (grid.size - 1)
    centre = math.log(grid[best - 1])
    refined = minimize_scalar(
        lambda t: -float(failure_bound(c, rel_error, sigmas, np.array([math.exp(t)]))[0]),
        bounds=(centre - step, centre + step),
        method="bounded",
        options={"xatol": 1e-9},
    )
    if -refined.fun > values[best]:
        return float(-refined.fun), math.exp(float(refined.x))
    return float(values[best]), float(grid[best - 1])


@functools.lru_cache(maxsize=256)
def certification_constant(beta: float, rel_error: float, method: str) -> float:
    """The least c with sup_q ``failure_bound`` ≤ β on ``method``'s levels (docs/mathematics.md#counts-to-a-relative-error).
    [derived]

    Certifying at level k needs y_k ≥ c·σ_k(1 + 1/α), so a certified count outside α is one of the K events the bound
    adds up, whichever level stopped. The bound falls as c grows; c is its root at β, found by bracketing. The
    levels' sds are relative to the cap's (the certificate does not depend on the cap's size: every threshold and
    every error scales with σ).
    """
    value = validate_positive("beta", beta)
    if value >= 1:
        raise AccFirstError(f"beta (the per-count failure probability) must be in (0, 1); got {value}")
    alpha = validate_positive("rel_error", rel_error)
    sigmas = 1.0 / np.sqrt(2.0 * count_levels(method, 1.0))
    # Each level's event needs |z_k| > c·σ_k − r_k: at the union bound's c (plus the rounding), the sum is below β.
    union = float(-ndtri(value / (2 * sigmas.size))) + 2 * ROUNDING
    root = float(brentq(lambda c: worst_failure(c, alpha, sigmas)[0] - value, 1e-3, union, xtol=SEARCH_TOLERANCE))
    # The root lies within the tolerance of the returned point: one more step keeps the bound at or below β.
    return root + 2 * SEARCH_TOLERANCE


def count_levels(method: str, cap: float) -> NDArray[np.float64]:
    """The ρ-levels of one count under cap ρ̄: geometric at ratio √2 (``"nr"``) or 2 (``"doubling"``) up to ρ̄."""
    if method not in COUNT_METHODS:
        raise AccFirstError(f"method must be one of {COUNT_METHODS}; got {method!r}")
    levels = NR_LEVELS if method == "nr" else DOUBLING_LEVELS
    return cap * np.geomspace(2.0 ** (1 - DOUBLING_LEVELS), 1.0, levels)


def _validate_counts(counts: ArrayLike) -> NDArray[np.float64]:
    try:
        values = np.asarray(counts, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("counts must be numbers") from None
    if values.ndim != 1 or values.size == 0:
        raise DataError(f"counts must be a non-empty list of numbers; got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise DataError("counts must be finite numbers ≥ 0")
    return values


def filtered_counts(
    budget: ZCDPFilter,
    counts: ArrayLike,
    rel_error: float,
    method: str = "nr",
    beta: float = 0.05,
    cap: float = 0.05,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Release ``counts`` in order, each to relative error α, inside ``budget`` until it refuses
    (docs/mathematics.md#counts-to-a-relative-error).

    Returns one row per count attempted (``COUNT_COLUMNS``): its status ("certified",
    "not certified" — charged its cap, or "refused" — the filter's first refusal, last row),
    the released noisy value (at the stop, or at the top level if not certified), its level
    of K, noise sd, the largest error |ŷ − q| the certificate allows (αŷ/(1 − α); ∞ for α ≥ 1), the ρ it was charged, its cap, the filter's
    spent and remaining ρ after it; ``count``, ``rel_error`` and ``within`` (|ŷ − q| ≤ αq)
    read the true counts: evaluation only, not private.

    Parameters
    ----------
    budget : the unified ρ-filter the counts spend (``SplitBudget.zcdp`` to share a budget).
    counts : true counts q ≥ 0 (ℓ2-sensitivity 1 each), in the order they are asked.
    rel_error : target relative error α > 0.
    method : "nr" (Brownian noise reduction) or "doubling".
    beta : per-count failure probability β in (0, 1).
    cap : κ in (0, 1]: the per-count cap is κ·ρ_B (less if less remains).
    rng : a Generator or seed.
    """
    if not isinstance(budget, ZCDPFilter):
        raise AccFirstError("counts spend a ZCDPFilter (the unified ρ-filter); got " + type(budget).__name__)
    values = _validate_counts(counts)
    alpha = validate_positive("rel_error", rel_error)
    kappa = validate_positive("cap", cap)
    if kappa > 1:
        raise AccFirstError(f"cap (κ, the share of the budget one count may use) must be in (0, 1]; got {kappa}")
    counter = _Counter(budget, certification_constant(beta, alpha, method), alpha, as_generator(rng))
    run = counter.nr if method == "nr" else counter.doubling
    rows = []
    for index, q in enumerate(values):
        full = kappa * budget.budget
        request = min(full, budget.remaining) if budget.remaining > 0 else full
        rhos = count_levels(method, request)
        row = run(float(q), rhos, index)
        rows.append(
            {
                "method": method,
                "index": index,
                "count": float(q),
                "levels": rhos.size,
                "cap": request,
                "spent": budget.spent,
                "remaining": budget.remaining,
                **row,
            }
        )
        if row["status"] == "refused":
            break
    frame = pd.DataFrame(rows, columns=list(COUNT_COLUMNS))
    frame["level"] = frame["level"].astype("Int64")  # missing for a refused count
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.abs(frame["released"] - frame["count"]) / frame["count"]
    frame["rel_error"] = error.where(frame["count"] > 0, np.where(frame["released"] == 0, 0.0, math.inf))
    frame["within"] = frame["rel_error"] <= alpha
    return frame


@dataclass(frozen=True)
class _Counter:
    """The two arms of ``filtered_counts`` on one budget, stop rule and randomness
    (docs/mathematics.md#counts-to-a-relative-error).

    A level with noise sd σ and released value y certifies iff y ≥ c·σ·(1 + 1/α).
    """

    budget: ZCDPFilter
    c: float
    alpha: float
    rng: np.random.Generator

    def nr(self, q: float, rhos: NDArray[np.float64], index: int) -> dict[str, object]:
        """One Brownian noise reduction, declared at its top level, charged where it stopped
        (docs/mathematics.md#the-zcdp-filter)."""
        if not self.budget.admit(float(rhos[-1]), kind="Brownian NR", label=f"count {index}"):
            return self._refused(0.0)
        releases = brownian_noise_reduction(np.array([q]), 1.0, rhos, self.rng)[:, 0]
        sigmas = 1.0 / np.sqrt(2.0 * rhos)
        passed = np.flatnonzero(releases >= self._threshold(sigmas))
        k = int(passed[0]) if passed.size else rhos.size - 1
        self.budget.charge(float(rhos[k]))
        status = "certified" if passed.size else "not certified"
        return self._outcome(status, float(releases[k]), k + 1, float(sigmas[k]), float(rhos[k]))

    def doubling(self, q: float, rhos: NDArray[np.float64], index: int) -> dict[str, object]:
        """Independent Gaussian releases at doubling ρ, each a zCDP round charged in full
        (docs/mathematics.md#counts-to-a-relative-error)."""
        spent = 0.0
        for k, rho in enumerate(rhos):
            if not self.budget.admit(float(rho), kind="Gaussian", label=f"count {index}, level {k + 1}"):
                return self._refused(spent)
            self.budget.charge(float(rho))
            spent += float(rho)
            sigma = 1.0 / math.sqrt(2.0 * rho)
            released = float(GAUSSIAN.perturb(np.array([q]), 1.0, float(rho), self.rng)[0])
            if released >= self._threshold(sigma):
                return self._outcome("certified", released, k + 1, sigma, spent)
        return self._outcome("not certified", released, rhos.size, sigma, spent)

    def _error_bound(self, released: float) -> float:
        """The largest |ŷ − q| among the counts q with |ŷ − q| ≤ αq, which a certified ŷ is within w.p. ≥ 1 − β."""
        return self.alpha * released / (1.0 - self.alpha) if self.alpha < 1 else math.inf

    def _threshold(self, sigma: FloatOrArray) -> FloatOrArray:
        return self.c * sigma * (1.0 + 1.0 / self.alpha)

    def _outcome(self, status: str, released: float, level: int | None, sigma: float, rho: float) -> dict[str, object]:
        return {
            "status": status,
            "certified": status == "certified",
            "released": released,
            "level": level,
            "sigma": sigma,
            "error_bound": self._error_bound(released) if status == "certified" else math.nan,
            "rho": rho,
        }

    def _refused(self, rho: float) -> dict[str, object]:
        return self._outcome("refused", math.nan, None, math.nan, rho)


def release_counts(
    counts: ArrayLike,
    rel_error: float,
    epsilon: float,
    delta: float,
    method: str = "nr",
    beta: float = 0.05,
    cap: float = 0.05,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """``filtered_counts`` in a fresh ``ZCDPFilter(epsilon, delta)``: the whole release is (ε, δ)-DP
    (docs/mathematics.md#counts-to-a-relative-error)."""
    return filtered_counts(ZCDPFilter(epsilon, delta), counts, rel_error, method, beta, cap, rng)


def compare_counts(
    counts: ArrayLike | pd.Series,
    rel_error: float,
    epsilon: float,
    delta: float,
    methods: Sequence[str] = COUNT_METHODS,
    beta: float = 0.05,
    cap: float = 0.05,
    seed: int | None = None,
) -> pd.DataFrame:
    """``release_counts`` of each method on the same counts, each in its own (ε, δ) budget, one frame.

    Each method's randomness comes from (``seed``, method), so an arm's rows do not depend on
    which other arms run. ``None`` (the default) draws the seed from the operating system: a
    release. A seed makes a repeatable run, which is not a private release (anyone with the seed
    can replay the noise). A ``label`` column names each count (the index of a Series, else its
    position).
    """
    seed = release_seed(seed)
    chosen = list(methods)
    unknown = [m for m in chosen if m not in COUNT_METHODS]
    if unknown or not chosen:
        raise AccFirstError(f"methods must be a non-empty subset of {list(COUNT_METHODS)}; got {chosen}")
    labels = list(counts.index) if isinstance(counts, pd.Series) else list(range(len(np.asarray(counts))))
    frames = []
    for method in chosen:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(COUNT_METHODS.index(method),)))
        frame = release_counts(counts, rel_error, epsilon, delta, method, beta, cap, rng)
        frame.insert(2, "label", [str(labels[i]) for i in frame["index"]])
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


SUMMARY_COLUMNS = ("method", "attempted", "certified", "not_certified", "refused", "share_within", "rho_spent")


def summarise_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: counts attempted, certified, not certified, whether the filter refused, the
    share of certified counts within α (evaluation only; docs/mathematics.md#counts-to-a-relative-error promises ≥ 1 −
    β) and ρ spent."""
    rows = []
    for method, group in frame.groupby("method", sort=False):
        certified = group[group["certified"]]
        rows.append(
            {
                "method": method,
                "attempted": int((group["status"] != "refused").sum()),
                "certified": len(certified),
                "not_certified": int((group["status"] == "not certified").sum()),
                "refused": bool((group["status"] == "refused").any()),
                "share_within": float(certified["within"].mean()) if len(certified) else math.nan,
                "rho_spent": float(group["spent"].iloc[-1]),
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def log_uniform_counts(
    size: int, low: float = 1e2, high: float = 1e5, rng: np.random.Generator | int | None = None
) -> NDArray[np.float64]:
    """``size`` whole counts, log-uniform on [low, high] (the reference set of
    docs/mathematics.md#counts-to-a-relative-error)."""
    size = validate_count("size", size, 1)
    low, high = validate_positive("low", low), validate_positive("high", high)
    if not low < high:
        raise AccFirstError(f"low must be smaller than high; got low={low:g}, high={high:g}")
    return np.exp(as_generator(rng).uniform(math.log(low), math.log(high), size)).round()


def category_counts(values: pd.Series, categories: Sequence[object] | None = None) -> pd.Series:
    """How many rows hold each category, in the order of ``categories``.

    Without ``categories`` they are the column's distinct values, sorted: that list reads
    the data and is not private (a rare category names a person); pass a public list.
    """
    column = pd.Series(values)
    if categories is None:
        categories = sorted(column.dropna().unique(), key=str)
    counted = column.value_counts(dropna=True)
    return pd.Series([int(counted.get(c, 0)) for c in categories], index=pd.Index(list(categories), name=column.name))


def histogram_counts(values: pd.Series, bins: int, value_range: tuple[float, float] | None = None) -> pd.Series:
    """Rows per bin of ``bins`` equal bins over ``value_range``, indexed by bin label.

    Without ``value_range`` the range is the column's min and max: that reads the data and
    is not private; pass public bounds. Values outside the range are not counted.
    """
    bins = validate_count("bins", bins, 1)
    numbers = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy(dtype=np.float64)
    if value_range is None:
        if numbers.size == 0:
            raise DataError("the column has no numbers to bin")
        value_range = (float(numbers.min()), float(numbers.max()))
    low, high = value_range
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise AccFirstError(f"the histogram range must be finite with low < high; got {value_range}")
    counted, edges = np.histogram(numbers, bins=bins, range=(low, high))
    # numpy's last bin includes its right edge.
    closing = [")"] * (bins - 1) + ["]"]
    labels = [f"[{a:.4g}, {b:.4g}{end}" for a, b, end in zip(edges[:-1], edges[1:], closing)]
    return pd.Series(counted.astype(int), index=pd.Index(labels, name=pd.Series(values).name))
