"""What is known of a problem before its rows are read: kind, n, p, λ, the stated radius and the row bound ρ, and the
sensitivities that follow from them (docs/mathematics.md#rows-of-small-euclidean-norm)."""

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


def validate_row_bound(row_bound: float) -> float:
    """ρ in (0, 1], a public bound on every row's Euclidean norm (docs/mathematics.md#rows-of-small-euclidean-norm);
    else ``AccFirstError``. Rows with ‖x‖₁ ≤ 1 have ‖x‖₂ ≤ 1, so ρ = 1 always holds."""
    row_bound = validate_positive("row_bound (a public bound on ‖x‖₂)", row_bound)
    if row_bound > 1:
        raise AccFirstError(f"row_bound ρ must be at most 1 (rows with ‖x‖₁ ≤ 1 have ‖x‖₂ ≤ 1); got {row_bound:.6g}")
    return row_bound


@dataclass(frozen=True)
class ProblemShape:
    """A problem's public constants without its rows: kind, n, p, λ, the stated radius and the row bound ρ
    (docs/mathematics.md#the-two-learning-problems, docs/mathematics.md#a-public-norm-bound,
    docs/mathematics.md#a-private-radius, docs/mathematics.md#rows-of-small-euclidean-norm).

    What a choice made before a run may read (the private radius's rule, the guidance): the
    same ``max_norm``, ``norm_bound``, ``query_sensitivity``, ``test_sensitivity`` and ``theta_sensitivity`` as the
    problem, and ``with_radius`` for the constants on another ball, without touching data.

    Every sensitivity is read here, with ρ: the problem's classmethods (``risk_sensitivity``, ``test_sensitivity_on``,
    ``minimiser_sensitivity``, ...) are the formulas for rows of Euclidean norm at most 1, and ``unit_rows`` maps a ball
    and λ of rows of norm ρ to the unit-row problem that has the same objective.
    """

    kind: type[Problem]
    n: int
    p: int
    lam: float
    radius: float | None = None
    row_bound: float = 1.0

    @property
    def name(self) -> str:
        return self.kind.name

    @property
    def max_norm(self) -> float:
        return self.kind.implied_norm_bound(self.lam)

    @property
    def norm_bound(self) -> float:
        return self.max_norm if self.radius is None else self.radius

    def unit_rows(self, radius: float, lam: float) -> tuple[float, float]:
        """(ρR, λ/ρ²): the unit-row problem that rows of norm ≤ ρ on the ball ‖θ‖ ≤ ``radius`` at ``lam`` are
        (docs/mathematics.md#rows-of-small-euclidean-norm). [derived]

        With u = x/ρ and φ = ρθ, xᵀθ = uᵀφ and λ‖θ‖²/2 = (λ/ρ²)‖φ‖²/2: the objective, every excess risk and every
        clipped query are those of rows of norm ≤ 1 at λ/ρ² on the ball of radius ρR. A risk-side sensitivity is the
        unit-row formula there; a θ-side one is the unit-row φ-side one there, divided by ρ. ρ = 1 is the identity, to
        the last bit.
        """
        rho = self.row_bound
        return rho * radius, lam / (rho * rho)

    def risk_sensitivity_on(self, radius: float, n: float) -> float:
        """Δ_R of the excess-risk query over the ball ‖θ‖ ≤ ``radius`` on ``n`` rows: (1 + ρR)²/n (ridge), 2ρR/n
        (logistic)."""
        return self.kind.risk_sensitivity(self.unit_rows(radius, self.lam)[0], n)

    def test_sensitivity_on(self, radius: float, n: float, lam: float, alpha: float, *, clipped: bool) -> float:
        """Δ_R(α) of the test's query over the ball ‖θ‖ ≤ ``radius`` (``Problem.test_sensitivity_on`` on unit rows),
        clipped at α or not."""
        return self.kind.test_sensitivity_on(*self._unit(radius, n, lam), alpha, clipped=clipped)

    def test_sensitivity_formula(
        self, bound: str, radius: float, n: float, lam: float, alpha: float, *, clipped: bool
    ) -> str:
        """How ``test_sensitivity_on`` reads for a message, the radius named ``bound``."""
        if self.row_bound == 1.0:
            return self.kind.test_sensitivity_formula(bound, radius, n, lam, alpha, clipped=clipped)
        unit = self._unit(radius, n, lam)
        formula = self.kind.test_sensitivity_formula("R′", *unit, alpha, clipped=clipped)
        return f"{formula} with R′ = ρ{bound} = {unit[0]:.3g} and λ/ρ² for λ, rows of norm ≤ ρ = {self.row_bound:.3g}"

    def minimiser_sensitivity_on(self, radius: float, n: float, lam: float) -> float:
        """How far one replaced row moves the minimiser over the ball ‖θ‖ ≤ ``radius``, in ℓ2 norm: ρS(ρR)/(nλ)
        (``Problem.minimiser_sensitivity`` on unit rows, divided by ρ)."""
        return self.kind.minimiser_sensitivity(*self._unit(radius, n, lam)) / self.row_bound

    def output_sensitivity_on(self, radius: float, n: float, lam: float) -> float:
        """Δ_θ, the ℓ1-sensitivity of the minimiser over the ball ‖θ‖ ≤ ``radius``: √p times
        ``minimiser_sensitivity_on``."""
        unit_radius, unit_n, unit_lam = self._unit(radius, n, lam)
        return self.kind.output_sensitivity(unit_radius, unit_n, self.p, unit_lam) / self.row_bound

    def zero_risk_width_on(self, radius: float, lam: float) -> float:
        """W, the width of the per-row range of ℓ(0; z) − ℓ(θ; z) over the ball ‖θ‖ ≤ ``radius`` (and the free ball):
        (1 + ρr)²/2 (ridge), ρr (logistic), r = min(R, R₀)."""
        return self.kind.zero_risk_width(*self.unit_rows(radius, lam))

    def _unit(self, radius: float, n: float, lam: float) -> tuple[float, float, float]:
        unit_radius, unit_lam = self.unit_rows(radius, lam)
        return unit_radius, n, unit_lam

    @property
    def query_sensitivity(self) -> float:
        return self.risk_sensitivity_on(self.norm_bound, self.n)

    def test_sensitivity(self, alpha: float, *, clipped: bool) -> float:
        return self.test_sensitivity_on(self.norm_bound, self.n, self.lam, alpha, clipped=clipped)

    @property
    def theta_sensitivity(self) -> float:
        return self.output_sensitivity_on(self.norm_bound, self.n, self.lam)

    @property
    def zero_risk_sensitivity(self) -> float:
        return self.zero_risk_width_on(self.norm_bound, self.lam) / self.n

    def with_row_bound(self, row_bound: float) -> ProblemShape:
        """The constants with the row bound ρ = ``row_bound`` (docs/mathematics.md#rows-of-small-euclidean-norm)."""
        return replace(self, row_bound=validate_row_bound(row_bound))

    def with_radius(self, radius: float | None) -> ProblemShape:
        """The constants on the ball ‖θ‖ ≤ ``radius`` (``None``: M); checked like a problem's radius."""
        return replace(self, radius=validate_radius(radius, self.max_norm))
