"""How every run of a batch searches: one record of the search options
(docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#interactiveabovethreshold,
docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#brownian-noise-reduction,
docs/mathematics.md#the-gibbs-posterior)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.generators import GENERATORS, NOISES
from accfirst.erm.problem import Problem
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.brownian import DEFAULT_DELTA
from accfirst.mechanisms.calibration import DEFAULT_CALIBRATION, resolve_calibration
from accfirst.methods.grid import SPACINGS, epsilon_grid
from accfirst.validation import echo, validate_count, validate_delta, validate_positive, validate_probability

# How a method that uses a radius chooses the one it runs on (see ``SearchOptions``).
RADIUS_MODES = ("none", "free", "private")
# What a run whose test never passes releases (see ``SearchOptions``): nothing, or the paper's exact θ*.
FALLBACKS = ("nothing", "exact")
#: The most a run toward a target in R² or accuracy may spend, preparation aside: its test, the targets' variance and the
#: generation's top level together (docs/mathematics.md#choosing-λ-under-the-guarantee). 4: what a failed run is charged,
#: and the level at which a request's floor alone refuses it (docs/mathematics.md#refusals-that-spend-nothing).
DEFAULT_CEILING = 4.0
#: λ of a run that is given none and does not choose one (an excess risk α, a relative target κ): the paper's.
DEFAULT_LAM = 0.005
#: What asks a run toward a target in R² or accuracy to choose λ from the default grid
#: (docs/mathematics.md#choosing-λ-under-the-guarantee), where a λ is named: ``--lam auto``, ``lam="auto"``.
AUTO_LAM = "auto"
#: The test budget of a relative target (docs/mathematics.md#a-relative-accuracy-target): the most the private test may
#: be predicted to cost at the released α (e^10 ≈ 22,000).
DEFAULT_TEST_BUDGET = 10.0


def validate_lambdas(lambdas: object) -> tuple[float, ...] | None:
    """A public grid of λ: ``None`` (the default grid, from public quantities) or one or more distinct numbers > 0,
    returned largest first."""
    if lambdas is None:
        return None
    if isinstance(lambdas, (int, float)):
        lambdas = (lambdas,)
    if not isinstance(lambdas, (list, tuple)) or not lambdas:
        raise AccFirstError(f"lambdas must be None or a non-empty list of numbers > 0; got {echo(lambdas)}")
    values = [validate_positive("each λ of the grid", value) for value in lambdas]
    if len(set(values)) != len(values):
        raise AccFirstError(f"the grid of λ repeats a value: {values}")
    return tuple(sorted(values, reverse=True))


def validate_fallback(fallback: object) -> str:
    """What a run whose test never passes releases: one of ``FALLBACKS``."""
    if fallback not in FALLBACKS:
        raise AccFirstError(f"fallback must be one of {FALLBACKS}; got {echo(fallback)}")
    return str(fallback)


@dataclass(frozen=True)
class SearchOptions:
    """How every run of a batch searches: the ε grid, the generator, its noise, the test, δ
    (docs/mathematics.md#private-hypothesis-generators, docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#brownian-noise-reduction,
    docs/mathematics.md#the-gibbs-posterior).

    The same for every (method, α, trial) of a batch, so ``run_trials``, ``sweep``, the app
    and the settings record carry one of these instead of each option separately. Checked
    when made (``AccFirstError`` with the option's name).

    Parameters
    ----------
    T : privacy levels on the noise-reduction grid, ≥ 2 (default 100: with the default
        calibration it paid 12% less total ε than the paper's 1000 on the built-in data, with
        no fallbacks; docs/benchmarks.md#calibration).
    generator : "covariance", "output", or ``None`` for the paper's pairing.
    calibration : the InteractiveAboveThreshold calibration (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#exact-calibrations); the default
        "exact-paper-opt" paid the least total ε on the built-in data (docs/benchmarks.md#calibration).
        ``SearchOptions.paper()`` is the authors' configuration.
    eps_min, eps_max : ends of the ε grid; ``None`` for the paper's 1/n and 4E (docs/mathematics.md#the-epsilon-grid).
    spacing : "geometric" (the paper's) or "linear".
    noise : "laplace" (the paper's) or "gaussian" (docs/mathematics.md#brownian-noise-reduction; noise reduction and
    doubling only). delta : δ of the (ε, δ) guarantees, in [0, 1): of Gaussian runs' ex-post loss (δ > 0; Laplace runs
        record δ = 0) and of the Gibbs posterior (docs/mathematics.md#the-gibbs-posterior; 0 asks it for pure ε, ridge
        only).
    radius_mode : the radius of the feasible set a method that uses one runs on (``RADIUS_MODES``;
        default "private": it paid the least total ε on the built-in data,
        docs/benchmarks.md#a-bound-on-the-models-size): "none" runs on the problem's own (M, or a
        public radius stated when it was built, docs/mathematics.md#a-public-norm-bound);
        "free" on the free radius R₀ (M/2 for ridge, ≈ 0.448·M for logistic: it holds for every
        dataset and reads none, docs/mathematics.md#the-free-radius), or the public radius if that is smaller;
        "private" releases a tighter radius below that ceiling with a small part of the budget
        (docs/mathematics.md#a-private-radius), when a prediction from public quantities says it pays, and runs on it
        with γ − β. ``SearchOptions.paper()`` uses "none" (the paper's M).
    radius_epsilon, radius_beta : the private radius's ε_R > 0 (its Laplace noise Lap(Δ_N/ε_R); with
        Gaussian noise, Gaussian noise of the same variance, ρ_R = ε_R²/4) and the probability β ∈ (0, ½)
        that it falls below ‖θ*‖ (β < γ at run time); ``None`` (default) lets the rule choose them from
        public quantities (docs/mathematics.md#a-private-radius). Both given: the radius is always bought.
    test_budget : for a relative target κ only (docs/mathematics.md#a-relative-accuracy-target,
    ``accfirst.methods.relative``): the most the private
        test may be predicted to cost at the released α = κ·Ŝ, > 0 (default 10). A bound Ŝ below what this
        allows means the data show no signal a private model could keep; ε_S is designed for data on which
        the test costs a tenth of it.
    lambdas : for a target in R² or accuracy only (docs/mathematics.md#choosing-λ-under-the-guarantee): the public grid
        of λ the search chooses from; ``None`` (default) for the grid the rows' bound gives, one value for a fixed λ.
    ceiling : for a target in R² or accuracy only: the most the run may spend beyond the preparation, > 0 (default 4);
        a target no data of the table's size could meet within it is refused before the data are read.
    fallback : what a run whose test never passes releases (``FALLBACKS``; docs/mathematics.md#what-a-failed-run-releases):
        "nothing" (the default: no model, and the run is charged its declared top) or "exact" (the paper's
        Algorithm 3: the exact, non-private θ*, ε = ∞), for reproducing the paper's figures on data generated from
        public parameters; refused on a table prepared from a user's data. ``SearchOptions.paper()`` uses "exact".
    """

    T: int = 100
    generator: str | None = None
    calibration: str = DEFAULT_CALIBRATION
    eps_min: float | None = None
    eps_max: float | None = None
    spacing: str = "geometric"
    noise: str = "laplace"
    delta: float = DEFAULT_DELTA
    radius_mode: str = "private"
    radius_epsilon: float | None = None
    radius_beta: float | None = None
    test_budget: float = DEFAULT_TEST_BUDGET
    lambdas: tuple[float, ...] | None = None
    ceiling: float = DEFAULT_CEILING
    fallback: str = "nothing"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "T", validate_count("T (number of privacy levels)", self.T, 2))
        if self.generator is not None and self.generator not in GENERATORS:
            raise AccFirstError(f"unknown generator {self.generator!r}; choose one of {sorted(GENERATORS)} or None")
        set_(self, "calibration", resolve_calibration(self.calibration).name)
        for name in ("eps_min", "eps_max"):
            value = getattr(self, name)
            set_(self, name, None if value is None else validate_positive(name, value))
        if self.spacing not in SPACINGS:
            raise AccFirstError(f"spacing must be one of {SPACINGS}; got {self.spacing!r}")
        if self.noise not in NOISES:
            raise AccFirstError(f"unknown noise {self.noise!r}; choose one of {sorted(NOISES)}")
        # Gaussian runs are (ε, δ)-ex-post and need δ > 0; δ = 0 asks the Gibbs posterior for pure ε.
        gaussian = self.noise == "gaussian"
        delta = validate_delta(self.delta) if gaussian else validate_probability("delta", self.delta, zero=True)
        set_(self, "delta", delta)
        if self.radius_mode not in RADIUS_MODES:
            raise AccFirstError(f"radius_mode must be one of {RADIUS_MODES}; got {echo(self.radius_mode)}")
        if self.radius_epsilon is not None:
            set_(self, "radius_epsilon", validate_positive("radius_epsilon", self.radius_epsilon))
        if self.radius_beta is not None:
            beta = validate_probability("radius_beta", self.radius_beta)
            if beta >= 0.5:
                raise AccFirstError(f"radius_beta must be below ½ (and below γ); got {beta:g}")
            set_(self, "radius_beta", beta)
        stated = [name for name in ("radius_epsilon", "radius_beta") if getattr(self, name) is not None]
        if stated and self.radius_mode != "private":
            raise AccFirstError(f"{' and '.join(stated)} only apply with radius_mode='private'")
        set_(self, "test_budget", validate_positive("test_budget", self.test_budget))
        set_(self, "lambdas", validate_lambdas(self.lambdas))
        set_(self, "ceiling", validate_positive("ceiling", self.ceiling))
        validate_fallback(self.fallback)

    @classmethod
    def paper(cls) -> SearchOptions:
        """The authors' configuration, for reproducing the paper's figures on synthetic data: their code's calibration,
        T = 1000, the bound M and their fallback (θ*, ε = ∞, when no level passes)."""
        return cls(T=1000, calibration="paper-code", radius_mode="none", fallback="exact")

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, Any]) -> SearchOptions:
        """The options named in ``keywords`` (the rest at their defaults); an unknown name is an ``AccFirstError``."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(keywords) - set(names))
        if unknown:
            raise AccFirstError(f"unknown search option(s) {unknown}; the options are {names}")
        return cls(**keywords)

    def to_dict(self) -> dict[str, Any]:
        """``{option: value}``, every option (keyword arguments of ``run_trials``)."""
        return asdict(self)

    def grid(self, problem: Problem | ProblemShape, alpha: float) -> NDArray[np.float64]:
        """The ε grid of one α (docs/mathematics.md#the-epsilon-grid); doubling spans the same range."""
        return epsilon_grid(problem, alpha, self.generator, self.T, self.eps_min, self.eps_max, self.spacing)
