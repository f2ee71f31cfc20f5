"""Privacy filters: adaptively chosen rounds on one dataset under one (ε, δ) budget
(docs/mathematics.md#many-analyses-one-budget).

[derived; consistent with Rogers et al. 2023]

Before it runs, a round declares the most it can cost; the filter admits it only if that
worst case fits in what is left, and afterwards charges what the round realised and returns
the rest. Admission depends only on earlier outcomes and on the declared numbers, so it
reveals nothing new, and a refused round never touches the data.

- ``ExPostFilter(ε_g, δ_g)`` (docs/mathematics.md#the-ex-post-filter): rounds whose ex-post loss ℰ(o) is at most a
  declared ℰ̄ — accuracy-first searches (Laplace noise reduction or doubling: pure, δ = 0; Gaussian: (ℰ, δ_n)-ex-post,
  with Σδ_n ≤ δ_g as a second condition) and pure ε-DP mechanisms (ℰ = ε). The transcript is (ε_g, δ_g)-DP.
- ``ZCDPFilter(ε_g, δ_g)`` (docs/mathematics.md#the-zcdp-filter): ρ-zCDP rounds, charged ρ, and Brownian
  noise-reduction rounds whose stopping rule reads only the releases, declared at their top
  level ρ̄ and charged the level ρ where they stopped (the unified filter). Admits while
  Σρ ≤ ρ_B(ε_g, δ_g); the transcript is (ε_g, δ_g)-DP.
- ``SplitBudget`` (docs/mathematics.md#many-analyses-one-budget): one budget split into both, run concurrently; the
  whole is (ε_E + ε_Z, δ_E + δ_Z)-DP.

``filtered_search`` runs an accuracy-first search inside an ``ExPostFilter``; ``charge_preparation`` charges a
privately prepared table's preparation there once, as a round of its own, before any search reads its rows.

The ledger is released with the results: a round that fails after reading the data records a fixed reason
(``FAILED``), never the error's own text, which could quote the data.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from accfirst.erm.problem import Problem
from accfirst.errors import AccFirstError
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import method_label
from accfirst.result import RunResult
from accfirst.search.experiments import declared_bound, search
from accfirst.teaching.composition import dp_to_zcdp
from accfirst.validation import as_generator, shorten, validate_delta, validate_positive

LEDGER_COLUMNS = (
    "round",
    "filter",
    "kind",
    "label",
    "status",
    "unit",
    "declared",
    "delta",
    "realised",
    "refund",
    "remaining",
    "reason",
)
# A remainder below this share of the budget is rounding, not budget.
ROUNDING = 1e-12
# What the ledger says of a round that failed after it read the data: one fixed reason, whatever the error said.
FAILED = "failed after reading the data: nothing released, charged its declared bound"
PREPARATION_LABEL = "Preparing the table (paid once)"


def zcdp_budget(epsilon: float, delta: float) -> float:
    """ρ_B(ε, δ) = (√(ε + ln(1/δ)) − √(ln(1/δ)))²: the zCDP total that is (ε, δ)-DP
    (docs/mathematics.md#the-zcdp-filter).

    The inverse of ε = ρ + 2√(ρ ln(1/δ)), the tail bound P(loss > ε) ≤ δ of ρ-zCDP.
    """
    return dp_to_zcdp(epsilon, delta)


class PrivacyFilter:
    """Admission, charges and the ledger shared by the filters (docs/mathematics.md#the-ex-post-filter,
    docs/mathematics.md#many-analyses-one-budget).

    One round at a time: ``admit`` a declared bound, run the round only if it returns
    ``True``, then ``charge`` what it realised (≤ the bound). Amounts are in ``unit``.
    """

    unit: str
    name: str
    epsilon: float  # the (ε, δ) the budget stands for, set by each filter
    delta: float

    def __init__(self, budget: float, delta_budget: float) -> None:
        self.budget = budget
        self.delta_budget = delta_budget
        self.spent = 0.0
        self.delta_spent = 0.0
        # Round numbers; filters run concurrently (``SplitBudget``) share one counter.
        self._rounds: Iterator[int] = itertools.count(1)
        self._open: dict[str, Any] | None = None
        self._rows: list[dict[str, object]] = []

    @property
    def remaining(self) -> float:
        """What the next round may declare: the budget less every charge and the open round's bound."""
        reserved = float(self._open["declared"]) if self._open is not None else 0.0
        left = self.budget - self.spent - reserved
        return left if left > ROUNDING * self.budget else 0.0

    @property
    def ledger(self) -> pd.DataFrame:
        """One row per round, admitted or refused, in order (docs/mathematics.md#many-analyses-one-budget): its kind,
        declared bound, δ, realised charge, refund, the remaining budget after it, and why it was refused."""
        return pd.DataFrame(self._rows, columns=list(LEDGER_COLUMNS))

    def _row(self, bound: float, delta: float, kind: str, label: str) -> dict[str, Any]:
        """A new round's ledger entry (its number, kind and declared bound)."""
        if self._open is not None:
            raise AccFirstError("charge the admitted round before admitting another")
        return {
            "round": next(self._rounds),
            "filter": self.name,
            "kind": kind,
            "label": label,
            "unit": self.unit,
            "declared": bound,
            "delta": delta,
        }

    def refuse(self, reason: str, *, kind: str, label: str = "") -> None:
        """Record a round refused before admission because it cannot declare a bound (a public check failed)."""
        row = self._row(math.nan, 0.0, kind, label)
        self._rows.append(
            row
            | {
                "status": "refused",
                "realised": 0.0,
                "refund": 0.0,
                "remaining": self.remaining,
                "reason": shorten(reason),
            }
        )

    def _admit(self, bound: object, delta: float, kind: str, label: str) -> bool:
        bound = validate_positive("the declared bound", bound)
        row = self._row(bound, delta, kind, label)
        left = self.remaining
        if bound > left + ROUNDING * self.budget:
            reason = f"declares {bound:.4g} {self.unit}; {left:.4g} left"
        elif delta > self.delta_budget - self.delta_spent + ROUNDING * self.delta_budget:
            reason = f"declares δ = {delta:.3g}; δ left {max(self.delta_budget - self.delta_spent, 0.0):.3g}"
        else:
            self._open = row
            return True
        self._rows.append(
            row | {"status": "refused", "realised": 0.0, "refund": 0.0, "remaining": left, "reason": reason}
        )
        return False

    def charge(self, realised: float) -> float:
        """Charge the admitted round what it realised (0 ≤ realised ≤ declared); return the refund.

        A realised charge above the declared bound by no more than rounding (the same parts summed in
        another order) is charged the bound. A larger one means the round's bound did not cover what it
        realised: an ``AccFirstError``, which closes the round charged its bound when raised in ``round``.
        """
        if self._open is None:
            raise AccFirstError("no admitted round to charge; call admit first")
        declared = float(self._open["declared"])
        value = float(realised)
        if not 0 <= value <= declared * (1 + ROUNDING):
            raise AccFirstError(
                f"the realised charge must be between 0 and the declared bound {declared:.6g} {self.unit}"
            )
        return self._close(min(value, declared), "charged", "")

    def fail(self) -> None:
        """Close the admitted round that failed after it read the data: charged its whole declared bound.

        Whatever the round read may have shaped its failure (an error that depends on the data is an
        output), so it costs what it declared, and the next round can be admitted
        (docs/mathematics.md#the-ex-post-filter). The ledger records the fixed reason ``FAILED``.
        """
        if self._open is None:
            raise AccFirstError("no admitted round to close; call admit first")
        self._close(float(self._open["declared"]), "failed", FAILED)

    def _close(self, value: float, status: str, reason: str) -> float:
        """Charge the open round ``value`` and record it with ``status``; returns the refund."""
        row, self._open = self._open, None
        assert row is not None, "only an admitted round is closed"
        declared = float(row["declared"])
        self.spent += value
        self.delta_spent += float(row["delta"])
        self._rows.append(
            row
            | {
                "status": status,
                "realised": value,
                "refund": declared - value,
                "remaining": self.remaining,
                "reason": reason,
            }
        )
        return declared - value

    @contextmanager
    def round(self) -> Iterator[None]:
        """The body of an admitted round, its charge included: if it raises, the round is closed with ``fail``
        before the error goes on, so no round is ever left open."""
        try:
            yield
        except BaseException:
            if self._open is not None:
                self.fail()
            raise


class ExPostFilter(PrivacyFilter):
    """Ex-post privacy filter: admit iff Σ realised ℰ_i + ℰ̄_n ≤ ε_g and Σ δ_i + δ_n ≤ δ_g
    (docs/mathematics.md#the-ex-post-filter).

    Parameters
    ----------
    epsilon : ε_g > 0, the budget.
    delta : δ_g in [0, 1): room for (ℰ, δ_n)-ex-post rounds (Gaussian searches); 0 admits only
        pure ex-post and pure-DP rounds.
    """

    unit = "ε"
    name = "ex-post"

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = validate_positive("epsilon", epsilon)
        self.delta = 0.0 if delta == 0 else validate_delta(delta)
        super().__init__(self.epsilon, self.delta)

    def admit(self, bound: float, delta: float = 0.0, *, kind: str = "ex-post", label: str = "") -> bool:
        """Admit a round whose ex-post loss is at most ``bound`` except with probability ``delta``."""
        return self._admit(bound, 0.0 if delta == 0 else validate_delta(delta), kind, label)


class ZCDPFilter(PrivacyFilter):
    """zCDP filter and unified filter for Brownian rounds: admit iff Σ ρ̂_i + ρ̄_n ≤ ρ_B(ε_g, δ_g)
    (docs/mathematics.md#the-zcdp-filter).

    A ρ-zCDP round (a Gaussian mechanism; an ε-DP round is ε²/2-zCDP) declares and is
    charged ρ. A Brownian noise-reduction round declares its top level ρ̄ and is charged
    the level where it stopped — valid only if its stopping rule reads nothing but the
    releases (an AboveThreshold test reads the data: put such a search in an
    ``ExPostFilter``).

    Parameters
    ----------
    epsilon, delta : the (ε_g, δ_g)-DP guarantee of the whole transcript; δ_g in (0, 1).
    """

    unit = "ρ"
    name = "zCDP"

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon = validate_positive("epsilon", epsilon)
        self.delta = validate_delta(delta)
        super().__init__(zcdp_budget(self.epsilon, self.delta), 0.0)

    def admit(self, rho: float, *, kind: str = "zCDP", label: str = "") -> bool:
        """Admit a round of at most ``rho`` (zCDP: its ρ; Brownian: its top level ρ̄)."""
        return self._admit(rho, 0.0, kind, label)


class SplitBudget:
    """One (ε, δ) budget split into an ex-post part and a zCDP part run concurrently
    (docs/mathematics.md#many-analyses-one-budget).

    [recalled: concurrent composition; the simple sum is valid] The whole is
    (ε_E + ε_Z, δ_E + δ_Z)-DP with ε_E = ``expost_epsilon``, δ_E = ``expost_delta`` and the
    rest (ε_Z, δ_Z) in ``zcdp``. Rounds go to ``expost`` or ``zcdp``; ``ledger`` lists both
    in the order they came.

    Parameters
    ----------
    epsilon, delta : the whole budget; δ in (0, 1).
    expost_epsilon : ε_E, in (0, ε).
    expost_delta : δ_E, in [0, δ): room for Gaussian accuracy-first searches.
    """

    def __init__(self, epsilon: float, delta: float, expost_epsilon: float, expost_delta: float = 0.0) -> None:
        self.epsilon = validate_positive("epsilon", epsilon)
        self.delta = validate_delta(delta)
        if not 0 < expost_epsilon < self.epsilon:
            raise AccFirstError(f"expost_epsilon must be in (0, epsilon = {self.epsilon:g}); got {expost_epsilon!r}")
        if not 0 <= expost_delta < self.delta:
            raise AccFirstError(f"expost_delta must be in [0, delta = {self.delta:g}); got {expost_delta!r}")
        self.expost = ExPostFilter(expost_epsilon, expost_delta)
        self.zcdp = ZCDPFilter(self.epsilon - expost_epsilon, self.delta - expost_delta)
        self.zcdp._rounds = self.expost._rounds

    @property
    def ledger(self) -> pd.DataFrame:
        """Both ledgers in round order (column ``filter`` says which)."""
        return pd.concat([self.expost.ledger, self.zcdp.ledger], ignore_index=True).sort_values(
            "round", ignore_index=True
        )


@dataclass(frozen=True)
class FilteredRun:
    """An accuracy-first search inside a filter: released, fallen back or failed (nothing released), or refused.

    ``declared`` and ``delta`` are its a-priori bound; ``charged`` what the filter took
    (0 if refused, the bound on fallback or failure); ``result`` only when a model was released;
    ``error`` why it could not declare a bound or was not admitted (refused: public reasons only), or the fixed
    ``FAILED`` when it failed after reading the data.
    """

    status: str
    declared: float
    delta: float
    charged: float
    result: RunResult | None
    error: str = ""

    @property
    def refund(self) -> float:
        """What went back to the budget: declared − charged (0 unless released)."""
        return self.declared - self.charged if self.status != "refused" else 0.0


def unpaid_preparation(problem: Problem) -> bool:
    """Whether ``problem``'s rows carry a preparation (ε, δ) not yet charged to a filter
    (docs/mathematics.md#many-analyses-one-budget)."""
    return problem.prep_epsilon > 0 or problem.prep_delta > 0


def charge_preparation(budget: ExPostFilter, problem: Problem, label: str = PREPARATION_LABEL) -> Problem | None:
    """Charge a privately prepared table's (ε_prep, δ_prep) to ``budget`` once, as a round of its own
    (docs/mathematics.md#preparing-the-data-privately, docs/mathematics.md#many-analyses-one-budget).

    Returns the problem that searches in this filter run on: the same rows, whose runs then report and are
    charged their own parts only (the preparation is charged as a round of its own); ``None`` when the budget
    cannot hold the preparation (refused: no search may read the rows). A problem with no preparation to pay
    comes back as it is.
    """
    if not unpaid_preparation(problem):
        return problem
    epsilon, delta = problem.prep_epsilon, problem.prep_delta
    if not budget.admit(epsilon, delta, kind="preparation", label=label):
        return None
    with budget.round():
        budget.charge(epsilon)  # a pure DP release: realised = declared, no refund
    return problem.with_preparation(0.0, 0.0, problem.prep_mode)


def filtered_search(
    budget: ExPostFilter,
    problem: Problem,
    method: str,
    alpha: float,
    gamma: float,
    rng: np.random.Generator | int | None = None,
    options: SearchOptions = SearchOptions(),
    label: str | None = None,
) -> FilteredRun:
    """An accuracy-first search as one round of an ex-post filter (docs/mathematics.md#the-ex-post-filter).

    It declares ℰ̄ = its loss at the top level (ε_A + ε_T; doubling K·ε_test + (2^K − 1)ε_1;
    Gaussian ε_A + ℰ_BM(ρ_T) with its δ; theory E; a private radius's or a relative target's part included)
    and runs only if admitted. A model that passed is released and charged its realised ex-post ε, the same
    parts the bound covers; on fallback NOTHING is released (θ* never leaves the filter) and the round is
    charged ℰ̄. A run that fails after admission (an ``AccFirstError`` raised once the data were read, its
    charge included) is charged ℰ̄ too and reported as "failed" with the fixed reason ``FAILED``; any other
    error is charged the same and raised. No round is left open. Checks that need only public quantities run
    before admission (``declared_bound``), so a setting the method cannot serve is refused without touching the
    budget; so is a table whose preparation was not charged to this filter (``charge_preparation`` first).

    Parameters
    ----------
    budget : the ex-post filter (``SplitBudget.expost`` for a split budget).
    problem, method, alpha, gamma, options : as for ``accfirst.search.experiments.search``; a privately prepared
        problem must come from ``charge_preparation`` on this filter.
    rng : a Generator or seed; ``None`` (the default) draws from the operating system.
    label : the ledger's label (default: method, α and noise).
    """
    if not isinstance(budget, ExPostFilter):
        raise AccFirstError("an accuracy-first search is ex-post private: run it in an ExPostFilter")
    if label is None:
        label = f"{method_label(method)} at α = {alpha:g} ({options.noise})"
    kind = f"accuracy-first {method}"
    try:
        if unpaid_preparation(problem):
            raise AccFirstError(
                f"the table's preparation (ε = {problem.prep_epsilon:.3g}, δ = {problem.prep_delta:.2g}) is not "
                "charged to this filter: charge it once with charge_preparation and search the problem it returns"
            )
        bound, delta = declared_bound(problem, method, alpha, gamma, options)
    except AccFirstError as error:  # a public check: nothing was read
        budget.refuse(str(error), kind=kind, label=label)
        return FilteredRun("refused", math.nan, 0.0, 0.0, None, str(error))
    if not budget.admit(bound, delta, kind=kind, label=label):
        return FilteredRun("refused", bound, delta, 0.0, None)
    try:
        with budget.round():
            result = search(problem, method, alpha, gamma, as_generator(rng), options)
            charged = bound if result.fallback else result.eps_total
            budget.charge(charged)
    except AccFirstError:
        return FilteredRun("failed", bound, delta, bound, None, FAILED)
    if result.fallback:
        return FilteredRun("fallback", bound, delta, bound, None)
    return FilteredRun("released", bound, delta, min(charged, bound), result)
