"""A target in the user's units, certified by one private test, with λ chosen from a public grid
(docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee,
docs/mathematics.md#refusals-that-spend-nothing).

The user names R² ≥ r (ridge) or accuracy ≥ a (logistic). A ``QualityQuery`` turns that into a shortfall whose
sensitivity depends on neither θ nor λ, so one InteractiveAboveThreshold, calibrated for every query the search may
ask, certifies the models of every λ of the grid (for R², each at a few public multiples). Covariance perturbation
releases statistics that serve every λ (one noise-reduction chain, post-processed into one model per λ); output
perturbation releases θ*_λ, one chain per λ, advanced in rounds and all charged. Before reading the data the search checks that a perfect model could pass
the test within the ceiling, and refuses otherwise, spending nothing.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accfirst.erm.generators import CovariancePerturbation, HypothesisGenerator, generator_class, make_generator
from accfirst.erm.problem import Problem
from accfirst.erm.quality import (
    Accuracy,
    QualityQuery,
    QualityTarget,
    VarianceExplained,
    VarianceExplainedQuery,
    check_task,
)
from accfirst.erm.shape import ProblemShape
from accfirst.errors import AccFirstError
from accfirst.mechanisms.above_threshold import ThresholdNoise
from accfirst.mechanisms.calibration import AboveThresholdCalibration, resolve_calibration
from accfirst.mechanisms.noise_reduction import LAPLACE
from accfirst.methods.nr import NoiseReduction
from accfirst.methods.options import SearchOptions
from accfirst.result import RunResult
from accfirst.validation import checked, validate_gamma

#: The method that certifies a target in R² or accuracy: noise reduction, its chain shared by the λ of a grid or one
#: per λ.
NOISE_REDUCTION = NoiseReduction.key
#: By how much a model must beat the target for the test to pass it at its threshold: this share of r(1 − r) times the
#: targets' variance (R²) or of 1 − a (accuracy) (docs/mathematics.md#a-target-in-the-units-people-read).
PASS_SHARE = {VarianceExplained.unit: 0.6, Accuracy.unit: 0.15}
#: The grid of λ: geometric, this ratio apart, from the curvature the rows allow down.
LAMBDA_RATIO = 2.5
#: Values of λ in the default grid: with one release for every λ they cost only the test's constant; with one
#: release per λ each adds its chain.
SHARED_GRID_SIZE, SEPARATE_GRID_SIZE = 6, 3
#: Each λ's model is also asked at these multiples (R², on the grid's own ratio): a strongly regularised model of a noisy
#: release keeps its direction and loses its length, which a multiple restores
#: (docs/mathematics.md#choosing-λ-under-the-guarantee). The sign of θᵀx does not move with a positive multiple, so an
#: accuracy target asks θ alone.
R2_SCALES: tuple[float, ...] = tuple(LAMBDA_RATIO**j for j in range(4))
#: The generation levels span this ratio below the top the ceiling leaves them.
LEVEL_SPAN = 1e3
#: The variance release's ε is designed so that its noise scale, w²/(nε_v), is a twentieth of a variance of w²/10
#: (the private preparation's clipped targets show about that), and it never takes more than a twentieth of the ceiling.
VARIANCE_DESIGN, VARIANCE_CEILING_SHARE = 200.0, 0.05
#: A released variance below this share of w² leaves nothing to explain.
VARIANCE_FLOOR_SHARE = 1e-4


@dataclass(frozen=True)
class Plan:
    """What a certified search fixes before the data are read, from public numbers only.

    ``scales`` are the multiples of each λ's model the test asks (one chain's models, λ by λ and multiple by multiple).
    ``refusal`` is a sentence when no data of this shape could meet the target within the ceiling: the search then
    reads nothing and spends nothing.
    """

    lambdas: tuple[float, ...]
    scales: tuple[float, ...]
    shared: bool
    T: int
    ceiling: float
    calibration: str
    generator: str | None
    variance_epsilon: float
    best_test_epsilon: float
    refusal: str | None


@dataclass(frozen=True)
class CertifiedOutcome:
    """What a certified search released and what each part cost.

    ``theta`` is ``None`` when nothing was released (a refusal, a variance too small to certify, or a test that never
    passed; ``stopped`` says which); ``level`` is the 1-based level of the released model, ``lam`` its λ and ``scale``
    the multiple of that λ's hypothesis it is.
    ``quality`` is the released model's in-sample R² or accuracy, exact (evaluation only); ``design_margin`` the
    test's level A.
    """

    theta: NDArray[np.float64] | None
    lam: float
    scale: float
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


def default_lambdas(kind: type[Problem], rho: float, shared: bool) -> tuple[float, ...]:
    """The public grid of λ: geometric with ratio ``LAMBDA_RATIO`` from (the loss's curvature)·ρ²/4 down
    (docs/mathematics.md#choosing-λ-under-the-guarantee).

    The data term's curvature has trace at most (the loss's curvature)·ρ² on rows of Euclidean norm ≤ ρ, so a larger λ
    shrinks every model to almost nothing. Reads the problem's class and ρ only.
    """
    top = kind.loss_curvature * rho * rho / 4
    size = SHARED_GRID_SIZE if shared else SEPARATE_GRID_SIZE
    return tuple(top / LAMBDA_RATIO**i for i in range(size))


def variance_epsilon(n: int, ceiling: float) -> float:
    """ε_v of the targets' variance: ``VARIANCE_DESIGN``/n, at most ``VARIANCE_CEILING_SHARE`` of the ceiling."""
    return min(VARIANCE_DESIGN / n, VARIANCE_CEILING_SHARE * ceiling)


def _pass_margin(target: QualityTarget | QualityQuery, variance: float) -> float:
    """m: how far below 0 a model's shortfall must be for the test to pass it at its threshold."""
    if target.unit == VarianceExplained.unit:
        return PASS_SHARE[target.unit] * target.goal * (1.0 - target.goal) * variance
    return PASS_SHARE[target.unit] * (1.0 - target.goal)


def _calibrated(
    sensitivity: float, margin: float, gamma: float, queries: int, calibration: str
) -> tuple[float, AboveThresholdCalibration]:
    """The test at level A = m/(1 − s), s·A its threshold, so that a model with shortfall −m sits on it
    (docs/mathematics.md#a-target-in-the-units-people-read). Every preset scales with the level, so s is read off the
    preset at level 1."""
    calib = resolve_calibration(calibration)
    level = margin / (1.0 + calib.calibrate(1.0, gamma, queries, 1.0).threshold)
    return level, calib.calibrate(level, gamma, queries, sensitivity)


@checked(gamma=validate_gamma)
def plan_search(
    shape: ProblemShape,
    target: QualityTarget,
    gamma: float,
    options: SearchOptions,
    rho: float = 1.0,
    target_range: tuple[float, float] = (-1.0, 1.0),
) -> Plan:
    """Fix the grid, the levels' top and the variance's ε from public numbers, and refuse what no data could meet.

    Reads the problem's class, n, ρ, the targets' public range, the target, γ and the options (their grid of λ, or the default one from ρ; T;
    the calibration; the ceiling); an R² target asks each λ's model at the multiples ``R2_SCALES``. The feasibility
    check asks the test's price for a perfect model on targets of the
    largest variance the range allows, w²/4 (R²), or with no error (accuracy), under the run's own rule for the
    margin (docs/mathematics.md#refusals-that-spend-nothing).
    """
    check_task(target, shape.name)
    if options.noise != LAPLACE.name:
        raise AccFirstError(f"a target in {target.unit} is certified with Laplace noise; got noise={options.noise!r}")
    shared = generator_class(shape, options.generator) is CovariancePerturbation
    grid = default_lambdas(shape.kind, rho, shared) if options.lambdas is None else options.lambdas
    ceiling = options.ceiling
    width = target_range[1] - target_range[0]
    if isinstance(target, VarianceExplained):
        eps_v, scales = variance_epsilon(shape.n, ceiling), R2_SCALES
        best = _pass_margin(target, width**2 / 4)
    else:
        eps_v, scales = 0.0, (1.0,)
        best = _pass_margin(target, 0.0)
    sensitivity = target.sensitivity(shape.n, width)
    queries = options.T * len(grid) * len(scales)
    best_test = _calibrated(sensitivity, best, gamma, queries, options.calibration)[1].epsilon
    refusal = None
    if eps_v + best_test >= ceiling:
        # The test's ε is c·Δ/A with Δ ∝ 1/n, and ε_v falls with n: the floor falls with n, so bisect for the rows.
        def floor(rows: int) -> float:
            variance_part = variance_epsilon(rows, ceiling) if isinstance(target, VarianceExplained) else 0.0
            return variance_part + best_test * shape.n / rows

        low, high = shape.n, 2 * shape.n
        while floor(high) >= ceiling:
            low, high = high, 2 * high
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if floor(middle) >= ceiling else (low, middle)
        refusal = (
            f"no table of {shape.n:,} rows can certify {target.unit} ≥ {target.goal:g} within ε = {ceiling:g}: even "
            f"a perfect model would need ε ≈ {eps_v + best_test:.3g} for the private check alone, and this target "
            f"needs at least {high:,} rows at this ceiling. Nothing was read or spent. Without a certificate, the "
            f"theory approach releases one model at an ε it sets in advance from an excess risk α (its {target.unit} is not promised)"
        )
    return Plan(
        grid, scales, shared, options.T, ceiling, options.calibration, options.generator, eps_v, best_test, refusal
    )


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
    problems: Sequence[Problem], query: QualityQuery, gamma: float, plan: Plan, rng: np.random.Generator
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
    queries = plan.T * len(problems) * len(plan.scales)
    margin, params = _calibrated(query.sensitivity, _pass_margin(query, variance), gamma, queries, plan.calibration)
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
    levels = _levels(room if plan.shared else room / len(problems), plan.T)
    generators = [make_generator(problem, plan.generator) for problem in problems]
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
    """Ask every model in order, round by round, λ by λ and multiple by multiple; halt at the first that passes."""
    K, scales = len(problems), np.asarray(plan.scales)
    asked = K * scales.size
    noise = ThresholdNoise(
        params.threshold, params.query_scale, plan.T * asked, rng, params.threshold_scale, params.clip
    )
    for level, thetas in enumerate(rounds):
        batch = (scales[None, :, None] * np.asarray(thetas)[:, None, :]).reshape(asked, -1)
        shortfalls = query.shortfall(batch)
        for index in range(asked):
            if noise.passes(level * asked + index, float(shortfalls[index]) + margin):
                chain, multiple = divmod(index, scales.size)
                spent = _generation_spent(levels, level, chain, K, plan.shared)
                return CertifiedOutcome(
                    theta=batch[index],
                    lam=problems[chain].lam,
                    scale=float(scales[multiple]),
                    level=level + 1,
                    eps_scale=eps_v,
                    eps_test=params.epsilon,
                    eps_hypothesis=float(spent),
                    quality=float(query.quality(batch[index : index + 1])[0]),
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
        scale=math.nan,
        level=None,
        eps_scale=eps_v,
        eps_test=eps_test,
        eps_hypothesis=eps_hypothesis,
        quality=math.nan,
        design_margin=margin,
        stopped=why,
    )


def certified_run(
    problem: Problem, target: QualityTarget, gamma: float, rng: np.random.Generator, options: SearchOptions
) -> RunResult:
    """One run of noise reduction toward ``target``, λ chosen from the options' grid, as a ``RunResult``
    (docs/mathematics.md#a-target-in-the-units-people-read, docs/mathematics.md#choosing-λ-under-the-guarantee).

    A plan that refuses (``plan_search``) reads nothing and records a run that spent nothing (``refused``). The record's
    ``eps_scale`` is the targets' variance (R² only); ``quality``, ``success``, ``excess_risk`` and ``r0`` are
    evaluation only. The preparation is added by the caller (``accfirst.methods.pipeline.search``).
    """
    started = time.perf_counter()
    plan = plan_search(problem.shape, target, gamma, options, problem.row_bound, problem.target_range)
    common = {
        "method": NOISE_REDUCTION,
        "generator": generator_class(problem.shape, options.generator).name,
        "calibration": options.calibration,
        "gamma": gamma,
        "T": options.T,
        "target": target.key,
        "goal": target.goal,
    }
    if plan.refusal is not None:
        return _no_model(
            problem,
            started,
            stop_index=None,
            eps_test=0.0,
            eps_hypothesis=0.0,
            eps_total=0.0,
            fallback=False,
            stopped=plan.refusal,
            refused=True,
            **common,
        )
    problems = [problem.at_lambda(lam) for lam in plan.lambdas]
    outcome = certified_search(problems, target.query(problem), gamma, plan, rng)
    charged = {
        "eps_scale": outcome.eps_scale,
        "eps_test": outcome.eps_test,
        "eps_hypothesis": outcome.eps_hypothesis,
        "eps_total": outcome.eps_total,
        "stop_index": outcome.level,
        **common,
    }
    if outcome.theta is None:
        return _no_model(problem, started, fallback=True, stopped=outcome.stopped or "", **charged)
    chosen = problems[plan.lambdas.index(outcome.lam)]
    record = RunResult.released(
        chosen, outcome.theta, alpha=math.nan, started=started, fallback=False, quality=outcome.quality, **charged
    )
    return dataclasses.replace(record, success=outcome.quality >= target.goal)


def _no_model(problem: Problem, started: float, **fields: Any) -> RunResult:
    """The record of a run toward a target that released nothing: no λ was chosen (NaN), no α was asked."""
    return dataclasses.replace(RunResult.nothing(problem, alpha=math.nan, started=started, **fields), lam=math.nan)


def refusal_before_reading(
    kind: type[Problem],
    n: int,
    target: QualityTarget,
    gamma: float,
    options: SearchOptions,
    target_range: tuple[float, float] = (-1.0, 1.0),
) -> str | None:
    """The sentence a run toward ``target`` on ``n`` training rows would refuse with, or ``None``, known before any
    preparation: the refusal reads only the problem's class, n, the targets' public range, γ and the options
    (docs/mathematics.md#refusals-that-spend-nothing). Entry points ask it before they prepare a table, so that a
    refused target spends nothing at all."""
    shape = ProblemShape(kind, n, 1, 1.0)
    return plan_search(shape, target, gamma, options, target_range=target_range).refusal
