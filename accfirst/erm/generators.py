"""Private hypothesis generators: covariance perturbation and output perturbation.

docs/mathematics.md#private-hypothesis-generators (one ε), docs/mathematics.md#noise-reduction (CovNR, OutputNR along a
noise-reduction chain) and docs/mathematics.md#brownian-noise-reduction (the same with Gaussian noise along a Brownian
path). A generator names the private vector it perturbs and its ℓ1- and ℓ2-sensitivities; its noise family picks the one
it needs. A noisy release of that vector — the ideal noisy vector rounded exactly to a lattice, so that no float64 of it
can rule an input out (docs/mathematics.md, "Noise that float64 cannot betray") — is post-processed into a
``Hypothesis``.

A ``Hypothesis`` offers a certified lower bound on its excess risk that is cheap
to compute (O(p²) and, for covariance perturbation, at most one Cholesky
factorisation) and the exact θ and excess risk, computed only when asked. The
testers use the bound to reject hopeless hypotheses without solving them; the
decision, and therefore the output distribution, is the same as with exact
evaluation.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.problem import Problem
from accfirst.erm.ridge import RidgeProblem
from accfirst.erm.shape import ProblemShape
from accfirst.erm.trust_region import has_negative_minor, interior_solution, shifted_cholesky_fails, solve_trust_region
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import GAUSSIAN
from accfirst.mechanisms.noise_reduction import LAPLACE, NoiseFamily
from accfirst.validation import lookup


class Hypothesis(ABC):
    """One private hypothesis θ_t: a post-processing of a noisy release."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem

    @property
    @abstractmethod
    def risk_lower_bound(self) -> float:
        """A value ≤ R(θ_t), cheap to compute."""

    @property
    @abstractmethod
    def theta(self) -> NDArray[np.float64]:
        """θ_t, exactly."""

    @cached_property
    def excess_risk(self) -> float:
        """R(θ_t), exactly (evaluation: reads the data)."""
        return float(self.problem.excess_risk(self.theta))


class CovarianceHypothesis(Hypothesis):
    """θ_p = argmin_C (θᵀZθ − 2zᵀθ)/(2n) + (λ/2)‖θ‖² for a noisy (Z, z)
    (docs/mathematics.md#private-hypothesis-generators)."""

    problem: RidgeProblem

    def __init__(self, problem: RidgeProblem, released: NDArray[np.float64]) -> None:
        super().__init__(problem)
        p, n = problem.p, problem.n
        Z = released[: p * p].reshape(p, p)
        # Only sym(Z) enters the objective (post-processing).
        self.H = (Z + Z.T) / (2 * n) + problem.lam * np.eye(p)
        self.g = released[p * p :] / n

    @cached_property
    def _shape(self) -> tuple[str, NDArray[np.float64] | None]:
        """Where the optimum lies, found without an eigendecomposition.

        ("interior", θ) exactly; ("boundary", None) when ‖θ‖ = M is certain (H
        indefinite, or H ≻ 0 with H⁻¹g outside C); ("unknown", None) otherwise.
        """
        if has_negative_minor(self.H):
            return "boundary", None
        positive_definite, interior = interior_solution(self.H, self.g, self.problem.norm_bound)
        if positive_definite:
            return ("interior", interior) if interior is not None else ("boundary", None)
        if shifted_cholesky_fails(self.H):
            return "boundary", None
        return "unknown", None

    @cached_property
    def risk_lower_bound(self) -> float:
        if self._shape[0] == "boundary":
            return self.problem.boundary_risk_lower_bound()
        return self.excess_risk

    @cached_property
    def theta(self) -> NDArray[np.float64]:
        _, interior = self._shape
        if interior is not None:  # only an "interior" shape carries θ
            return interior
        return solve_trust_region(self.H, self.g, self.problem.norm_bound)


class OutputHypothesis(Hypothesis):
    """θ_p = Proj_C(θ* + ξ) for a noisy θ* (docs/mathematics.md#private-hypothesis-generators)."""

    def __init__(self, problem: Problem, released: NDArray[np.float64]) -> None:
        super().__init__(problem)
        self._theta = problem.project(released)

    @property
    def theta(self) -> NDArray[np.float64]:
        return self._theta

    @cached_property
    def risk_lower_bound(self) -> float:
        return self.problem.excess_risk_lower_bound(self._theta)


NOISES: dict[str, NoiseFamily] = {LAPLACE.name: LAPLACE, GAUSSIAN.name: GAUSSIAN}


def resolve_noise(noise: str | NoiseFamily) -> NoiseFamily:
    """A noise family from its name ("laplace" or "gaussian") or itself."""
    if isinstance(noise, NoiseFamily):
        return noise
    return lookup("noise", noise, NOISES)


class HypothesisGenerator(ABC):
    """A private ERM mechanism: perturbs a private vector, then post-processes.

    The noise is calibrated to the vector's ℓ1-sensitivity for Laplace noise (levels ε)
    and to its ℓ2-sensitivity for Gaussian noise (levels ρ).

    Parameters
    ----------
    problem : the ERM problem.
    noise : the noise family (Laplace by default).
    """

    name: str

    def __init__(self, problem: Problem, noise: NoiseFamily = LAPLACE) -> None:
        self.problem = problem
        self.noise = noise

    @staticmethod
    @abstractmethod
    def sensitivities(problem: Problem | ProblemShape) -> tuple[float, float]:
        """(Δ₁, Δ₂) of the perturbed vector on a problem (or its shape): public constants
        (docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#brownian-noise-reduction)."""

    @property
    def sensitivity(self) -> float:
        """ℓ1-sensitivity of the perturbed vector."""
        return self.sensitivities(self.problem)[0]

    @property
    def l2_sensitivity(self) -> float:
        """ℓ2-sensitivity of the perturbed vector (docs/mathematics.md#brownian-noise-reduction)."""
        return self.sensitivities(self.problem)[1]

    @property
    def noise_sensitivity(self) -> float:
        """The sensitivity the noise family is calibrated to: ℓ1 for Laplace, ℓ2 for Gaussian."""
        return self.sensitivity if self.noise.norm == 1 else self.l2_sensitivity

    @abstractmethod
    def private_vector(self) -> NDArray[np.float64]:
        """The vector the noise is added to."""

    @abstractmethod
    def hypothesis(self, released: NDArray[np.float64]) -> Hypothesis:
        """Post-process a noisy release into a hypothesis."""

    def sample(self, level: float, rng: np.random.Generator) -> Hypothesis:
        """One hypothesis at privacy ``level`` (ε, or ρ for Gaussian noise), independent of other draws
        (docs/mathematics.md#private-hypothesis-generators)."""
        return self.hypothesis(self.noise.perturb(self.private_vector(), self.noise_sensitivity, level, rng))

    def chain(self, levels: NDArray[np.float64], rng: np.random.Generator) -> Iterator[Hypothesis]:
        """θ_1, θ_2, … along a noise-reduction chain, built only as they are read (docs/mathematics.md#noise-reduction,
        docs/mathematics.md#brownian-noise-reduction)."""
        releases = self.noise.chain(self.private_vector(), self.noise_sensitivity, levels, rng)
        for level in range(len(releases)):
            yield self.hypothesis(releases.release(level))


COVARIANCE_NEEDS_RIDGE = "covariance perturbation applies to ridge regression only; use output perturbation"


class CovariancePerturbation(HypothesisGenerator):
    """Covariance perturbation for ridge (Thm 3.1): noise on (XᵀX, Xᵀy), ℓ1-sensitivity 4, ℓ2 with the row bound ρ."""

    name = "covariance"
    problem: RidgeProblem

    def __init__(self, problem: Problem, noise: NoiseFamily = LAPLACE) -> None:
        if not isinstance(problem, RidgeProblem):
            raise AccFirstError(COVARIANCE_NEEDS_RIDGE)
        super().__init__(problem, noise)
        self._vector = np.concatenate([problem.A.ravel(), problem.b])

    @staticmethod
    def sensitivities(problem: Problem | ProblemShape) -> tuple[float, float]:
        """Δ₁ = 4 (Lemma A.6: ‖ΔA‖₁ ≤ 2, ‖Δb‖₁ ≤ 2) and Δ₂ = √(2ρ⁴ + 2ρ² + 2c*(1 − c*)), c* = min(ρ², ½), whatever
        the radius: ‖ΔA‖_F² + ‖Δb‖² ≤ 2ρ⁴ + 2ρ² − 2c² + 2|c| with c = ⟨x, x′⟩, |c| ≤ ρ², full p×p matrix plus b
        (docs/mathematics.md#brownian-noise-reduction, docs/mathematics.md#rows-of-small-euclidean-norm); 3/√2 at
        ρ = 1. The release is (XᵀX, Xᵀy) in the coordinates of x, so ρ enters directly, not through the unit-row map."""
        square = problem.row_bound**2
        inner = min(square, 0.5)
        return 4.0, math.sqrt(2.0 * square * square + 2.0 * square + 2.0 * inner * (1.0 - inner))

    def private_vector(self) -> NDArray[np.float64]:
        return self._vector

    def hypothesis(self, released: NDArray[np.float64]) -> CovarianceHypothesis:
        return CovarianceHypothesis(self.problem, released)


class OutputPerturbation(HypothesisGenerator):
    """Output perturbation (Thm 3.3 / A.9): noise on θ*, ℓ1-sensitivity Δ_θ, then Proj_C."""

    name = "output"

    @staticmethod
    def sensitivities(problem: Problem | ProblemShape) -> tuple[float, float]:
        """Δ₁ = Δ_θ (docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#a-public-norm-bound) and Δ₂
        = S_ρ(R)/(nλ) = Δ_θ/√p, the minimiser's movement (docs/mathematics.md#the-gradient-gap,
        docs/mathematics.md#rows-of-small-euclidean-norm, docs/mathematics.md#brownian-noise-reduction)."""
        return problem.theta_sensitivity, problem.theta_sensitivity / math.sqrt(problem.p)

    def private_vector(self) -> NDArray[np.float64]:
        return self.problem.theta_star

    def hypothesis(self, released: NDArray[np.float64]) -> OutputHypothesis:
        return OutputHypothesis(self.problem, released)


GENERATORS: dict[str, type[HypothesisGenerator]] = {
    CovariancePerturbation.name: CovariancePerturbation,
    OutputPerturbation.name: OutputPerturbation,
}


def default_generator_name(problem: Problem | ProblemShape) -> str:
    """The paper's pairing: covariance perturbation for ridge, output perturbation for logistic."""
    return CovariancePerturbation.name if problem.name == RidgeProblem.name else OutputPerturbation.name


def generator_class(
    problem: Problem | ProblemShape, generator: str | HypothesisGenerator | None
) -> type[HypothesisGenerator]:
    """The generator class a name (or ``None`` for the paper's pairing) gives on ``problem``, built from nothing."""
    if isinstance(generator, HypothesisGenerator):
        return type(generator)
    chosen = lookup("generator", default_generator_name(problem) if generator is None else generator, GENERATORS)
    if chosen is CovariancePerturbation and problem.name != RidgeProblem.name:
        raise AccFirstError(COVARIANCE_NEEDS_RIDGE)
    return chosen


def make_generator(
    problem: Problem, generator: str | HypothesisGenerator | None, noise: str | NoiseFamily | None = None
) -> HypothesisGenerator:
    """Resolve a generator name (or ``None`` for the paper's default) into a generator for ``problem``.

    ``noise`` ("laplace", "gaussian" or a family) picks the noise of a generator built by
    name (Laplace when ``None``); a generator passed in must already have that noise.
    """
    family = None if noise is None else resolve_noise(noise)
    if isinstance(generator, HypothesisGenerator):
        if generator.problem is not problem:
            raise AccFirstError("the generator was built for a different problem")
        if family is not None and generator.noise is not family:
            raise AccFirstError(f"the generator adds {generator.noise.name} noise, not {family.name}")
        return generator
    return generator_class(problem, generator)(problem, LAPLACE if family is None else family)
