"""A target in the user's units, certified by one private test, with λ chosen from a public grid
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee,
docs/mathematics.md#refusals-that-spend-nothing).

The user names R² ≥ r (ridge) or accuracy ≥ a (logistic). A ``QualityQuery`` turns that into a shortfall whose
sensitivity depends on neither θ nor λ, so one InteractiveAboveThreshold, calibrated for every query the search may
ask, certifies the models of every λ of the grid. Covariance perturbation releases statistics that serve every λ
(one noise-reduction chain, post-processed into one model per λ); output perturbation releases θ*_λ, one chain per
λ, advanced in rounds and all charged. Before reading the data the search checks that a perfect model could pass
the test within the ceiling, and refuses otherwise, spending nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.generators import CovariancePerturbation, HypothesisGenerator, make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.quality import AccuracyQuery, QualityQuery, VarianceExplainedQuery
from accfirst.errors import AccFirstError
from accfirst.mechanisms.above_threshold import ThresholdNoise
from accfirst.mechanisms.calibration import AboveThresholdCalibration, resolve_calibration
from accfirst.mechanisms.noise_reduction import LAPLACE
from accfirst.validation import validate_count, validate_gamma, validate_positive

#: By how much a model must beat the target for the test to pass it at its threshold: this share of the shortfall the
#: target allows, (1 − r) times the targets' variance (R²) or 1 − a (accuracy).
PASS_SHARE = {VarianceExplainedQuery.unit: 0.4, AccuracyQuery.unit: 0.15}
#: The grid of λ: geometric, this ratio apart, from the curvature the rows allow down.
LAMBDA_RATIO = 2.5
#: Values of λ in the default grid: with one release for every λ they cost only the test's constant; with one
#: release per λ each adds its chain.
SHARED_GRID_SIZE, SEPARATE_GRID_SIZE = 6, 3
#: The generation levels span this ratio below the top the ceiling leaves them.
LEVEL_SPAN = 1e3
#: The variance release's ε is designed so that its noise scale, w²/(nε_v), is a fifth of a variance of w²/80
#: (targets spread over a tenth of their range), and it never takes more than a twentieth of the ceiling.
VARIANCE_DESIGN, VARIANCE_CEILING_SHARE = 400.0, 0.05
#: A released variance below this share of w² leaves nothing to explain.
VARIANCE_FLOOR_SHARE = 1e-4


@dataclass(frozen=True)
class Plan:
    """What a certified search fixes before the data are read, from public numbers only.

    ``refusal`` is a sentence when no data of this shape could meet the target within the ceiling: the search then
    reads nothing and spends nothing.
    """

    lambdas: tuple[float, ...]
    shared: bool
    T: int
    ceiling: float
    variance_epsilon: float
    best_test_epsilon: float
    refusal: str | None


@dataclass(frozen=True)
class CertifiedOutcome:
    """What a certified search released and what each part cost.

    ``theta`` is ``None`` when nothing was released (a refusal, a variance too small to certify, or a test that never
    passed); ``level`` is the 1-based level of the released model and ``lam`` its λ. ``quality`` is the released
    model's in-sample R² or accuracy, exact (evaluation only); ``design_margin`` the test's level A.
    """

    theta: NDArray[np.float64] | None
    lam: float
    level: int | None
    eps_scale: float
    eps_test: float
    eps_hypothesis: float
    quality: float
    design_margin: float
    stopped: str | None

    @property
    def eps_total(self) -> float:
        return self.eps_scale + self.eps_test + self.eps_hypothesis


def default_lambdas(problem: Problem, rho: float, shared: bool) -> tuple[float, ...]:
    """The public grid of λ: geometric with ratio ``LAMBDA_RATIO`` from (the loss's curvature)·ρ²/4 down
    (docs/mathematics.md#choosing-λ-under-the-guarantee).

    The data term's curvature has trace at most (the loss's curvature)·ρ² on rows of Euclidean norm ≤ ρ, so a larger λ
    shrinks every model to almost nothing. Reads n, p and ρ only.
    """
    top = problem.loss_curvature * rho * rho / 4
    size = SHARED_GRID_SIZE if shared else SEPARATE_GRID_SIZE
    return tuple(top / LAMBDA_RATIO**i for i in range(size))


def variance_epsilon(n: int, ceiling: float) -> float:
    """ε_v of the targets' variance: ``VARIANCE_DESIGN``/n, at most ``VARIANCE_CEILING_SHARE`` of the ceiling."""
    return min(VARIANCE_DESIGN / n, VARIANCE_CEILING_SHARE * ceiling)


def _pass_margin(query: QualityQuery, variance: float) -> float:
    """m: how far below 0 a model's shortfall must be for the test to pass it at its threshold."""
    allowed = (1.0 - query.goal) * (variance if isinstance(query, VarianceExplainedQuery) else 1.0)
    return PASS_SHARE[query.unit] * allowed


def _calibrated(
    query: QualityQuery, margin: float, gamma: float, queries: int, calibration: str
) -> tuple[float, AboveThresholdCalibration]:
    """The test at level A = m/(1 − s), s·A its threshold, so that a model with shortfall −m sits on it
    (docs/mathematics.md#a-target-in-the-units-people-read). Every preset scales with the level, so s is read off the
    preset at level 1."""
    calib = resolve_calibration(calibration)
    level = margin / (1.0 + calib.calibrate(1.0, gamma, queries, 1.0).threshold)
    return level, calib.calibrate(level, gamma, queries, query.sensitivity)


def plan_search(
    problem: Problem,
    query: QualityQuery,
    gamma: float,
    *,
    generator: str | None = None,
    lambdas: Sequence[float] | None = None,
    rho: float = 1.0,
    T: int = 50,
    calibration: str = "exact-paper-opt",
    ceiling: float = 5.0,
) -> Plan:
    """Fix the grid, the levels' top and the variance's ε from public numbers, and refuse what no data could meet.

    The feasibility check asks the test's price for a perfect model on targets of the largest variance the range
    allows, w²/4 (R²), or with no error (accuracy), under the run's own rule for the margin
    (docs/mathematics.md#refusals-that-spend-nothing).
    """
    gamma = validate_gamma(gamma)
    T = validate_count("T (number of privacy levels)", T, 2)
    ceiling = validate_positive("ceiling", ceiling)
    shared = isinstance(make_generator(problem, generator), CovariancePerturbation)
    grid = default_lambdas(problem, rho, shared) if lambdas is None else tuple(validate_lambdas(lambdas))
    if isinstance(query, VarianceExplainedQuery):
        eps_v = variance_epsilon(query.n, ceiling)
        best = _pass_margin(query, query.width**2 / 4)
    else:
        eps_v = 0.0
        best = _pass_margin(query, 0.0)
    best_test = _calibrated(query, best, gamma, T * len(grid), calibration)[1].epsilon
    refusal = None
    if eps_v + best_test >= ceiling:
        refusal = (
            f"no data of this size can certify {query.unit} ≥ {query.goal:g} within ε = {ceiling:g}: with "
            f"{query.n:,} rows even a perfect model would need ε ≈ {eps_v + best_test:.3g} for the private check "
            f"alone; nothing was read or spent"
        )
    return Plan(grid, shared, T, ceiling, eps_v, best_test, refusal)


def validate_lambdas(lambdas: Sequence[float]) -> list[float]:
    """A grid of λ: one or more distinct numbers > 0, largest first."""
    values = [validate_positive("each λ of the grid", value) for value in lambdas]
    if not values:
        raise AccFirstError("the grid of λ needs at least one value")
    if len(set(values)) != len(values):
        raise AccFirstError(f"the grid of λ repeats a value: {values}")
    return sorted(values, reverse=True)


def _levels(top: float, T: int) -> NDArray[np.float64]:
    levels: NDArray[np.float64] = np.geomspace(top / LEVEL_SPAN, top, T)
    return levels


def _shared_rounds(
    generators: Sequence[HypothesisGenerator], levels: NDArray[np.float64], rng: np.random.Generator
) -> Iterator[list[NDArray[np.float64]]]:
    """Level by level, every λ's model from one release of the statistics they share."""
    first = generators[0]
    chain = first.noise.chain(first.private_vector(), first.noise_sensitivity, levels, rng)
    for level in range(levels.size):
        released = chain.release(level)
        yield [generator.hypothesis(released).theta for generator in generators]


def _separate_rounds(
    generators: Sequence[HypothesisGenerator], levels: NDArray[np.float64], rng: np.random.Generator
) -> Iterator[list[NDArray[np.float64]]]:
    """Round by round, each λ's model from its own noise-reduction chain (every chain charged)."""
    chains = [
        generator.noise.chain(generator.private_vector(), generator.noise_sensitivity, levels, stream)
        for generator, stream in zip(generators, rng.spawn(len(generators)))
    ]
    for level in range(levels.size):
        yield [generator.hypothesis(chain.release(level)).theta for generator, chain in zip(generators, chains)]


def _release_variance(query: VarianceExplainedQuery, epsilon: float, rng: np.random.Generator) -> float:
    """The targets' variance Σ(y − ȳ)²/n released with Laplace noise (sensitivity w²/n), on a lattice, capped at
    w²/4, the most a range of width w allows (post-processing: no run prices its test below the plan's floor)."""
    variance = np.array([query.total / query.n])
    released = float(LAPLACE.perturb(variance, query.width**2 / query.n, epsilon, rng)[0])
    return min(released, query.width**2 / 4)


def certified_search(
    problems: Sequence[Problem],
    query: QualityQuery,
    gamma: float,
    plan: Plan,
    rng: np.random.Generator,
    *,
    generator: str | None = None,
    calibration: str = "exact-paper-opt",
) -> CertifiedOutcome:
    """The most private model of any λ of the plan's grid that the private test certifies to meet ``query``.

    ``problems`` holds one problem per λ of ``plan.lambdas`` (the same rows). With probability at least 1 − γ the
    released model meets the target (docs/mathematics.md#a-target-in-the-units-people-read); the ex-post loss is the
    variance's ε_v (R² only), the test's ε_A and what the generation released: the level reached (one shared chain) or
    every chain's last level (one chain per λ) (docs/mathematics.md#choosing-λ-under-the-guarantee).
    """
    if plan.refusal is not None:
        raise AccFirstError(plan.refusal)
    if [problem.lam for problem in problems] != list(plan.lambdas):
        raise AccFirstError("certified_search needs one problem per λ of the plan's grid, in the grid's order")
    scale_rng, test_rng, chain_rng = rng.spawn(3)
    eps_v = 0.0
    if isinstance(query, VarianceExplainedQuery):
        eps_v = plan.variance_epsilon
        variance = _release_variance(query, eps_v, scale_rng)
        if variance <= VARIANCE_FLOOR_SHARE * query.width**2:
            return _nothing(plan, eps_v, 0.0, 0.0, math.nan, "the targets barely vary: there is nothing to explain")
    else:
        variance = 0.0
    K = len(problems)
    margin, params = _calibrated(query, _pass_margin(query, variance), gamma, plan.T * K, calibration)
    room = plan.ceiling - eps_v - params.epsilon
    if room <= 0:
        return _nothing(
            plan,
            eps_v,
            0.0,
            0.0,
            margin,
            f"the targets vary too little for the private check to fit within ε = {plan.ceiling:g}",
        )
    levels = _levels(room if plan.shared else room / K, plan.T)
    generators = [make_generator(problem, generator) for problem in problems]
    rounds = (_shared_rounds if plan.shared else _separate_rounds)(generators, levels, chain_rng)
    return _test(problems, query, rounds, levels, params, test_rng, plan, eps_v, margin)


def _test(
    problems: Sequence[Problem],
    query: QualityQuery,
    rounds: Iterator[list[NDArray[np.float64]]],
    levels: NDArray[np.float64],
    params: AboveThresholdCalibration,
    rng: np.random.Generator,
    plan: Plan,
    eps_v: float,
    margin: float,
) -> CertifiedOutcome:
    """Ask every model in order, round by round and λ by λ; halt at the first that passes."""
    K = len(problems)
    noise = ThresholdNoise(params.threshold, params.query_scale, plan.T * K, rng, params.threshold_scale, params.clip)
    for level, thetas in enumerate(rounds):
        batch = np.asarray(thetas)
        shortfalls = query.shortfall(batch)
        for i in range(K):
            if noise.passes(level * K + i, float(shortfalls[i]) + margin):
                spent = _generation_spent(levels, level, i, K, plan.shared)
                return CertifiedOutcome(
                    theta=batch[i],
                    lam=problems[i].lam,
                    level=level + 1,
                    eps_scale=eps_v,
                    eps_test=params.epsilon,
                    eps_hypothesis=float(spent),
                    quality=float(query.quality(batch[i : i + 1])[0]),
                    design_margin=margin,
                    stopped=None,
                )
    top = float(levels[-1] if plan.shared else levels[-1] * K)
    return _nothing(plan, eps_v, params.epsilon, top, margin, "no model passed the private check")


def _generation_spent(levels: NDArray[np.float64], level: int, asked: int, K: int, shared: bool) -> float:
    """What the releases shown to the test cost when it halts at model ``asked`` of round ``level``.

    One shared chain: its level. One chain per λ: the chains up to ``asked`` released the current level, the others
    the one before (sequential composition, docs/mathematics.md#choosing-λ-under-the-guarantee).
    """
    if shared:
        return float(levels[level])
    earlier = float(levels[level - 1]) if level else 0.0
    return float(levels[level]) * (asked + 1) + earlier * (K - asked - 1)


def _nothing(
    plan: Plan, eps_v: float, eps_test: float, eps_hypothesis: float, margin: float, why: str
) -> CertifiedOutcome:
    return CertifiedOutcome(
        theta=None,
        lam=math.nan,
        level=None,
        eps_scale=eps_v,
        eps_test=eps_test,
        eps_hypothesis=eps_hypothesis,
        quality=math.nan,
        design_margin=margin,
        stopped=why,
    )
