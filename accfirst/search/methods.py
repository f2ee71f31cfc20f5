"""The three ways to pick a privacy level for an accuracy target.

- ``noise_reduction``: CovNR / OutputNR (Algorithms 3 and 5, Thm 3.2, 3.4): a
  noise-reduction chain of hypotheses tested by InteractiveAboveThreshold (SPEC §5–§6).
- ``doubling``: the baseline of Algorithm 4 (Thm A.2, SPEC §7).
- ``theory_run``: one shot at the ε of the inverted utility theorem (SPEC §4).

Noise reduction and doubling take ``noise="laplace"`` (pure ex-post privacy, the
paper's) or ``noise="gaussian"`` (SPEC §14; derived, consistent with Rogers et al.
2023): the hypotheses then carry Gaussian noise on the variance-matched grid
T_k = 2(Δ₁/ε_k)² of the same ε grid, and the generation part of the ex-post loss is
ℰ_BM(ρ) of the normal-mixture boundary (ρ̃ = ρ_1), an (ε, δ)-ex-post guarantee with
δ recorded in the result. Noise reduction halting at k: ρ = ρ_k (one Brownian path).
Doubling halting at k: ρ = ρ_1 + … + ρ_k — the independent Gaussian levels' privacy
losses add up to a Brownian motion in ρ-time observed at those sums, so the same
time-uniform boundary covers the data-dependent stop. The theory approach inverts a
Laplace utility theorem and refuses Gaussian noise.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.erm.generators import HypothesisGenerator, make_generator
from accfirst.erm.problems import Problem
from accfirst.erm.theory import theory_epsilon
from accfirst.errors import AccFirstError
from accfirst.mechanisms.above_threshold import (
    SearchOutcome,
    ThresholdNoise,
    interactive_above_threshold,
    sequential_test,
)
from accfirst.mechanisms.brownian import DEFAULT_DELTA, brownian_expost_epsilon, variance_matched_rhos
from accfirst.mechanisms.calibration import (
    DEFAULT_CALIBRATION,
    Calibration,
    doubling_test_scale,
    resolve_calibration,
)
from accfirst.mechanisms.noise_reduction import validate_epsilons
from accfirst.result import RunResult, Trace
from accfirst.validation import as_generator, validate_alpha, validate_delta, validate_gamma, validate_positive


@dataclass(frozen=True)
class GenerationCost:
    """The noise levels of a run's hypotheses and what each costs (SPEC §5, §7, §14.5).

    ``levels`` go to the generator (ε_t, or ρ_t variance-matched to ε_t for Gaussian
    noise); ``label`` is each level's own ε (ε_t, or ℰ_BM(ρ_t)), the trace's x axis;
    ``loss`` is the generation part of the ex-post loss when halting at each level;
    ``delta`` the δ of the guarantee (0 for Laplace).
    """

    levels: NDArray[np.float64]
    label: NDArray[np.float64]
    loss: NDArray[np.float64]
    delta: float


def generation_cost(
    generator: HypothesisGenerator, epsilons: NDArray[np.float64], delta: float, independent: bool
) -> GenerationCost:
    """The ``GenerationCost`` of ``generator`` on the ε grid ``epsilons``.

    ``independent`` levels (doubling) add up: Σ_{j≤k} ε_j for Laplace, ℰ_BM(Σ_{j≤k} ρ_j)
    for Gaussian; otherwise (one noise-reduction chain) level k costs ε_k or ℰ_BM(ρ_k).
    """
    if generator.noise.norm == 1:
        return GenerationCost(epsilons, epsilons, np.cumsum(epsilons) if independent else epsilons, 0.0)
    delta = validate_delta(delta)
    rhos = variance_matched_rhos(epsilons, generator.sensitivity, generator.l2_sensitivity)
    own = brownian_expost_epsilon(rhos, delta, rho_ref=rhos[0])
    loss = brownian_expost_epsilon(np.cumsum(rhos), delta, rho_ref=rhos[0]) if independent else own
    return GenerationCost(rhos, own, loss, delta)


def _result(
    *,
    method: str,
    problem: Problem,
    generator: HypothesisGenerator,
    calibration: str,
    alpha: float,
    gamma: float,
    T: int,
    stop_index: int | None,
    theta: NDArray[np.float64],
    eps_test: float,
    eps_hypothesis: float,
    started: float,
    trace: Trace | None,
    delta: float = 0.0,
) -> RunResult:
    return RunResult.released(
        problem,
        theta,
        alpha=alpha,
        started=started,
        method=method,
        generator=generator.name,
        calibration=calibration,
        gamma=gamma,
        T=T,
        stop_index=stop_index,
        eps_test=eps_test,
        eps_hypothesis=eps_hypothesis,
        eps_total=eps_test + eps_hypothesis,
        fallback=stop_index is None,
        trace=trace,
        noise=generator.noise.name,
        delta=delta,
    )


def _outcome_theta(problem: Problem, outcome: SearchOutcome) -> NDArray[np.float64]:
    """The halting hypothesis, or the non-private fallback θ*."""
    return problem.theta_star.copy() if outcome.hypothesis is None else outcome.hypothesis.theta


def noise_reduction(
    problem: Problem,
    alpha: float,
    gamma: float,
    epsilons: ArrayLike,
    generator: str | HypothesisGenerator | None = None,
    rng: np.random.Generator | int | None = None,
    calibration: str | Calibration = DEFAULT_CALIBRATION,
    exact: bool = False,
    noise: str = "laplace",
    delta: float = DEFAULT_DELTA,
) -> RunResult:
    """CovNR / OutputNR: the most private hypothesis on the grid that passes the test.

    Algorithms 3 and 5 (SPEC §5–§6), or their Brownian versions (SPEC §14.5).
    Hypotheses θ_1, θ_2, … come from one noise-reduction chain and are generated only
    as they are tested; the ex-post loss of halting at t is ε_A + ε_t (Laplace) or the
    (ε, δ)-ex-post ε_A + ℰ_BM(ρ_t) (Gaussian), ∞ on fallback (θ* released).

    Parameters
    ----------
    problem : the ERM problem.
    alpha, gamma : target excess risk α > 0 and failure probability γ ∈ (0, 1).
    epsilons : ε_1 < … < ε_T (see ``epsilon_grid``).
    generator : "covariance", "output", a generator, or ``None`` for the paper's pairing.
    rng : a Generator or seed; the chain and the test draw from independent children of it.
    calibration : a preset of ``CALIBRATIONS`` (SPEC §6, §12.3) or a ``Calibration``; the
        default "exact-paper-opt" paid the least total ε on the built-in data.
    exact : solve every tested level (slower; the trace then holds every true excess risk).
        The output is the same either way.
    noise : "laplace" (the paper's) or "gaussian" (Brownian, on the variance-matched grid).
    delta : δ of the Gaussian run's (ε, δ)-ex-post guarantee, in (0, 1); unused for Laplace.
    """
    started = time.perf_counter()
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    eps = validate_epsilons(epsilons)
    gen = make_generator(problem, generator, noise)
    cost = generation_cost(gen, eps, delta, independent=False)
    calib = resolve_calibration(calibration)
    chain_rng, test_rng = as_generator(rng).spawn(2)
    params = calib.calibrate(alpha, gamma, eps.size, problem.query_sensitivity)
    outcome = interactive_above_threshold(gen.chain(cost.levels, chain_rng), cost.label, params, test_rng, exact)
    halted = outcome.index is not None
    return _result(
        method="nr",
        problem=problem,
        generator=gen,
        calibration=calib.name,
        alpha=alpha,
        gamma=gamma,
        T=eps.size,
        stop_index=outcome.index + 1 if halted else None,
        theta=_outcome_theta(problem, outcome),
        eps_test=params.epsilon,
        eps_hypothesis=float(cost.loss[outcome.index]) if halted else math.inf,
        started=started,
        trace=outcome.trace,
        delta=cost.delta,
    )


def noise_reduction_bound(
    problem: Problem,
    alpha: float,
    gamma: float,
    epsilons: ArrayLike,
    generator: str | HypothesisGenerator | None = None,
    calibration: str | Calibration = DEFAULT_CALIBRATION,
    noise: str = "laplace",
    delta: float = DEFAULT_DELTA,
) -> tuple[float, float]:
    """(ℰ̄, δ): the ex-post loss of a ``noise_reduction`` run that halts at its top level (SPEC §15.2).

    ℰ̄ = ε_A + ε_T (Laplace, δ = 0) or ε_A + ℰ_BM(ρ_T) (Gaussian): every outcome but the
    fallback costs at most this. Parameters as for ``noise_reduction``; reads no data.
    """
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    eps = validate_epsilons(epsilons)
    cost = generation_cost(make_generator(problem, generator, noise), eps, delta, independent=False)
    params = resolve_calibration(calibration).calibrate(alpha, gamma, eps.size, problem.query_sensitivity)
    return params.epsilon + float(cost.loss[-1]), cost.delta


# 2^k for the ex-post loss must stay finite in float64.
MAX_DOUBLING_LEVELS = 1000


def doubling_levels(eps_min: float, eps_max: float) -> NDArray[np.float64]:
    """ε_k = ε_min·2^{k−1}, k = 1…K, K = ⌈log₂(ε_max/ε_min)⌉ + 1 (SPEC §7)."""
    low = validate_positive("eps_min", eps_min)
    high = validate_positive("eps_max", eps_max)
    if not low < high:
        raise AccFirstError(f"eps_min must be smaller than eps_max; got eps_min={low:g}, eps_max={high:g}")
    K = math.ceil(math.log2(high) - math.log2(low)) + 1
    if K > MAX_DOUBLING_LEVELS:
        raise AccFirstError(
            f"eps_max/eps_min = 2^{K - 1} needs {K} doubling levels; at most {MAX_DOUBLING_LEVELS} are supported "
            "(narrow the ε range)"
        )
    return low * 2.0 ** np.arange(K)


def doubling(
    problem: Problem,
    alpha: float,
    gamma: float,
    eps_min: float,
    eps_max: float,
    generator: str | HypothesisGenerator | None = None,
    rng: np.random.Generator | int | None = None,
    exact: bool = False,
    calibration: str = "paper",
    noise: str = "laplace",
    delta: float = DEFAULT_DELTA,
) -> RunResult:
    """The doubling method (Algorithm 4, Thm A.2, SPEC §7).

    Level k draws an independent ε_k-DP hypothesis and tests it with the Laplace
    mechanism: halt if −R + Lap(b) ≥ −α/2. Ex-post loss at halt k: k·ε_test + (2^k − 1)·ε_1
    with ε_test = Δ_R/b (Laplace) or the (ε, δ)-ex-post k·ε_test + ℰ_BM(ρ_1 + … + ρ_k)
    (Gaussian, see the module doc); ∞ on fallback (θ* released).

    Parameters are as for ``noise_reduction``; the levels come from ``doubling_levels``.
    ``calibration`` is "paper" (b = α/(2 log(K/γ)), Thm A.2) or "exact" (the K tests
    spend exactly γ, SPEC §12.4); it is recorded in the result.
    """
    started = time.perf_counter()
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    levels = doubling_levels(eps_min, eps_max)
    K = levels.size
    gen = make_generator(problem, generator, noise)
    cost = generation_cost(gen, levels, delta, independent=True)
    sample_rng, test_rng = as_generator(rng).spawn(2)
    scale = doubling_test_scale(alpha, gamma, K, calibration)
    noise = ThresholdNoise(-alpha / 2, scale, K, test_rng)
    hypotheses = (gen.sample(float(level), sample_rng) for level in cost.levels)
    outcome = sequential_test(hypotheses, cost.label, noise, exact)
    eps_test = problem.query_sensitivity / scale
    halted = outcome.index is not None
    steps = outcome.index + 1 if halted else K
    return _result(
        method="doubling",
        problem=problem,
        generator=gen,
        calibration=calibration,
        alpha=alpha,
        gamma=gamma,
        T=K,
        stop_index=steps if halted else None,
        theta=_outcome_theta(problem, outcome),
        eps_test=steps * eps_test,
        eps_hypothesis=float(cost.loss[steps - 1]) if halted else math.inf,
        started=started,
        trace=outcome.trace,
        delta=cost.delta,
    )


def doubling_bound(
    problem: Problem,
    alpha: float,
    gamma: float,
    eps_min: float,
    eps_max: float,
    generator: str | HypothesisGenerator | None = None,
    calibration: str = "paper",
    noise: str = "laplace",
    delta: float = DEFAULT_DELTA,
) -> tuple[float, float]:
    """(ℰ̄, δ): the ex-post loss of a ``doubling`` run that halts at its last level K (SPEC §7, §15.2).

    ℰ̄ = K·ε_test + (2^K − 1)·ε_1 (Laplace, δ = 0) or K·ε_test + ℰ_BM(ρ_1 + … + ρ_K)
    (Gaussian). Parameters as for ``doubling``; reads no data.
    """
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    levels = doubling_levels(eps_min, eps_max)
    cost = generation_cost(make_generator(problem, generator, noise), levels, delta, independent=True)
    eps_test = problem.query_sensitivity / doubling_test_scale(alpha, gamma, levels.size, calibration)
    return levels.size * eps_test + float(cost.loss[-1]), cost.delta


THEORY_NEEDS_LAPLACE = (
    "the theory approach inverts a Laplace utility theorem and has no Gaussian version; "
    "with noise='gaussian' use noise reduction ('nr') or doubling"
)


def theory_run(
    problem: Problem,
    alpha: float,
    gamma: float = 0.1,
    generator: str | HypothesisGenerator | None = None,
    rng: np.random.Generator | int | None = None,
) -> RunResult:
    """One hypothesis at ε = E from ``theory_epsilon`` (SPEC §4); no test, no fallback.

    Promises only expected excess risk α; ``gamma`` is recorded for comparison
    with the other methods and plays no part.
    """
    started = time.perf_counter()
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    gen = make_generator(problem, generator)
    if gen.noise.norm != 1:
        raise AccFirstError(THEORY_NEEDS_LAPLACE)
    epsilon = theory_epsilon(problem, alpha, gen)
    hypothesis = gen.sample(epsilon, as_generator(rng))
    return _result(
        method="theory",
        problem=problem,
        generator=gen,
        calibration="none",
        alpha=alpha,
        gamma=gamma,
        T=1,
        stop_index=1,
        theta=hypothesis.theta,
        eps_test=0.0,
        eps_hypothesis=epsilon,
        started=started,
        trace=None,
    )
