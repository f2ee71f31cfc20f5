"""Scaling rows into the unit ℓ1 ball (docs/mathematics.md#setting-and-notation,
docs/mathematics.md#preparing-the-data-privately): by a bound from the plan, never from the rows; and the public bound
ρ on a row's Euclidean norm that the plan gives for free.

``UnitBallScaling`` divides every feature by ``B``: the sum over columns of their half-ranges
once centred and standardised (1 for a numeric column divided by its half-range, 1 for a one-hot
block), all public numbers of the plan, or a bound the user states. Then every row beyond
``‖x‖₁ = 1`` is clipped back onto the ball, row by row: only a row with many values far from
their centres at once is, and a bound that is too small costs bias, never privacy. (The largest
norm the ranges allow would clip nothing but shrink every row, about two-fold on the tables we
measured, and with it the fit a fixed λ allows.) ``clip_rows``, ``scale_rows`` and ``scale_target`` are
the row-by-row clipping every preparation shares (and the estimators and ``accfirst.scale`` use).

A column whose plan keeps its values in ``[−m_j, m_j]`` (a numeric column: its range's largest
distance from its centre, over its spread; a one-hot block: 1) bounds every row, once divided by
``B``, by ``ρ = √(Σ m_j²)/B`` in Euclidean norm (``row_bound``): public numbers of the plan, never
the rows. Every row is clipped to ``‖x‖₂ ≤ ρ`` last (``clip_rows_l2``): a no-op on rows built from
the plan, and it keeps a neighbour's row in the same set whatever it holds.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from accfirst.datasets.prepare.base import DECLARED, FREE, ColumnPlan, StepRecord
from accfirst.errors import DataError

_ROW_CHUNK = 1 << 16


def positive_bound(name: str, value: object) -> float:
    """A public bound: a finite number > 0, else ``DataError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise DataError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def row_l1(X: np.ndarray) -> np.ndarray:
    """Row ℓ1 norms, in row blocks so no full-size temporary is made."""
    norms = np.empty(X.shape[0])
    for start in range(0, X.shape[0], _ROW_CHUNK):
        np.abs(X[start : start + _ROW_CHUNK]).sum(axis=1, out=norms[start : start + _ROW_CHUNK])
    return norms


def row_l2(X: np.ndarray) -> np.ndarray:
    """Row Euclidean norms, in row blocks so no full-size temporary is made."""
    norms = np.empty(X.shape[0])
    for start in range(0, X.shape[0], _ROW_CHUNK):
        block = X[start : start + _ROW_CHUNK]
        np.sqrt(np.einsum("ij,ij->i", block, block), out=norms[start : start + _ROW_CHUNK])
    return norms


def clip_rows_l2(X: np.ndarray, row_bound: float) -> None:
    """Scale rows with ``‖x‖₂ > ρ`` back onto the ball of radius ρ in place (rounding: a row pulled a few ulps inside).

    ρ ≥ 1 is implied by ‖x‖₁ ≤ 1 and changes nothing.
    """
    if row_bound >= 1.0:
        return
    norms = row_l2(X)
    shrink = row_bound * (1.0 - 4 * np.finfo(np.float64).eps)
    far = norms > shrink
    if far.any():
        X[far] *= (shrink / norms[far])[:, None]


def row_bound(plans: Sequence[ColumnPlan], bound: float) -> float:
    """ρ = √(Σ m_j²)/B from the plans (see the module docstring), at most 1; 1 when a column has no range."""
    largest = np.array([plan.largest for plan in plans])
    if not np.all(np.isfinite(largest)):
        return 1.0
    return min(1.0, float(np.sqrt(np.sum(largest**2))) / bound)


def clip_rows(X: np.ndarray) -> np.ndarray:
    """Scale rows with ``‖x‖₁ > 1`` back into the ℓ1 ball in place; returns which rows were clipped.

    A float64 sum of p rounded terms can be off by a few ulps either way, so a row whose
    computed norm is within 2p ulps of 1 (such as the largest row under "paper" scaling) is
    pulled that far inside too; it does not count as clipped.
    """
    norms = row_l1(X)
    shrink = 1.0 - 2 * X.shape[1] * np.finfo(np.float64).eps
    near = norms > shrink
    if near.any():
        X[near] *= (shrink / norms[near])[:, None]
    return norms > 1.0


def scale_rows(X: np.ndarray, feature_bound: float) -> np.ndarray:
    """Divide X by a public bound on ‖x‖₁ and clip its rows into ‖x‖₁ ≤ 1, in place; returns X.

    The privacy-safe scaling of docs/data-preparation.md#scaling-into-the-unit-ball (the ``"clip"`` scaling of
    ``from_frame``), for the estimators and for data read in blocks (``accfirst.scale``).
    """
    X /= positive_bound("feature_bound (a public bound on ‖x‖₁)", feature_bound)
    clip_rows(X)
    return X


def scale_target(y: np.ndarray, target_bound: float) -> np.ndarray:
    """Divide y by a public bound on |y| and clip it to [−1, 1], in place; returns y
    (docs/data-preparation.md#scaling-into-the-unit-ball)."""
    y /= positive_bound("target_bound (a public bound on |y|)", target_bound)
    np.clip(y, -1.0, 1.0, out=y)
    return y


class UnitBallScaling:
    """The last step: one bound B for every row, from the plan (free) or stated by the user (declared)."""

    name = "unit-ball scaling"
    needs = "every column's range, centre and spread, or a stated bound on ‖x‖₁"
    reads = "nothing"
    mechanism = "none: post-processing of the plan"
    writes = "the bound B every feature is divided by; rows are clipped to ‖x‖₁ ≤ 1"

    def __init__(self, plans: Sequence[ColumnPlan], feature_bound: float | None) -> None:
        self.plans = plans
        self.feature_bound = feature_bound

    def bound(self) -> float:
        return self.feature_bound if self.feature_bound is not None else sum(plan.half_range for plan in self.plans)

    def row_bound(self) -> float:
        """ρ, the plan's bound on a row's Euclidean norm (see the module docstring)."""
        return row_bound(self.plans, self.bound())

    def _euclidean(self) -> str:
        rho = self.row_bound()
        return (
            f" and ‖x‖₂ ≤ ρ = {rho:.4g}, the plan's bound on a row's Euclidean norm (√ of the sum of the columns' "
            "largest squares, over the bound)"
            if rho < 1
            else ""
        )

    def record(self) -> StepRecord:
        bound = self.bound()
        if self.feature_bound is not None:
            note = (
                f"divided every feature by the stated bound {bound:g} on a row's ℓ1 norm, then clipped rows to "
                f"‖x‖₁ ≤ 1{self._euclidean()} (public bound: reads nothing from the data)"
            )
            return StepRecord(self.name, "", DECLARED, self.mechanism, 0.0, 0.0, note)
        note = (
            f"divided every feature by {bound:.4g}, the sum of the columns' half-ranges after centring and "
            f"standardising (1 per text column), then clipped rows to ‖x‖₁ ≤ 1{self._euclidean()} (reads nothing from "
            "the data)"
        )
        return StepRecord(self.name, "", FREE, self.mechanism, 0.0, 0.0, note)
