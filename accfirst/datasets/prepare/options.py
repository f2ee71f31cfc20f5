"""``from_frame``'s preparation choices, checked once at the boundary (the steps trust them)."""

from __future__ import annotations

from dataclasses import dataclass

from accfirst.datasets.prepare.noise import NoiseSeed
from accfirst.datasets.prepare.schema import Schema

STANDARDIZE_PRIVATE = ("half-range", "private")


@dataclass(frozen=True)
class PrepOptions:
    """Validated options of one preparation (see ``from_frame`` for each).

    ``standardize`` is ``"none"``, ``"half-range"`` or ``"private"`` (private mode) or ``"none"``
    or ``"sd"`` (evaluation only); ``scaling`` is ``"ranges"`` (private default), ``"paper"``
    (evaluation only) or ``"clip"`` (public bounds).
    """

    preparation: str
    task: str
    positive_class: object
    schema: Schema
    log1p_columns: frozenset[str]
    log1p_target: bool
    scaling: str
    feature_bound: float | None
    target_bound: float | None
    center: bool
    standardize: str
    missing: str
    max_levels: int
    test_size: float
    seed: int
    prep_epsilon: float | None
    prep_delta: float
    budget: float | None
    noise_seed: NoiseSeed
