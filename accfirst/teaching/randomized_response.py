"""Randomized response: the slides' two-coin protocol and its general (p, q) form
(docs/mathematics.md#teaching-mechanisms).

Each respondent answers truthfully with probability p, and otherwise says "yes" with
probability q. The slides' protocol (flip a coin; tails: the truth; heads: flip again,
heads "yes", tails "no") is p = q = ½ and is ln 3-DP. From the observed share λ̂ of
"yes" the true share π is estimated without bias by π̂ = (λ̂ − (1−p)q)/p.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from accfirst.errors import AccFirstError
from accfirst.validation import validate_count, validate_probability


@dataclass(frozen=True)
class Misfit:
    """Answers that do not fit a protocol (``RandomizedResponse.misfit``).

    Parameters
    ----------
    direction : "more" or "fewer": more (fewer) "yes" than the protocol can give.
    probability : the largest chance of a count this far out if every answer had followed the
        protocol (binomial, exact, at the end of ``yes_share_range`` nearest the count).
    """

    direction: str
    probability: float


@dataclass(frozen=True)
class RandomizedResponse:
    """Truthful with probability ``p``, else "yes" with probability ``q`` (docs/mathematics.md#teaching-mechanisms).

    Parameters
    ----------
    p : probability of answering truthfully, in (0, 1] (p = 1 is no privacy at all).
    q : probability of "yes" when not truthful, in [0, 1].
    """

    p: float = 0.5
    q: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", validate_probability("p (probability of the truth)", self.p, one=True))
        object.__setattr__(
            self, "q", validate_probability("q (probability of a forced yes)", self.q, zero=True, one=True)
        )

    @property
    def answer_probabilities(self) -> tuple[float, float]:
        """(P(yes | true yes), P(yes | true no)) = (p + (1−p)q, (1−p)q)."""
        forced_yes = (1 - self.p) * self.q
        return self.p + forced_yes, forced_yes

    @property
    def epsilon(self) -> float:
        """ε = max(ln((p + (1−p)q)/((1−p)q)), ln((p + (1−p)(1−q))/((1−p)(1−q)))); ∞ if a ratio is unbounded."""
        forced_yes, forced_no = (1 - self.p) * self.q, (1 - self.p) * (1 - self.q)
        if forced_yes == 0 or forced_no == 0:
            return math.inf
        return max(math.log((self.p + forced_yes) / forced_yes), math.log((self.p + forced_no) / forced_no))

    @overload
    def yes_share(self, truth_share: float) -> float: ...
    @overload
    def yes_share(self, truth_share: NDArray[np.float64]) -> NDArray[np.float64]: ...
    @overload
    def yes_share(self, truth_share: ArrayLike) -> float | NDArray[np.float64]: ...
    def yes_share(self, truth_share: ArrayLike) -> float | NDArray[np.float64]:
        """λ = pπ + (1−p)q, the expected share of "yes" answers when a share π would truly say yes."""
        pi = _shares("truth_share", truth_share)
        value = self.p * pi + (1 - self.p) * self.q
        return float(value) if np.ndim(value) == 0 else value

    @overload
    def estimate(self, observed_share: float) -> float: ...
    @overload
    def estimate(self, observed_share: NDArray[np.float64]) -> NDArray[np.float64]: ...
    @overload
    def estimate(self, observed_share: ArrayLike) -> float | NDArray[np.float64]: ...
    def estimate(self, observed_share: ArrayLike) -> float | NDArray[np.float64]:
        """π̂ = (λ̂ − (1−p)q)/p, unbiased for the true share; it may fall outside [0, 1]."""
        share = _shares("observed_share", observed_share)
        value = (share - (1 - self.p) * self.q) / self.p
        return float(value) if np.ndim(value) == 0 else value

    def variance(self, truth_share: float, n: int) -> float:
        """Var π̂ = λ(1−λ)/(np²) for n respondents drawn independently, a share π of whom say yes truly."""
        n = validate_count("n (respondents)", n, 1)
        lam = self.yes_share(truth_share)
        return lam * (1 - lam) / (n * self.p**2)

    @property
    def yes_share_range(self) -> tuple[float, float]:
        """The shares of "yes" the protocol can produce: from λ = (1−p)q (nobody's truth is yes) to p + (1−p)q."""
        forced_yes = (1 - self.p) * self.q
        return forced_yes, self.p + forced_yes

    def yes_share_interval(self, yes: int, n: int, level: float = 0.95) -> tuple[float, float]:
        """The exact (Clopper–Pearson) interval for the share λ of "yes" from ``yes`` "yes" answers of ``n``.

        It covers λ with probability at least ``level`` whatever λ and n (never empty, even at
        λ̂ = 0 or 1), and its ends are exact binomial tests: λ below the lower end would give
        ``yes`` or more "yes" with probability under (1 − level)/2.
        """
        n = validate_count("n (answers)", n, 1)
        yes = validate_count("yes (answers)", yes, 0)
        if yes > n:
            raise AccFirstError(f"yes answers ({yes}) cannot exceed all answers ({n})")
        tail = (1 - validate_probability("level", level)) / 2
        low = float(stats.beta.ppf(tail, yes, n - yes + 1)) if yes > 0 else 0.0
        high = float(stats.beta.ppf(1 - tail, yes + 1, n - yes)) if yes < n else 1.0
        return low, high

    def confidence_interval(self, yes: int, n: int, level: float = 0.95) -> tuple[float, float]:
        """A confidence interval for π from ``yes`` "yes" answers out of ``n``.

        The exact interval for λ (``yes_share_interval``) mapped through the increasing
        λ ↦ (λ − (1−p)q)/p and intersected with [0, 1] (π is a share, so the intersection keeps
        the coverage of at least ``level``). When the interval for λ lies wholly outside
        ``yes_share_range`` the intersection is a single end point: ``misfit`` says so.
        """
        low, high = (self.estimate(x) for x in self.yes_share_interval(yes, n, level))
        return min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)

    def misfit(self, yes: int, n: int, level: float = 0.95) -> Misfit | None:
        """How ``yes`` "yes" out of ``n`` fail to fit the protocol, or ``None`` when they fit.

        They fail when they hold more (fewer) "yes" than the protocol can give, beyond its
        sampling error: the exact interval for λ lies wholly above (below) ``yes_share_range``,
        so no true share π in [0, 1] fits — an exact binomial test at the range's end. Answers
        that all follow the protocol are flagged with probability at most (1 − level)/2 per
        direction, whatever the class size and the true share.
        """
        low, high = self.yes_share_interval(yes, n, level)
        least, most = self.yes_share_range
        if low >= most and most < 1:
            return Misfit("more", float(stats.binom.sf(yes - 1, n, most)))
        if high <= least and least > 0:
            return Misfit("fewer", float(stats.binom.cdf(yes, n, least)))
        return None

    def respond(self, truths: ArrayLike, rng: np.random.Generator) -> NDArray[np.bool_]:
        """The randomized answers of respondents whose true answers are ``truths`` (booleans).

        Two draws per respondent, as with the coins: the first decides truthful or not, the
        second is the forced answer.
        """
        truth = np.asarray(truths)
        if truth.dtype != np.bool_:
            raise AccFirstError("truths must be booleans (True for a true 'yes')")
        truthful = rng.random(truth.shape) < self.p
        forced = rng.random(truth.shape) < self.q
        return np.where(truthful, truth, forced)

    def simulate_polls(self, n: int, truth_share: float, polls: int, rng: np.random.Generator) -> NDArray[np.int64]:
        """The number of "yes" answers in each of ``polls`` polls of n respondents.

        Each respondent truly says yes with probability π, independently, so a poll's "yes"
        count is Binomial(n, λ) exactly (what ``respond`` produces, drawn in one step).
        """
        n = validate_count("n (respondents)", n, 1)
        polls = validate_count("polls", polls, 1)
        return rng.binomial(n, self.yes_share(truth_share), size=polls)

    @property
    def devices(self) -> str:
        """What students play with, for sentences: "coins", "dice" or "coin and die" (p, q multiples of 1/6)."""
        kinds = {_chance_device(self.p, "p", "tails")[0], _chance_device(self.q, "q", "heads")[0]}
        return "coin and die" if len(kinds) == 2 else "coins" if kinds == {"Flip a coin"} else "dice"

    def instructions(self) -> str:
        """What a student does with a coin or a die, when p and q are multiples of 1/6 (plain text).

        The slides' protocol reads: flip a coin; tails: answer truthfully; heads: flip again,
        heads "yes", tails "no".
        """
        first_device, first_outcome = _chance_device(self.p, "p", coin_outcome="tails")
        second_device, second_outcome = _chance_device(self.q, "q", coin_outcome="heads")
        again = " again" if second_device == first_device else ""
        return (
            f"{first_device}. {first_outcome} → answer truthfully. Otherwise {second_device.lower()}{again}: "
            f"{second_outcome.lower()} → answer “yes”, anything else → answer “no”."
        )


TWO_COINS = RandomizedResponse(0.5, 0.5)


def _shares(name: str, values: ArrayLike) -> NDArray[np.float64]:
    shares = np.asarray(values, dtype=np.float64)
    if np.any(~np.isfinite(shares)) or np.any(shares < 0) or np.any(shares > 1):
        raise AccFirstError(f"{name} must be a share in [0, 1]")
    return shares


def _chance_device(probability: float, name: str, coin_outcome: str) -> tuple[str, str]:
    """("Flip a coin", "Tails") for ½; ("Roll a die", "1–k") for k/6."""
    sixths = Fraction(probability).limit_denominator(6)
    if not 0 < sixths < 1 or abs(float(sixths) - probability) > 1e-12:
        raise AccFirstError(f"{name} must be a multiple of 1/6 strictly between 0 and 1 to play with a coin or a die")
    if sixths == Fraction(1, 2):
        return "Flip a coin", coin_outcome.capitalize()
    k = int(sixths * 6)
    return "Roll a die", "1" if k == 1 else f"1–{k}"
