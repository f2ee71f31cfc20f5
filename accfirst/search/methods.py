"""The three ways to pick a privacy level for an accuracy target.

- ``noise_reduction``: CovNR / OutputNR (Algorithms 3 and 5, Thm 3.2, 3.4): a
  noise-reduction chain of hypotheses tested by InteractiveAboveThreshold (SPEC §5–§6).
- ``doubling``: the baseline of Algorithm 4 (Thm A.2, SPEC §7).
- ``theory_run``: one shot at the ε of the inverted utility theorem (SPEC §4).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accfirst.mechanisms.above_threshold import SearchOutcome, interactive_above_threshold, sequential_test
from accfirst.mechanisms.calibration import (
    DEFAULT_CALIBRATION,
    Calibration,
    doubling_test_scale,
    resolve_calibration,
)
from accfirst.errors import AccFirstError
from accfirst.erm.generators import HypothesisGenerator, make_generator
from accfirst.mechanisms.noise_reduction import validate_epsilons
from accfirst.erm.problems import Problem
from accfirst.result import RunResult, Trace
from accfirst.erm.theory import theory_epsilon
from accfirst.validation import as_generator, validate_alpha, validate_gamma, validate_positive


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
) -> RunResult:
    risk = float(problem.excess_risk(theta))
    return RunResult(
        method=method,
        generator=generator.name,
        calibration=calibration,
        alpha=alpha,
        gamma=gamma,
        lam=problem.lam,
        n=problem.n,
        p=problem.p,
        T=T,
        stop_index=stop_index,
        eps_test=eps_test,
        eps_hypothesis=eps_hypothesis,
        eps_total=eps_test + eps_hypothesis,
        excess_risk=risk,
        success=risk <= alpha,
        fallback=stop_index is None,
        theta=theta,
        theta_norm=float(np.linalg.norm(theta)),
        norm_bound=problem.norm_bound,
        seconds=time.perf_counter() - started,
        trace=trace,
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
) -> RunResult:
    """CovNR / OutputNR: the most private hypothesis on the grid that passes the test.

    Algorithms 3 and 5 (SPEC §5–§6). Hypotheses θ_1, θ_2, … come from one
    noise-reduction chain and are generated only as they are tested; the ex-post
    loss of halting at t is ε_A + ε_t, ∞ on fallback (θ* released).

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
    """
    started = time.perf_counter()
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    eps = validate_epsilons(epsilons)
    gen = make_generator(problem, generator)
    calib = resolve_calibration(calibration)
    chain_rng, test_rng = as_generator(rng).spawn(2)
    params = calib.calibrate(alpha, gamma, eps.size, problem.query_sensitivity)
    outcome = interactive_above_threshold(gen.chain(eps, chain_rng), eps, params, test_rng, exact)
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
        eps_hypothesis=float(eps[outcome.index]) if halted else math.inf,
        started=started,
        trace=outcome.trace,
    )


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
) -> RunResult:
    """The doubling method (Algorithm 4, Thm A.2, SPEC §7).

    Level k draws an independent ε_k-DP hypothesis and tests it with the Laplace
    mechanism: halt if −R + Lap(b) ≥ −α/2. Ex-post loss at halt k:
    k·ε_test + (2^k − 1)·ε_1 with ε_test = Δ_R/b; ∞ on fallback (θ* released).

    Parameters are as for ``noise_reduction``; the levels come from ``doubling_levels``.
    ``calibration`` is "paper" (b = α/(2 log(K/γ)), Thm A.2) or "exact" (the K tests
    spend exactly γ, SPEC §12.4); it is recorded in the result.
    """
    started = time.perf_counter()
    alpha, gamma = validate_alpha(alpha), validate_gamma(gamma)
    levels = doubling_levels(eps_min, eps_max)
    K = levels.size
    gen = make_generator(problem, generator)
    sample_rng, test_rng = as_generator(rng).spawn(2)
    scale = doubling_test_scale(alpha, gamma, K, calibration)
    query_noise = test_rng.laplace(0.0, scale, size=K)
    hypotheses = (gen.sample(float(e), sample_rng) for e in levels)
    outcome = sequential_test(hypotheses, levels, query_noise, np.full(K, -alpha / 2), exact)
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
        eps_hypothesis=(2.0**steps - 1) * float(levels[0]) if halted else math.inf,
        started=started,
        trace=outcome.trace,
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
