"""A queue of analyses on one dataset under one (ε, δ) budget, with its ledger (docs/mathematics.md#the-ex-post-filter,
docs/mathematics.md#many-analyses-one-budget, docs/mathematics.md#counts-to-a-relative-error).

[derived; consistent with Rogers et al. 2023]

The analyst queues accuracy-first regressions (``filtered_search`` in the ex-post filter) and
batches of counts at a relative error (``filtered_counts`` in the zCDP filter); the queue
runs in order, each analysis admitted or refused by its filter, and the ledger says per
analysis what it declared, what it was charged, what went back and what is left. When the
queue holds both kinds the budget is split (``SplitBudget``): a share of ε (and, for
Gaussian searches, the same share of δ) goes to the ex-post filter, the rest to the zCDP
filter. The same queue with every method replaced by doubling (``Analysis.under``) shows
how far the same budget goes without noise reduction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from accfirst.accounting.counts import COUNT_METHODS, filtered_counts
from accfirst.accounting.filters import (
    FAILED,
    PREPARATION_LABEL,
    ExPostFilter,
    PrivacyFilter,
    SplitBudget,
    ZCDPFilter,
    charge_preparation,
    filtered_search,
    unpaid_preparation,
)
from accfirst.erm.generators import NOISES
from accfirst.erm.problem import Problem
from accfirst.errors import AccFirstError
from accfirst.interpret import format_delta
from accfirst.methods.options import SearchOptions
from accfirst.methods.registry import method_label
from accfirst.validation import REPEATABLE, release_seed, validate_alpha, validate_positive, validate_probability

KINDS = ("regression", "counts")
LEDGER_COLUMNS = (
    "analysis",
    "label",
    "kind",
    "method",
    "filter",
    "unit",
    "budget",
    "declared",
    "delta",
    "realised",
    "refund",
    "remaining",
    "status",
    "fits",
    "note",
)
PRIVATE_NOISE = "operating-system entropy (a private release; not shown, not repeatable)"
# Statuses of an analysis; the first three mean it ran to its end inside the budget.
FITTED = ("released", "fallback", "failed", "done")


@dataclass(frozen=True)
class Analysis:
    """One queued analysis: a regression at excess risk α, or a batch of counts at relative error α.

    Parameters
    ----------
    kind : "regression" (an accuracy-first search on the session's problem) or "counts".
    method : "nr" (noise reduction) or "doubling".
    target : α, in (0, 1): the excess risk of a regression or the relative error of the counts.
    noise : "laplace" or "gaussian" (regressions; counts are always Gaussian).
    """

    kind: str
    method: str
    target: float
    noise: str = "laplace"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise AccFirstError(f"an analysis is one of {KINDS}; got {self.kind!r}")
        if self.method not in COUNT_METHODS:
            raise AccFirstError(f"method must be one of {COUNT_METHODS}; got {self.method!r}")
        if self.noise not in NOISES:
            raise AccFirstError(f"noise must be one of {sorted(NOISES)}; got {self.noise!r}")
        object.__setattr__(self, "target", validate_alpha(self.target))

    @property
    def label(self) -> str:
        """E.g. "Regression, noise reduction (Laplace), α = 0.05" or "Counts, doubling, relative error 0.1"."""
        method = method_label(self.method).lower()
        if self.kind == "counts":
            return f"Counts, {method}, relative error {self.target:g}"
        return f"Regression, {method} ({self.noise.capitalize()}), α = {self.target:g}"

    def under(self, method: str) -> Analysis:
        """The same analysis with another method (the doubling twin of a queue)."""
        return replace(self, method=method)

    def to_text(self) -> str:
        """A short stable form: "nr-laplace-0.05" (regression) or "counts-nr-0.1"."""
        if self.kind == "counts":
            return f"counts-{self.method}-{self.target:g}"
        return f"{self.method}-{self.noise}-{self.target:g}"

    @classmethod
    def from_text(cls, text: str) -> Analysis:
        """The analysis of ``to_text``; ``AccFirstError`` saying what is wrong otherwise."""
        parts = text.strip().split("-")
        try:
            if len(parts) == 3 and parts[0] == "counts":
                return cls("counts", parts[1], float(parts[2]))
            if len(parts) == 3:
                return cls("regression", parts[0], float(parts[2]), parts[1])
        except ValueError as exc:
            raise AccFirstError(f"cannot read the analysis {text!r}: {exc}") from None
        raise AccFirstError(
            f"cannot read the analysis {text!r}: write METHOD-NOISE-ALPHA (nr-laplace-0.05) or counts-METHOD-ALPHA"
        )


def session_budget(
    epsilon: float,
    delta: float,
    analyses: Sequence[Analysis],
    expost_share: float,
    preparation: tuple[float, float] = (0.0, 0.0),
) -> SplitBudget:
    """The filters of a queue: split ``expost_share`` : rest between ex-post and zCDP
    (docs/mathematics.md#many-analyses-one-budget).

    The ex-post part first holds the table's ``preparation`` (ε, δ), charged there once
    (docs/mathematics.md#preparing-the-data-privately); what is left is split. A queue of one kind gets nearly all of it;
    the other filter keeps a sliver (10⁻⁹ of ε and δ) it never uses, so that both always exist. Gaussian searches need
    room for their δ: the ex-post part gets ``expost_share`` of the δ left when the queue has one.
    """
    validate_positive("epsilon", epsilon)
    share = validate_probability("expost_share (the share of ε for regressions)", expost_share)
    kinds = {a.kind for a in analyses}
    if kinds == {"regression"}:
        share = 1 - 1e-9
    elif kinds == {"counts"}:
        share = 1e-9
    prep_epsilon, prep_delta = preparation
    gaussian = any(a.kind == "regression" and a.noise == "gaussian" for a in analyses)
    expost_epsilon = min(prep_epsilon + share * max(epsilon - prep_epsilon, 0.0), epsilon * (1 - 1e-9))
    searches = share * (delta - prep_delta) if gaussian else 0.0
    expost_delta = min(searches + prep_delta, delta * (1 - 1e-9))
    return SplitBudget(epsilon, delta, expost_epsilon, expost_delta)


@dataclass(frozen=True)
class SessionStep:
    """The ledger after one more analysis: one row per analysis so far (``LEDGER_COLUMNS``), every round, and where
    the session's noise came from (``PRIVATE_NOISE``, or the seed given, named a repeatable run: not private)."""

    ledger: pd.DataFrame
    rounds: pd.DataFrame
    noise: str = PRIVATE_NOISE


def run_session(
    problem: Problem,
    analyses: Sequence[Analysis],
    counts: ArrayLike,
    epsilon: float,
    delta: float,
    expost_share: float = 0.5,
    gamma: float = 0.1,
    options: SearchOptions = SearchOptions(),
    beta: float = 0.05,
    cap: float = 0.05,
    seed: int | None = None,
) -> Iterator[SessionStep]:
    """Run ``analyses`` in order under one (ε, δ) budget; yield the ledger after each
    (docs/mathematics.md#many-analyses-one-budget).

    A table prepared privately (``problem.prep_epsilon``, ``prep_delta``:
    docs/mathematics.md#preparing-the-data-privately) is charged once, as the first round of the ex-post filter (row 0
    of the ledger); if the budget cannot hold it, nothing runs. A regression is one round of the ex-post filter
    (declared its top level; a fallback releases nothing). Gaussian searches share the ex-post part's δ equally. A
    counts batch releases ``counts`` one by one in the zCDP filter until it refuses. A refused analysis does not end the
    queue: a later, cheaper one may still fit. Each analysis draws its own noise, from (the session's entropy, its
    position, its method): the same queue under another method is another release, with other noise.

    Parameters
    ----------
    problem : the session's ERM problem (regressions).
    analyses : the queue.
    counts : the true counts a counts batch releases (ℓ2-sensitivity 1 each).
    epsilon, delta : the whole budget (ε, δ); δ in (0, 1).
    expost_share : the share of ε for regressions when the queue mixes both kinds.
    gamma, options : of every regression (``options.noise`` and ``options.delta`` are set per analysis).
    beta, cap : per-count failure probability β and cap κ of the counts batches.
    seed : ``None`` (the default) draws the session's noise from the operating system: a private release. A seed
        makes a repeatable run, whose noise anyone with the seed can replay: not a private release, and every step
        says so (``SessionStep.noise``).
    """
    entropy = release_seed(seed)
    noise = PRIVATE_NOISE if seed is None else f"seed {entropy} ({REPEATABLE})"
    queue = list(analyses)
    prep_delta = problem.prep_delta
    budget = session_budget(epsilon, delta, queue, expost_share, (problem.prep_epsilon, prep_delta))
    gaussian = sum(a.kind == "regression" and a.noise == "gaussian" for a in queue)
    rows: list[dict[str, object]] = []
    if unpaid_preparation(problem):
        paid, row = _preparation(budget.expost, problem)
        rows.append({"analysis": 0, "label": PREPARATION_LABEL, "kind": "preparation", "method": "", **row})
        yield SessionStep(pd.DataFrame(rows, columns=list(LEDGER_COLUMNS)), budget.ledger, noise)
        if paid is None:
            return
        problem = paid  # its runs report and are charged their own parts only
    for index, analysis in enumerate(queue, start=1):
        stream = (index, COUNT_METHODS.index(analysis.method))
        rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=stream))
        if analysis.kind == "regression":
            search_options = replace(
                options,
                noise=analysis.noise,
                delta=(budget.expost.delta - prep_delta) / gaussian if analysis.noise == "gaussian" else options.delta,
            )
            row = _regression(budget.expost, problem, analysis, gamma, search_options, rng)
        else:
            row = _counts(budget.zcdp, analysis, counts, beta, cap, rng)
        rows.append(
            {
                "analysis": index,
                "label": analysis.label,
                "kind": analysis.kind,
                "method": analysis.method,
                **row,
                "fits": row["status"] in FITTED,
            }
        )
        yield SessionStep(pd.DataFrame(rows, columns=list(LEDGER_COLUMNS)), budget.ledger, noise)


def _preparation(budget: ExPostFilter, problem: Problem) -> tuple[Problem | None, dict[str, object]]:
    """The preparation's (ε, δ), charged in full as the ledger's first round (``charge_preparation``): the problem
    the analyses run on (``None`` if refused) and the ledger's row."""
    epsilon, delta = problem.prep_epsilon, problem.prep_delta
    paid = charge_preparation(budget, problem, PREPARATION_LABEL)
    if paid is not None:
        note = f"preparing the table paid ε = {epsilon:.3g}, δ = {delta:.2g} once, for every analysis below"
    else:
        note = f"refused: {budget.ledger['reason'].iloc[-1]}; no analysis can read the data"
    admitted = paid is not None
    status = "charged" if admitted else "refused"
    row = _ledger_row(budget, epsilon, delta, epsilon if admitted else 0.0, 0.0, status, note)
    return paid, {**row, "fits": admitted}


def _regression(
    budget: ExPostFilter,
    problem: Problem,
    analysis: Analysis,
    gamma: float,
    options: SearchOptions,
    rng: np.random.Generator,
) -> dict[str, object]:
    run = filtered_search(budget, problem, analysis.method, analysis.target, gamma, rng, options, analysis.label)
    if run.status == "refused":
        note = f"refused: {budget.ledger['reason'].iloc[-1]}"
    elif run.status == "fallback":
        note = "no level passed the test: nothing released, charged the declared bound"
    elif run.status == "failed":
        note = FAILED
    else:
        note = f"model released at ex-post ε = {run.charged:.3g}"
    return _ledger_row(budget, run.declared, run.delta, run.charged, run.refund, run.status, note)


def _counts(
    budget: ZCDPFilter, analysis: Analysis, counts: ArrayLike, beta: float, cap: float, rng: np.random.Generator
) -> dict[str, object]:
    before = len(budget.ledger)
    frame = filtered_counts(budget, counts, analysis.target, analysis.method, beta, cap, rng)
    rounds = budget.ledger.iloc[before:]
    charged = rounds[rounds["status"] == "charged"]
    certified = int(frame["certified"].sum())
    refused = bool((frame["status"] == "refused").any())
    note = f"{certified} of {len(frame) - refused} counts certified"
    if refused:
        stop = int(frame["index"].iloc[-1])
        note += f"; refused at count {stop + 1} of {len(np.atleast_1d(counts))}: {rounds['reason'].iloc[-1]}"
    declared, realised, refund = (float(charged[column].sum()) for column in ("declared", "realised", "refund"))
    return _ledger_row(budget, declared, 0.0, realised, refund, "refused" if refused else "done", note)


def _ledger_row(
    budget: PrivacyFilter, declared: float, delta: float, realised: float, refund: float, status: str, note: str
) -> dict[str, object]:
    """One analysis's ledger columns: ``budget``'s name, unit, size and what remains of it now, beside the analysis's figures."""
    return {
        "filter": budget.name,
        "unit": budget.unit,
        "budget": budget.budget,
        "declared": declared,
        "delta": delta,
        "realised": realised,
        "refund": refund,
        "remaining": budget.remaining,
        "status": status,
        "note": note,
    }


def fitted(ledger: pd.DataFrame) -> int:
    """How many analyses of a ledger ran to their end inside the budget (the preparation's row 0 is not one)."""
    return int(ledger.loc[ledger["analysis"] > 0, "fits"].sum())


def describe_budget(budget: PrivacyFilter) -> str:
    """A filter's budget in words: "ε = 2, δ = 0 (pure)", "ε = 2, δ = 5 × 10⁻⁷" or "ρ = 0.0113 (ε = 2, δ = …)"."""
    if isinstance(budget, ZCDPFilter):
        return f"ρ = {budget.budget:.3g} (ε = {budget.epsilon:.3g}, δ = {format_delta(budget.delta)})"
    return f"ε = {budget.epsilon:.3g}, δ = {format_delta(budget.delta)}" + (" (pure)" if budget.delta == 0 else "")
