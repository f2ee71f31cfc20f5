"""The outcome of one accuracy-first run, with its ex-post privacy loss split in two.

docs/mathematics.md#interactiveabovethreshold, docs/mathematics.md#the-doubling-method,
docs/mathematics.md#the-epsilon-grid, docs/mathematics.md#what-a-run-reports: every run reports the testing part (ε_A or
the doubling tests) and the generation part (ε_t) of its ex-post loss, the true excess risk (evaluation only, not
private) and, for teaching, the trace of every tested level.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

if TYPE_CHECKING:
    from accfirst.erm.problem import Problem


@dataclass(frozen=True)
class Trace:
    """Every tested level of one run, in test order (docs/mathematics.md#interactiveabovethreshold,
    docs/mathematics.md#the-doubling-method).

    ``excess_risk`` is exact where it was computed and NaN where a certified lower
    bound (``risk_lower_bound``) already failed the test; run with ``exact=True``
    for every value. The test halts at a level when ``noisy_query ≥ noisy_threshold``,
    with ``noisy_query = −excess_risk + query_noise``.
    """

    level: NDArray[np.int64]
    epsilon: NDArray[np.float64]
    excess_risk: NDArray[np.float64]
    risk_lower_bound: NDArray[np.float64]
    query_noise: NDArray[np.float64]
    noisy_threshold: NDArray[np.float64]

    @property
    def noisy_query(self) -> NDArray[np.float64]:
        return -self.excess_risk + self.query_noise

    def to_frame(self) -> pd.DataFrame:
        """One row per tested level."""
        return pd.DataFrame(
            {
                "level": self.level,
                "epsilon": self.epsilon,
                "excess_risk": self.excess_risk,
                "risk_lower_bound": self.risk_lower_bound,
                "query_noise": self.query_noise,
                "noisy_query": self.noisy_query,
                "noisy_threshold": self.noisy_threshold,
            }
        )


@dataclass(frozen=True)
class SamplerReport:
    """How a sampling method drew its hypothesis (the Gibbs posterior, docs/mathematics.md#the-gibbs-posterior): public
    numbers only, fixed before the run reads the data.

    ``beta`` is the posterior's inverse temperature; ``radius`` the ball the ridge posterior is kept on (∞ for
    logistic); ``failure_bound`` a bound on P(R > α) for the released hypothesis; ``tv_bound`` the proven bound on
    the sampler's total-variation distance from the posterior (0 for ridge's exact sampling); ``spacing`` the
    lattice the release lies on (docs/mathematics.md#the-gibbs-posterior-on-a-lattice).
    """

    beta: float
    radius: float
    failure_bound: float
    tv_bound: float
    spacing: float


@dataclass(frozen=True)
class RunResult:
    """One run of an accuracy-first method (docs/mathematics.md#what-a-run-reports): what it released and every part of
    what it paid.

    ``stop_index`` is the 1-based level that passed the test, ``None`` on fallback (``fallback``: no level
    passed). Then, by default, nothing is released (docs/mathematics.md#what-a-failed-run-releases):
    ``nothing_released`` is true, ``theta`` is ``None``, ``excess_risk`` and ``theta_norm`` are NaN, ``success`` is
    false and the run is charged its declared top, a finite ``eps_total``; only a run asked for the paper's fallback releases θ* at
    ``eps_total`` = ∞ (``SearchOptions.fallback``). ``eps_total`` is the whole
    ex-post privacy loss, the sum of its parts: ``eps_prep`` (preparing the rows,
    docs/mathematics.md#preparing-the-data-privately; paid once per prepared table and shared by every run on it),
    ``eps_radius`` (a private radius, docs/mathematics.md#a-private-radius), ``eps_scale`` (the zero model's private
    risk bound of a relative target, docs/mathematics.md#a-relative-accuracy-target), ``eps_test`` (the private accuracy
    test) and ``eps_hypothesis`` (generating the released model). ``noise`` names the noise of the hypothesis generator
    ("laplace" or "gaussian"); ``delta`` is the δ of an (ε, δ)-ex-post guarantee (the preparation's δ included), 0 for
    pure ex-post privacy, and ``delta_prep`` the part of it that preparing the rows added (shared by every run on the
    table, like ``eps_prep``: a run with ``delta == delta_prep`` adds no δ of its own). ``prep_mode`` says how the rows
    were prepared (``Problem.prep_mode``): after an "evaluation" preparation, which read the data without noise, no ε covers the preparation and every figure excludes it. ``kappa``
    is the relative target (NaN for an absolute α), ``scale`` the released lower bound on R(0) that turned κ into α (NaN
    otherwise), and ``r0`` the true R(0) = L(0) − L(θ*) (evaluation only, like ``excess_risk``). ``norm_bound`` is the
    radius of the feasible set the run used. A run toward a target in the units people read
    (docs/mathematics.md#a-target-in-the-units-people-read) records it in ``target`` ("r2" or "accuracy"; empty for α
    and κ) and ``goal`` (r or a), with ``quality``, the released model's in-sample R² or accuracy (evaluation only;
    ``success`` is whether it meets the goal), and ``lam`` the λ the search chose; ``alpha`` is then NaN. ``stopped``
    says why nothing was released when a run toward such a target releases nothing, and ``refused`` is true when that
    was decided from public numbers before the data were read (nothing spent). ``seconds`` is how long the run took: it depends on the data (where the
    search stopped, how hard each solve was), so it is a local diagnostic, in no results frame, CSV, report or
    printout (docs/mathematics.md#what-an-observer-sees).
    """

    method: str
    generator: str
    calibration: str
    alpha: float
    gamma: float
    lam: float
    n: int
    p: int
    T: int
    stop_index: int | None
    eps_test: float
    eps_hypothesis: float
    eps_total: float
    excess_risk: float
    success: bool
    fallback: bool
    theta: NDArray[np.float64] | None = field(repr=False)
    theta_norm: float
    norm_bound: float
    seconds: float = field(repr=False)
    trace: Trace | None = field(default=None, repr=False)
    noise: str = "laplace"
    delta: float = 0.0
    sampler: SamplerReport | None = field(default=None, repr=False)
    eps_prep: float = 0.0
    delta_prep: float = 0.0
    prep_mode: str = "given"
    eps_radius: float = 0.0
    eps_scale: float = 0.0
    kappa: float = math.nan
    scale: float = math.nan
    r0: float = math.nan
    nothing_released: bool = False
    target: str = ""
    goal: float = math.nan
    quality: float = math.nan
    stopped: str = ""
    refused: bool = False

    @staticmethod
    def _from_problem(problem: Problem, alpha: float, started: float) -> dict[str, Any]:
        """What every record takes from its problem: λ, n, p, the norm bound, R(0) (evaluation only), with α and the
        seconds since ``started`` (a ``time.perf_counter()`` value)."""
        return {
            "r0": problem.zero_risk,
            "alpha": alpha,
            "lam": problem.lam,
            "n": problem.n,
            "p": problem.p,
            "norm_bound": problem.norm_bound,
            "seconds": time.perf_counter() - started,
        }

    @classmethod
    def released(
        cls, problem: Problem, theta: NDArray[np.float64], *, alpha: float, started: float, **fields: Any
    ) -> RunResult:
        """The record of a run that released ``theta``: what follows from the problem (``_from_problem``) and from θ
        (‖θ‖, the excess risk and whether it met α: evaluation only), plus the method's own ``fields``.
        """
        risk = float(problem.excess_risk(theta))
        return cls(
            **RunResult._from_problem(problem, alpha, started),
            excess_risk=risk,
            success=risk <= alpha,
            theta=theta,
            theta_norm=float(np.linalg.norm(theta)),
            **fields,
        )

    @classmethod
    def nothing(cls, problem: Problem, *, alpha: float, started: float, **fields: Any) -> RunResult:
        """The record of a run whose test never passed and that released nothing
        (docs/mathematics.md#what-a-failed-run-releases): no θ, no excess risk, not a success; ``fields`` carry its
        charge, the declared top, in its parts."""
        return cls(
            **RunResult._from_problem(problem, alpha, started),
            excess_risk=math.nan,
            success=False,
            theta=None,
            theta_norm=math.nan,
            nothing_released=True,
            **fields,
        )

    @classmethod
    def untested(
        cls,
        problem: Problem,
        theta: NDArray[np.float64],
        *,
        alpha: float,
        started: float,
        epsilon: float,
        **fields: Any,
    ) -> RunResult:
        """The record of a run that released one hypothesis at an ε fixed before it ran: no test, no fallback.

        The theory approach (docs/mathematics.md#the-theory-approach) and the Gibbs posterior
        (docs/mathematics.md#the-gibbs-posterior) pay ``epsilon`` for their one hypothesis and nothing for a test;
        ``fields`` are the method's own, as for ``released``.
        """
        return cls.released(
            problem,
            theta,
            alpha=alpha,
            started=started,
            T=1,
            stop_index=1,
            eps_test=0.0,
            eps_hypothesis=epsilon,
            eps_total=epsilon,
            fallback=False,
            **fields,
        )

    @property
    def exp_eps_total(self) -> float:
        """e^ε, the privacy-risk factor (docs/mathematics.md#setting-and-notation); ∞ on fallback."""
        return math.exp(self.eps_total) if self.eps_total < 709 else math.inf

    def to_dict(self) -> dict[str, object]:
        """The scalar fields a results frame releases (no θ, no trace, no timing), plus ``exp_eps_total``."""
        kept = (f.name for f in fields(self) if f.name not in ("theta", "trace", "sampler", "seconds"))
        row: dict[str, object] = {name: getattr(self, name) for name in kept}
        row["exp_eps_total"] = self.exp_eps_total
        return row
