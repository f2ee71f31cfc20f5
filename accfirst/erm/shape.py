"""What is known of a problem before its rows are read: kind, n, p, λ and the stated radius."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from accfirst.errors import AccFirstError
from accfirst.validation import validate_positive

if TYPE_CHECKING:
    from accfirst.erm.problem import Problem

# A radius far below M makes every model ~0 and the solvers' arithmetic underflow; refuse it.
MIN_RADIUS_SHARE = 1e-6


def validate_radius(radius: float | None, max_norm: float) -> float | None:
    """A public radius R in (0, M], or ``None`` (docs/mathematics.md#a-public-norm-bound); else ``AccFirstError`` naming
    both."""
    if radius is None:
        return None
    radius = validate_positive("radius (a public bound on ‖θ‖)", radius)
    if radius < MIN_RADIUS_SHARE * max_norm:
        raise AccFirstError(
            f"radius R = {radius:.6g} is below {MIN_RADIUS_SHARE:g}·M = {MIN_RADIUS_SHARE * max_norm:.3g}: a model "
            "that small predicts nothing; give a radius from domain knowledge, or none"
        )
    if radius > max_norm:
        raise AccFirstError(
            f"radius R = {radius:.6g} exceeds M = {max_norm:.6g}, the bound on ‖θ*‖ that λ already implies "
            "(docs/mathematics.md, “A public norm bound”); give a radius ≤ M, or none"
        )
    return radius


@dataclass(frozen=True)
class ProblemShape:
    """A problem's public constants without its rows: kind, n, p, λ and the stated radius
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound,
    docs/mathematics.md#a-private-radius).

    What a choice made before a run may read (the private radius's rule, the guidance): the
    same ``max_norm``, ``norm_bound``, ``query_sensitivity``, ``test_sensitivity`` and ``theta_sensitivity`` as the
    problem, and ``with_radius`` for the constants on another ball, without touching data.
    """

    kind: type[Problem]
    n: int
    p: int
    lam: float
    radius: float | None = None

    @property
    def name(self) -> str:
        return self.kind.name

    @property
    def max_norm(self) -> float:
        return self.kind.implied_norm_bound(self.lam)

    @property
    def norm_bound(self) -> float:
        return self.max_norm if self.radius is None else self.radius

    @property
    def query_sensitivity(self) -> float:
        return self.kind.risk_sensitivity(self.norm_bound, self.n)

    def test_sensitivity(self, alpha: float, *, clipped: bool) -> float:
        return self.kind.test_sensitivity_on(self.norm_bound, self.n, self.lam, alpha, clipped=clipped)

    @property
    def theta_sensitivity(self) -> float:
        return self.kind.output_sensitivity(self.norm_bound, self.n, self.p, self.lam)

    def with_radius(self, radius: float | None) -> ProblemShape:
        """The constants on the ball ‖θ‖ ≤ ``radius`` (``None``: M); checked like a problem's radius."""
        return replace(self, radius=validate_radius(radius, self.max_norm))
